"""``headway bench``: crawl the simulated web and measure what a page costs.

Each *case* is one crawl of a fresh crawl directory: a scheme (``http`` or ``https``), a
politeness gap (0: no gap, 8 requests per host; else the gap in seconds, one request per
host, as a real crawl runs) and a size (``Nx``: N times the hosts, same pages per host).
Runs with a gap, and every run, stop after ``seconds``.

How CPU is counted: the crawler runs as a process of its own, under a ``TreeRun``
(``bench/proctree.py``) that counts the CPU of every process it leads to (the main
process and its threads, the forkserver and every parser process, even ones orphaned)
from ``/proc`` and ``wait4``; the simulated web runs in another process and is not
counted. *Crawl CPU* is the tree's CPU from the moment start-up is over (the node calls
``on_started``) until the last process exits, shutdown included; *start-up CPU* (imports,
opening the crawl directory, starting parser processes) is reported apart. *Steady* CPU
per page leaves out the first second of the crawl and the stop: the crawler reports its
page count once a second, the bench samples the tree's CPU at each report, and steady
ms/page is the CPU between the second report and the last one over the pages fetched
between them (a short run at the gap fetches fewer pages, over which the fixed cost of
stopping would otherwise weigh more).

Other figures: peak resident memory of every process of the tree (``VmHWM``); the
frontier thread's CPU per URL the frontier holds (seen); connections the server accepted
(over HTTPS each one is a TLS handshake: a full one, or an abbreviated one when it
resumed a session; the server counts both).

Variants of the simulated web (a server of its own each): the page mix (``fixed``: every
page ``page_kb`` of text and ``links`` links; ``real``: sizes and links drawn, see
``testing/pagemix.py``), the server's idle time-out (``idle``: it closes a connection
idle that long, so a crawler coming back later opens a new one; 0: aiohttp's default)
and, over HTTPS, whether the server accepts TLS session resumption.

The lines printed of the results are made in ``bench/report.py``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from headway.bench.proctree import ProcessPeak, TreeRun
from headway.runtime.stats import NodeStats, from_json
from headway.settings import Settings, build_settings

USER_AGENT = "headway-bench/0.1 (+https://example.org/bench)"
STATS_HOST = "stats.simweb.invalid"  # see testing/simweb.py
#: Host name suffix of the simulated web in ``headway bench`` (two labels: a TLS wildcard
#: certificate can cover ``*.sim.test``).
SUFFIX = "sim.test"
#: Most pages the bench asks the server for before the measured runs (the server keeps
#: about 4,000 built pages).
WARM_MAX = 4_000


def server_counts(
    scheme: str, port: int, context: ssl.SSLContext | None = None
) -> tuple[int, int, int]:
    """A simulated web's connections accepted so far on ``port``, how many of them
    resumed a TLS session and how many made a full TLS handshake (read from the server
    itself, through ``STATS_HOST``; that reading's own connection included)."""
    req = urllib.request.Request(f"{scheme}://127.0.0.1:{port}/", headers={"Host": STATS_HOST})
    with urllib.request.urlopen(req, timeout=10, context=context) as resp:
        stats = json.loads(resp.read())
    return int(stats["connections"]), int(stats.get("resumed", 0)), int(stats.get("full", 0))


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


def bench_settings(
    crawl_dir: Path,
    parsers: int,
    *,
    gap: float = 0.0,
    ca_file: Path | None = None,
    max_duration: float = 0.0,
    suffix: str = "sim",
    http_client: str = "aiohttp",
    text: str = "off",
) -> Settings:
    """Speed-test settings: the simulated web's names to loopback; with ``gap`` 0 no
    politeness gap and up to 8 requests per host, else that gap and one request per
    host (the defaults of a real crawl). Never for real sites."""
    values: dict[str, Any] = {
        "user_agent": USER_AGENT,
        "out": str(crawl_dir),
        "resolve": [f"*.{suffix}=127.0.0.1"],
        "allow_loopback": True,
        "delay": gap,
        "max_per_host": 8 if gap == 0 else 1,
        "parsers": parsers,
        "quiet": True,
        "concurrency": 64,
        "metrics_interval": 5.0,
        "max_duration": max_duration,
        "http_client": http_client,
    }
    if text != "off":
        values.update(text=True, text_mode=text)
    if ca_file is not None:
        values["ca_file"] = str(ca_file)
    return build_settings(values)


@dataclass(frozen=True, slots=True)
class BenchCase:
    scheme: str  # http | https
    gap: float  # seconds between requests to one host (0: none, 8 per host)
    size: int  # hosts multiplier
    hosts: int
    pages: int  # per host
    links: int
    page_kb: int  # pages padded with text to this size
    parsers: int  # 0: the crawler's default
    seconds: float  # the run stops after this long
    src: str | None = None  # another source tree to run the crawler from (A/B runs)
    mix: str = "fixed"  # page mix: fixed | real (testing/pagemix.py)
    idle: float = 0.0  # the server closes connections idle this long (0: aiohttp's default)
    resumption: bool = True  # over HTTPS: the server accepts TLS session resumption
    round: int = 0  # which repetition of the case (``--repeat``): not part of its name
    client: str = "aiohttp"  # the crawler's HTTP client (``fetch.http_client``)
    text: str = "off"  # the text output's mode (``--text``), off: none

    @property
    def name(self) -> str:
        variant = "" if self.mix == "fixed" else f" {self.mix}"
        variant += f" idle {self.idle:g}s" if self.idle else ""
        variant += "" if self.resumption else " no-resume"
        variant += "" if self.client == "aiohttp" else f" {self.client}"
        variant += "" if self.text == "off" else f" text {self.text}"
        base = f"{self.scheme} gap {self.gap:g}s {self.size}x{variant}"
        return base + (" before" if self.src else "")

    @property
    def server_key(self) -> tuple[str, int, str, float, bool]:
        """Cases with the same key share a server."""
        return (self.scheme, self.size, self.mix, self.idle, self.resumption)

    @property
    def web(self) -> tuple[str, float, bool]:
        """The variant of the simulated web (page mix, idle time-out, resumption)."""
        return (self.mix, self.idle, self.resumption)


@dataclass(frozen=True, slots=True)
class BenchResult:
    case: BenchCase
    pages: int = 0
    requests: int = 0
    crawl_seconds: float = 0.0
    startup_cpu: float = 0.0
    crawl_cpu: float = 0.0
    processes: int = 0
    orphans: int = 0
    peaks: tuple[ProcessPeak, ...] = ()
    frontier_cpu: float = 0.0
    frontier_urls: int = 0
    connections: int = 0
    resumed: int = 0  # connections whose TLS handshake resumed a session
    full: int = 0  # connections whose TLS handshake was a full one
    stopped_by: str = ""
    outcomes: dict[str, int] = field(default_factory=dict)
    error: str | None = None
    #: (tree CPU seconds, pages fetched) at each of the crawler's progress reports
    progress: tuple[tuple[float, int], ...] = ()

    @property
    def ms_per_page(self) -> float:
        return self.crawl_cpu / self.pages * 1000 if self.pages else 0.0

    @property
    def steady_ms_per_page(self) -> float | None:
        """CPU per page between the second progress report and the last one (None when
        the run was too short to have both, or fetched nothing in between)."""
        if len(self.progress) < 3:
            return None
        (cpu0, pages0), (cpu1, pages1) = self.progress[1], self.progress[-1]
        return (cpu1 - cpu0) / (pages1 - pages0) * 1000 if pages1 > pages0 else None

    @property
    def frontier_us_per_url(self) -> float:
        return self.frontier_cpu / self.frontier_urls * 1e6 if self.frontier_urls else 0.0


def parse_size(text: str) -> int:
    """``"10x"`` or ``"10"`` -> 10."""
    value = int(text.lower().removesuffix("x"))
    if not 1 <= value <= 100:
        raise ValueError(f"size {text!r}: expected 1x .. 100x")
    return value


class _Server:
    """A ``headway simweb`` process (not counted) and its connection counter."""

    def __init__(self, case: BenchCase, pki_dir: Path | None) -> None:
        self.port = free_port()
        argv = [sys.executable, "-m", "headway.cli", "simweb", "--hosts", str(case.hosts)]
        argv += ["--pages", str(case.pages), "--links", str(case.links), "--port", str(self.port)]
        argv += ["--suffix", SUFFIX, "--page-kb", str(case.page_kb)]
        argv += ["--pages-mix", case.mix, "--idle-timeout", str(case.idle)]
        self.ca_file: Path | None = None
        self._ctx: ssl.SSLContext | None = None
        if case.scheme == "https":
            assert pki_dir is not None
            from headway.testing.tls import make_test_pki

            pki = make_test_pki(pki_dir)
            argv += ["--tls-cert", str(pki.cert_file), "--tls-key", str(pki.key_file)]
            argv += [] if case.resumption else ["--no-resumption"]
            self.ca_file = pki.ca_file
            self._ctx = ssl.create_default_context(cafile=str(pki.ca_file))
        self.scheme = case.scheme
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_port(self.port)
        self.warmed = self._warm(case)

    def _warm(self, case: BenchCase) -> int:
        """Ask for every page a crawl fetches once, before any measured run; returns how
        many. The simulated web builds a page at its first request and keeps it (up to
        a few thousand): without this, the first run of a server (the "before" run of
        a before/after pair) would share the machine with the server building pages,
        and cost about a tenth more CPU per page than the same crawler run second."""
        from concurrent.futures import ThreadPoolExecutor

        from headway.testing.graph import HostSpec, SimWebSpec, expected_urls

        if case.hosts * case.pages > WARM_MAX:
            return 0  # more than the server keeps: every run builds its pages
        spec = SimWebSpec(
            hosts=case.hosts,
            host_spec=HostSpec(
                pages=case.pages,
                links_per_page=case.links,
                page_bytes=case.page_kb * 1024,
                page_mix=case.mix,
            ),
            suffix=SUFFIX,
        )
        urls = expected_urls(
            spec,
            lambda h, path: f"{case.scheme}://site{h}.{SUFFIX}:{self.port}{path}",
            [(h, "/") for h in range(case.hosts)],
        )

        def get(url: str) -> None:
            host, _, path = url.split("://", 1)[1].partition("/")
            req = urllib.request.Request(
                f"{self.scheme}://127.0.0.1:{self.port}/{path}", headers={"Host": host}
            )
            with urllib.request.urlopen(req, timeout=30, context=self._ctx) as resp:
                resp.read()

        with ThreadPoolExecutor(4) as pool:
            list(pool.map(get, sorted(urls)))
        return len(urls)

    def connections(self) -> tuple[int, int, int]:
        """Connections accepted so far, how many of them resumed a TLS session and how
        many made a full TLS handshake."""
        return server_counts(self.scheme, self.port, self._ctx)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def _run_case(case: BenchCase, server: _Server, tmp: Path) -> BenchResult:
    config = {
        "port": server.port,
        "hosts": case.hosts,
        "scheme": case.scheme,
        "gap": case.gap,
        "parsers": case.parsers,
        "out": str(tmp / "crawl"),
        "ca_file": str(server.ca_file) if server.ca_file else None,
        "seconds": case.seconds,
        "http_client": case.client,
        "text": case.text,
    }
    argv = [sys.executable, "-m", "headway.cli", "bench-crawl", json.dumps(config)]
    before, resumed_before, full_before = server.connections()
    env = None
    if case.src is not None:
        env = {**os.environ, "PYTHONPATH": case.src}
    run = TreeRun(argv, exclude={server.proc.pid}, env=env)
    proc = run.start()
    lines: list[dict[str, Any]] = []
    progress: list[tuple[float, int]] = []

    def read() -> None:
        assert proc.stdout is not None
        for raw in proc.stdout:
            with contextlib.suppress(ValueError):
                msg = json.loads(raw)
                if msg.get("event") == "started":
                    run.mark()
                elif msg.get("event") == "progress":
                    progress.append((run.sample(), int(msg["pages"])))
                else:
                    lines.append(msg)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    usage = run.wait(case.seconds + 120)
    reader.join(10)
    after, resumed_after, full_after = server.connections()
    if usage.returncode != 0 or not lines:
        return BenchResult(case, error=f"crawler exited with {usage.returncode}")
    s = lines[-1]
    decoded = from_json(s.get("stats"))
    if decoded.missing:
        return BenchResult(case, error=f"crawler statistics incomplete: {decoded.missing[:3]}")
    stats = decoded.stats
    return BenchResult(
        case,
        pages=stats.fetch.fetches,
        requests=stats.fetch.requests,
        crawl_seconds=float(s["seconds"]),
        startup_cpu=usage.mark_cpu or 0.0,
        crawl_cpu=usage.after_mark_cpu,
        processes=usage.processes,
        orphans=usage.orphans,
        peaks=usage.peaks,
        frontier_cpu=float(s["frontier_cpu"]),
        frontier_urls=stats.frontier.seen if stats.frontier is not None else 0,
        # less the connection of the bench's own second reading (a full handshake)
        connections=after - before - 1,
        resumed=resumed_after - resumed_before,
        full=full_after - full_before - (case.scheme == "https"),
        stopped_by=str(s["stopped_by"]),
        outcomes=dict(stats.fetch.outcomes),
        progress=tuple(progress),
    )


def run_bench(cases: list[BenchCase]) -> list[BenchResult]:
    """Run every case, one server per (scheme, size), in order."""
    results: list[BenchResult] = []
    with tempfile.TemporaryDirectory(prefix="headway-bench-") as tmp_name:
        tmp = Path(tmp_name)
        servers: dict[tuple[str, int, str, float, bool], _Server] = {}
        try:
            for n, case in enumerate(cases):
                key = case.server_key
                if key not in servers:
                    servers[key] = _Server(case, tmp / f"pki-{n}")
                run_dir = tmp / f"run-{n}"
                run_dir.mkdir()
                results.append(_run_case(case, servers[key], run_dir))
        finally:
            for server in servers.values():
                server.stop()
    return results


def crawl_child(config: dict[str, Any]) -> dict[str, Any]:
    """The crawl of one case, run in the measured process (``headway bench-crawl``);
    ``on_started`` is called when start-up is over."""
    import uvloop

    from headway.runtime.node import Node

    ca = config.get("ca_file")
    settings = bench_settings(
        Path(config["out"]),
        int(config["parsers"]),
        gap=float(config["gap"]),
        ca_file=Path(ca) if ca else None,
        max_duration=float(config["seconds"]),
        suffix=SUFFIX,
        http_client=str(config.get("http_client", "aiohttp")),
        text=str(config.get("text", "off")),
    )
    port, scheme = int(config["port"]), str(config["scheme"])
    seeds = [f"{scheme}://site{i}.{SUFFIX}:{port}/" for i in range(int(config["hosts"]))]

    def started() -> None:
        sys.stdout.write(json.dumps({"event": "started"}) + "\n")
        sys.stdout.flush()

    def progress(stats: NodeStats) -> None:
        # about once a second (stats_interval): the bench samples the tree's CPU
        # against the pages so far
        if not node.parts.scheduler.stopping:
            line = {"event": "progress", "pages": stats.fetch.fetches}
            sys.stdout.write(json.dumps(line) + "\n")
            sys.stdout.flush()

    node = Node(settings, seeds, on_started=started, on_stats=progress, stats_interval=1.0)
    s = uvloop.run(node.run())
    stats = dataclasses.replace(node.statistics(), frontier=s.frontier)
    return {
        "stats": stats.to_json(),
        "seconds": s.seconds,
        "stopped_by": s.stopped_by,
        "frontier_cpu": node.parts.fw.cpu_seconds(),
    }
