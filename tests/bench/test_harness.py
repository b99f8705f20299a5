"""``headway bench`` as a small smoke run: it crawls, and counts the whole process tree."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.slow
@pytest.mark.serial  # a benchmark: CPU figures of the whole process tree
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


@pytest.mark.slow
@pytest.mark.serial  # a benchmark: CPU figures of the whole process tree
def test_bench_over_https_with_a_new_connection_per_fetch_counts_handshakes() -> None:
    """The real page mix over HTTPS, the server closing connections idle 0.2 s at a 1 s
    gap: every request opens a new connection; with resumption one full handshake per
    host, without it every handshake full (the server's counts, as the bench prints)."""
    argv = [sys.executable, "-m", "headway.cli", "bench", "--hosts", "2", "--pages", "3"]
    argv += ["--scheme", "https", "--gaps", "1", "--seconds", "30", "--parsers", "1"]
    argv += ["--pages-mix", "real", "--server-idle", "0.2", "--tls-resumption", "on", "off"]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=240, check=True).stdout
    counts = re.findall(
        r"^https gap 1s 1x real idle 0.2s( no-resume)?: (\d+) connections for (\d+) requests: "
        r"TLS handshakes (\d+) full, (\d+) resumed",
        out,
        re.M,
    )
    assert len(counts) == 2, out
    for refused, conns, requests, full, resumed in counts:
        assert int(conns) == int(requests) > 2 * 4, out  # robots.txt and 4 pages a host
        if refused:
            assert (int(full), int(resumed)) == (int(conns), 0), out
        else:
            assert (int(full), int(resumed)) == (2, int(conns) - 2), out
    assert "no resumption / resumption" in out
