"""``headway bench`` as a small smoke run: it crawls, and counts the whole process tree."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

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
    from headway.bench.harness import BenchCase, BenchResult

    case = BenchCase("http", 1.0, 1, 2, 3, 3, 1, 1, 10.0)
    progress = ((0.5, 10), (1.0, 50), (2.0, 150), (3.0, 250))
    r = BenchResult(case, pages=300, crawl_cpu=4.0, progress=progress)
    assert r.steady_ms_per_page == 10.0  # (3.0 - 1.0) s over 200 pages
    assert r.ms_per_page == 4.0 / 300 * 1000  # all-in: start and stop included
    assert BenchResult(case, progress=progress[:2]).steady_ms_per_page is None


@pytest.mark.slow
def test_server_is_warmed_with_every_page_a_crawl_fetches(tmp_path: Path) -> None:
    """Before any measured run the bench asks the server for every page a crawl of it
    fetches once, so the first run (a "before" run) does not pay for the server
    building its pages on the shared cores."""
    from headway.bench.harness import BenchCase, _Server

    case = BenchCase("http", 0.0, 1, 2, 3, 3, 1, 1, 10.0)
    server = _Server(case, tmp_path / "pki")
    try:
        assert server.warmed == 2 * 4  # home page + 3 pages on each host
        assert server.connections()[0] >= 1  # it answered over HTTP
    finally:
        server.stop()
