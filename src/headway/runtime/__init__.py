"""The node: wires the stages with bounded queues, owns tasks and parser processes,
shutdown, progress and pressure metrics, and what it keeps and publishes for the console
(``book``, ``snapshot``; the console package above reads it)."""
