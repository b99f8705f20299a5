"""``headway bench`` as a small smoke run: it crawls, and counts the whole process tree."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest


@pytest.mark.slow
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


def test_steady_cpu_per_page_leaves_out_the_first_report_and_the_stop() -> None:
    from headway.runtime.bench import BenchCase, BenchResult

    case = BenchCase("http", 1.0, 1, 2, 3, 3, 1, 1, 10.0)
    progress = ((0.5, 10), (1.0, 50), (2.0, 150), (3.0, 250))
    r = BenchResult(case, pages=300, crawl_cpu=4.0, progress=progress)
    assert r.steady_ms_per_page == 10.0  # (3.0 - 1.0) s over 200 pages
    assert r.ms_per_page == 4.0 / 300 * 1000  # all-in: start and stop included
    assert BenchResult(case, progress=progress[:2]).steady_ms_per_page is None
