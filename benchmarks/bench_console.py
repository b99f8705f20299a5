"""What the operator's console costs.

Part ``api``: a node that knows ``--hosts`` hosts (default 50,000: each counted by the
console's host book, each with a politeness limiter and robots.txt rules in the
scheduler, each with queued URLs in a SQLite frontier) builds its console snapshot, and
a console on loopback answers ``/api/state`` and host searches. Prints the median
milliseconds of each over ``--repeat`` tries and the answer's size.

Part ``cpu``: crawls of the simulated web (served by another process, not counted) run
as processes of their own, alternately without a console and with one that a reader
polls as the page does (``/api/state`` every 2 s); the CPU of each crawl's whole process
tree (parser processes included, ``bench/proctree.TreeRun``) over the pages it
fetched. Prints ms per page for each run and the ratio of the medians.

Usage: ``python benchmarks/bench_console.py [api|cpu|both] [--hosts N] [--pages N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp.test_utils import TestServer

from headway.bench.harness import free_port, wait_port
from headway.bench.proctree import TreeRun
from headway.console.app import Guard, make_app
from headway.console.sources import ControlDesk, DirSource, LiveSource
from headway.frontier.sqlite import SqliteFrontier
from headway.frontier.store import FrontierLimits, UrlEntry
from headway.policy.politeness import HostLimitParams
from headway.policy.robots import RobotsKind, RobotsRules
from headway.policy.schedule import ScheduleCore, ScheduleParams
from headway.runtime.book import ConsoleBook
from headway.runtime.snapshot import SnapshotParts, Snapshotter
from headway.runtime.stats import NodeStats
from headway.threads import ThreadWorker
from headway.urls.fingerprint import fingerprint

UA = "headway-bench/0.1 (+https://example.org/bench)"


def _median_ms(samples: list[float]) -> str:
    return f"{statistics.median(samples) * 1000:8.2f} ms"


CPU: list[float] = []  # CPU seconds of the tries of the last ``_time``


async def _time(fn: Any, repeat: int) -> list[float]:
    """Wall seconds of each try (their CPU seconds, this process's, into ``CPU``)."""
    out = []
    CPU.clear()
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        await fn()
        out.append(time.perf_counter() - t0)
        CPU.append(time.process_time() - c0)
    return out


class LoopLag:
    """The longest the event loop went without running a 1 ms ticker (what a console
    request can hold the crawl's loop for)."""

    def __init__(self) -> None:
        self.worst = 0.0
        self._task: asyncio.Task[None] | None = None

    async def _tick(self) -> None:
        while True:
            t0 = time.perf_counter()
            await asyncio.sleep(0.001)
            self.worst = max(self.worst, time.perf_counter() - t0 - 0.001)

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._tick())

    async def stop(self) -> float:
        assert self._task is not None
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        return self.worst


async def bench_api(hosts: int, repeat: int) -> None:
    where = Path(tempfile.mkdtemp(prefix="bench-console-"))
    (where / "headway.json").write_text("{}")
    names = [f"site{i}.example" for i in range(hosts)]
    t0 = time.perf_counter()
    frontier = SqliteFrontier(
        where / "frontier.sqlite3",
        FrontierLimits(bloom_capacity=hosts * 4),
        node_id="bench",
    )
    entries = []
    for i, h in enumerate(names):
        for j in range(2):
            url = f"http://{h}/p{j}"
            entries.append(UrlEntry(url, h, 1, j, fingerprint(url)))
        if len(entries) >= 5000 or i == hosts - 1:
            frontier.add(entries, now=0.0)
            entries = []
    core = ScheduleCore(
        ScheduleParams(limits=HostLimitParams(), crawl_delay_max=30, max_limiters=hosts)
    )
    book = ConsoleBook(max_hosts=hosts)
    now = time.time()
    for i, h in enumerate(names):
        lim = core.limiter(h)
        lim.on_start(now - 5)
        lim.on_finish(now - 4, "ok", latency=0.2)  # type: ignore[arg-type]
        core.robots.put(h, RobotsRules(RobotsKind.ALLOW_ALL, now, now + 3600))
        for _ in range(1 + i % 7):
            book.hosts.on_page(h, "ok" if i % 11 else "timeout", 20_000)
    book.seeds.use((f"http://{h}/", h) for h in names[:1000])
    print(f"setup: {hosts:,} hosts in {time.perf_counter() - t0:.1f} s")
    worker = ThreadWorker("bench-frontier")
    parts = SnapshotParts(
        node_id="bench",
        directory=where,
        book=book,
        core=core,
        worker=worker,
        frontier=frontier,
        stats=NodeStats,
        cpu_seconds=time.process_time,
        rss_mib=lambda: 0.0,
        shards_held=lambda: None,
        publish=None,
        host_budget=10_000,
        crawl={"directory": str(where), "store": "", "crawl_id": None},
    )
    snap = Snapshotter(parts)
    builds = await _time(snap.refresh, repeat)
    size = (where / "console.json").stat().st_size
    print(
        f"snapshot build + write (every 2 s while crawling): {_median_ms(builds)} "
        f"(CPU {_median_ms(CPU).strip()})   console.json {size / 1024:.0f} KiB"
    )
    desk_worker = ThreadWorker("bench-console")
    desk = ControlDesk(None, desk_worker)
    cases = [
        ("live", LiveSource(lambda: snap, str(where))),
        ("crawl directory", DirSource(where, desk_worker)),
    ]
    for label, source in cases:
        server = TestServer(make_app(source, desk, Guard(loopback=True, token=None)))
        await server.start_server()
        base = f"http://127.0.0.1:{server.port}"
        async with aiohttp.ClientSession() as session:

            async def get(path: str, _s: aiohttp.ClientSession = session, _b: str = base) -> int:
                async with _s.get(_b + path) as r:
                    return len(await r.read())

            print(f"-- console on a {label} with {hosts:,} hosts known")
            print(
                f"{'':52s} {'median':>11s} {'CPU':>11s} {'answer':>11s} {'longest loop hold':>18s}"
            )
            for path in (
                "/api/state",
                "/api/hosts?q=site1&sort=pages&limit=100",
                "/api/hosts?q=site12345&sort=pages&limit=100",
                "/api/hosts?q=&sort=gap&limit=100",
                "/api/hosts?q=example&sort=host&limit=500",
            ):
                n = await get(path)
                lag = LoopLag()
                lag.start()
                took = await _time(lambda p=path: get(p), repeat)
                held = await lag.stop()
                print(
                    f"GET {path:48s} {_median_ms(took)} {_median_ms(CPU)} "
                    f"{n / 1024:7.1f} KiB {held * 1000:14.1f} ms"
                )
        await server.close()
    frontier.close()
    worker.shutdown()
    desk_worker.shutdown()


class Poller:
    """Reads a console as its page does: the page and its files once, then
    ``/api/state`` every ``every`` seconds, until stopped."""

    def __init__(self, port: int, every: float = 2.0) -> None:
        self.port = port
        self.every = every
        self.reads = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _get(self, path: str) -> None:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=5) as r:
            r.read()
        self.reads += 1

    def _run(self) -> None:
        first = True
        while not self._stop.wait(0 if first else self.every):
            try:
                if first:
                    for path in ("/", "/static/console.css", "/static/console.js"):
                        self._get(path)
                    first = False
                self._get("/api/state")
            except OSError:
                pass  # not listening yet, or gone

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(10)


def crawl_once(seeds: Path, tmp: Path, pages: int, gap: float, console: bool) -> tuple[float, int]:
    """One crawl: (CPU seconds of its process tree, pages fetched)."""
    out = Path(tempfile.mkdtemp(dir=tmp))
    port = free_port()
    argv = [sys.executable, "-m", "headway.cli", "crawl", str(seeds), "--out", str(out)]
    argv += ["--user-agent", UA, "--resolve", "*.sim=127.0.0.1", "--allow-loopback", "-q"]
    argv += ["--max-pages", str(pages), "--delay", str(gap), "--max-per-host", "1"]
    if console:
        argv += ["--console-port", str(port)]
    run = TreeRun(argv, stdout=subprocess.DEVNULL)
    poller = Poller(port)
    run.start()
    if console:
        poller.start()
    usage = run.wait(600)
    if console:
        poller.stop()
    last = json.loads((out / "metrics.jsonl").read_text().splitlines()[-1])
    if console and poller.reads < 3:
        print(f"   (the console was read only {poller.reads} times)")
    return usage.total_cpu, int(last["fetches"])


def bench_cpu(hosts: int, pages: int, gap: float, runs: int) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="bench-console-cpu-"))
    port = free_port()
    web = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "headway.cli",
            "simweb",
            "--hosts",
            str(hosts),
            "--pages",
            "2000",
            "--port",
            str(port),
            "--links",
            "20",
            "--page-kb",
            "16",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_port(port)
        seeds = tmp / "seeds.txt"
        seeds.write_text("".join(f"http://site{i}.sim:{port}/\n" for i in range(hosts)))
        per_page: dict[bool, list[float]] = {False: [], True: []}
        print(f"-- {pages} pages from {hosts} hosts, gap {gap} s, whole process tree")
        for i in range(runs):
            for console in (False, True) if i % 2 == 0 else (True, False):
                cpu, fetched = crawl_once(seeds, tmp, pages, gap, console)
                ms = 1000 * cpu / max(1, fetched)
                per_page[console].append(ms)
                label = "console read every 2 s" if console else "no console"
                print(
                    f"run {i + 1} {label:24s} {fetched:6d} pages {cpu:7.2f} s CPU {ms:6.3f} ms/page"
                )
        a = statistics.median(per_page[False])
        b = statistics.median(per_page[True])
        print(f"median ms/page: without {a:.3f}, with the console {b:.3f}: ratio {b / a:.3f}")
    finally:
        web.terminate()
        web.wait(10)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("part", nargs="?", default="both", choices=["api", "cpu", "both"])
    ap.add_argument("--hosts", type=int, default=50_000, help="hosts known (api)")
    ap.add_argument("--repeat", type=int, default=20, help="tries per figure (api)")
    ap.add_argument("--crawl-hosts", type=int, default=40, help="hosts of the simulated web")
    ap.add_argument("--pages", type=int, default=3000, help="pages per crawl (cpu)")
    ap.add_argument("--gap", type=float, default=0.0, help="politeness gap (cpu)")
    ap.add_argument("--runs", type=int, default=3, help="crawls of each kind (cpu)")
    args = ap.parse_args()
    if args.part in ("api", "both"):
        asyncio.run(bench_api(args.hosts, args.repeat))
    if args.part in ("cpu", "both"):
        bench_cpu(args.crawl_hosts, args.pages, args.gap, args.runs)


if __name__ == "__main__":
    main()
