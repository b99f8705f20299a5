"""Measuring the crawler, not running it: ``headway bench`` (``harness``) and the
process-tree CPU and memory counter it and the benchmarks stand on (``proctree``).
Nothing in the node's runtime imports this package."""
