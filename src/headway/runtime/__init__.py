"""The node: wires the stages with bounded queues, owns tasks and parser processes,
shutdown, progress and pressure metrics."""
