"""The simulated web used by tests and benchmarks: many virtual hosts on one loopback
server, with faults, and a log of every request."""
