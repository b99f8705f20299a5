"""``headway bench``: crawl the simulated web (served by a separate process, so CPU
figures are the crawler's own) with politeness gaps off, and print speed figures."""

from __future__ import annotations

import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from headway.runtime.node import CrawlSummary, Node
from headway.settings import Settings, build_settings


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_port(port: int, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"simulated web did not start on port {port}")


def run_bench(*, hosts: int, pages: int, links: int, parsers: int, out: Path | None) -> int:
    port = free_port()
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "headway.cli",
            "simweb",
            "--hosts",
            str(hosts),
            "--pages",
            str(pages),
            "--links",
            str(links),
            "--port",
            str(port),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_port(port)
        with tempfile.TemporaryDirectory() as tmp:
            crawl_dir = out or Path(tmp) / "bench"
            summary = _crawl(crawl_dir, hosts, port, parsers)
    finally:
        server.terminate()
        server.wait(10)
    _report(summary, hosts, pages, links, parsers)
    return 0


def bench_settings(crawl_dir: Path, parsers: int) -> Settings:
    """Speed-test settings: the simulated web's names to loopback, politeness gaps off,
    up to 8 requests per host. Never for real sites."""
    return build_settings(
        {
            "user_agent": "headway-bench/0.1 (+https://example.org/bench)",
            "out": str(crawl_dir),
            "resolve": ["*.sim=127.0.0.1"],
            "allow_loopback": True,
            "delay": 0.0,
            "max_per_host": 8,
            "parsers": parsers,
            "quiet": True,
            "concurrency": 64,
            "metrics_interval": 5.0,
        }
    )


def _crawl(crawl_dir: Path, hosts: int, port: int, parsers: int) -> CrawlSummary:
    import uvloop

    settings = bench_settings(crawl_dir, parsers)
    seeds = [f"http://site{i}.sim:{port}/" for i in range(hosts)]
    node = Node(settings, seeds)
    result: CrawlSummary = uvloop.run(node.run())
    return result


def _report(s: CrawlSummary, hosts: int, pages: int, links: int, parsers: int) -> None:
    per_page = s.cpu_seconds / s.fetches * 1000 if s.fetches else 0.0
    print(
        f"simulated web: {hosts} hosts x {pages} pages, {links} links a page; "
        f"{parsers} parser processes"
    )
    print(f"pages fetched      {s.fetches}")
    print(f"requests           {s.requests}")
    print(f"wall seconds       {s.seconds:.2f}")
    print(f"pages/s            {s.fetches / s.seconds:.1f}")
    print(f"CPU seconds        {s.cpu_seconds:.2f} (crawler + parser processes)")
    print(f"CPU ms per page    {per_page:.2f}")
    print(f"peak RSS (main)    {s.peak_rss_mib:.0f} MiB")
    print(f"outcomes           {dict(sorted(s.outcomes.items()))}")
