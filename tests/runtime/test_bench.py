"""``headway bench`` as a small smoke run: it crawls, and counts the whole process tree."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow


def test_bench_smoke_counts_every_process() -> None:
    argv = [sys.executable, "-m", "headway.cli", "bench", "--hosts", "2", "--pages", "3"]
    argv += ["--links", "3", "--gaps", "0", "--seconds", "20", "--parsers", "1"]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=True).stdout
    assert "whole process tree" in out
    row = re.search(r"^http gap 0s 1x\s+(\d+)\s", out, re.M)
    assert row is not None, out
    assert int(row.group(1)) == 2 * 4  # home page + 3 pages on each host
    procs = re.search(r"http gap 0s 1x: (\d+) processes", out)
    assert procs is not None, out
    assert int(procs.group(1)) >= 3, out  # main, forkserver, parser (at least)
    assert "forkserver" in out and "parser" in out
