"""Loaded at start-up by a crawl run with this folder first on ``PYTHONPATH``: the
node's parse pool hands pages over through one pipe per parser process
(``benchmarks/parse_prototype.py``). A benchmark's A/B switch, never part of headway."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import parse_prototype

parse_prototype.install_pipe_pool()
