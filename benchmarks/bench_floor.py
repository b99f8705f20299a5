"""The floor of the real case: what the libraries alone spend on a page of the real page
mix fetched over HTTPS with a new connection per fetch; then, with ``--crawl``, headway
(and Scrapy) crawling that case, and their ratio to the floor.

Run: ``.venv/bin/python benchmarks/bench_floor.py [--sample 200] [--crawl --seconds 30]
[--http-client aiohttp curl] [--scrapy-python .venv-scrapy/bin/python]``.

The pages: the simulated web of ``headway bench --pages-mix real`` (50 hosts x 40 pages,
seed 0; sizes log-normal with median 138 KB and mean 242 KB, links growing with size:
``headway/testing/pagemix.py``), ``--sample`` of them evenly spread, each cut at
``--max-body`` (256 KiB, the crawler's default) as the crawler cuts it. The floor per
page, each part the best of several trials of CPU time in this process:

- lexbor (selectolax) parse + ``css('a[href]')`` attributes;
- ``ada_url.join_url`` of each href; ``blake2b(digest_size=8)`` of each joined URL;
- SHA-1 payload digest and an ISA-L gzip member (level 2, headway's default) of the body,
  for the WARC;
- an aiohttp GET over plain HTTP on loopback with a new TCP connection per GET (a
  ``headway simweb --pages-mix real`` process serves it; its CPU is not counted), the
  body read up to the cut: the client's CPU per GET;
- one TLS handshake, client side only (``ssl`` over memory BIOs; the server side runs
  in the same thread but its calls are not timed): TLS 1.3, an ECDSA P-256 certificate
  verified against its CA, host name checked, as the crawler does; *full*, and
  *resumed* with the session of an earlier connection;
- the TLS record layer: decrypting the cut body, client side.

The floor of the case is the sum, with the full or with the resumed handshake. The
parts from the parse to the gzip member are measured by ``bench_vs_scrapy.page_costs``,
as that benchmark measures them.

``--crawl`` then runs ``headway bench``'s harness (whole process tree, start-up apart) on
the same web over HTTPS at ``--gap`` with the server closing connections idle
``--server-idle`` seconds (shorter than the gap: a new connection, one TLS handshake,
per fetch), with the server accepting session resumption and refusing it, and Scrapy
(``--scrapy-python``; its own virtualenv, never a dependency of headway) on a server that
accepts resumption, same gap and hosts, its one process measured the same way.
"""

from __future__ import annotations

import argparse
import json
import os
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

SUFFIX = "sim.test"
SPIDER = r"""
import json, resource, sys, time
import scrapy
from scrapy.crawler import CrawlerProcess
from scrapy.linkextractors import LinkExtractor
from scrapy.resolver import CachingThreadedResolver
from twisted.internet import defer

def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime

class SimResolver(CachingThreadedResolver):
    def getHostByName(self, name, timeout=()):
        if name.endswith(".sim.test"):
            return defer.succeed("127.0.0.1")
        return super().getHostByName(name, timeout)

class SimSpider(scrapy.Spider):
    name = "sim"

    def __init__(self, hosts, port, **kw):
        super().__init__(**kw)
        self.allowed_domains = [f"site{i}.sim.test" for i in range(hosts)]
        self.start_urls = [f"https://site{i}.sim.test:{port}/" for i in range(hosts)]
        self.links = LinkExtractor()
        self.pages = 0
        self.cpu0 = self.t0 = None

    async def start(self):
        self.cpu0, self.t0 = cpu(), time.monotonic()
        print(json.dumps({"event": "started"}), flush=True)
        for url in self.start_urls:
            yield scrapy.Request(url, callback=self.parse)

    def parse(self, response):
        self.pages += 1
        for link in self.links.extract_links(response):
            if not link.nofollow:
                yield scrapy.Request(link.url, callback=self.parse)

    def closed(self, reason):
        stats = self.crawler.stats.get_stats()
        print(json.dumps({
            "pages": self.pages,
            "requests": stats.get("downloader/request_count", 0),
            "crawl_wall": time.monotonic() - self.t0,
            "reason": reason,
        }), flush=True)

hosts, port = int(sys.argv[1]), int(sys.argv[2])
delay, seconds = float(sys.argv[3]), float(sys.argv[4])
process = CrawlerProcess({
    "ROBOTSTXT_OBEY": True, "CONCURRENT_REQUESTS": 64, "CONCURRENT_REQUESTS_PER_DOMAIN": 1,
    "DOWNLOAD_DELAY": delay, "RANDOMIZE_DOWNLOAD_DELAY": False, "LOG_LEVEL": "ERROR",
    "TELNETCONSOLE_ENABLED": False, "ITEM_PIPELINES": {}, "CLOSESPIDER_TIMEOUT": seconds,
    "DNS_RESOLVER": "__main__.SimResolver",
    "USER_AGENT": "scrapy-bench/1.0 (+https://example.org/bench)",
})
process.crawl(SimSpider, hosts=hosts, port=port)
process.start()
"""


# -- TLS, client side only ------------------------------------------------------------------


class _Pair:
    """A client and a server ``SSLObject`` joined by memory BIOs; ``client_cpu`` is the
    thread CPU spent in the client's calls only."""

    def __init__(
        self, client: ssl.SSLContext, server: ssl.SSLContext, session: ssl.SSLSession | None
    ) -> None:
        self.cin, self.cout = ssl.MemoryBIO(), ssl.MemoryBIO()
        self.sin, self.sout = ssl.MemoryBIO(), ssl.MemoryBIO()
        self.client_cpu = 0.0
        t0 = time.thread_time()
        self.c = client.wrap_bio(
            self.cin, self.cout, server_hostname=f"site0.{SUFFIX}", session=session
        )
        self.client_cpu += time.thread_time() - t0
        self.s = server.wrap_bio(self.sin, self.sout, server_side=True)

    def _client(self, call: Callable[[], Any]) -> Any:
        t0 = time.thread_time()
        try:
            return call()
        finally:
            self.client_cpu += time.thread_time() - t0

    def handshake(self) -> None:
        c_done = s_done = False
        while not (c_done and s_done):
            if not c_done:
                try:
                    self._client(self.c.do_handshake)
                    c_done = True
                except ssl.SSLWantReadError:
                    pass
            self.sin.write(self.cout.read())
            if not s_done:
                try:
                    self.s.do_handshake()
                    s_done = True
                except ssl.SSLWantReadError:
                    pass
            self.cin.write(self.sout.read())

    def transfer(self, body: bytes) -> int:
        """The server sends ``body``; the client reads it all (tickets included)."""
        self.s.write(body)
        self.cin.write(self.sout.read())
        got = 0
        while got < len(body):
            got += len(self._client(lambda: self.c.read(65536)))
        return got


def tls_floor(bodies: list[bytes], trials: int = 5) -> dict[str, float]:
    """Client CPU ms of a full and of a resumed handshake, and of reading a body."""
    from headway.testing.tls import make_test_pki, server_context

    with tempfile.TemporaryDirectory() as tmp:
        pki = make_test_pki(Path(tmp), SUFFIX)
        server = server_context(pki.cert_file, pki.key_file)
        client = ssl.create_default_context(cafile=str(pki.ca_file))
    first = _Pair(client, server, None)
    first.handshake()
    first.transfer(b"x")  # the session tickets arrive with the first data
    session = first.c.session

    def handshake_ms(resume: bool, n: int = 200) -> float:
        best = float("inf")
        for _ in range(trials):
            spent = 0.0
            for _ in range(n):
                pair = _Pair(client, server, session if resume else None)
                pair.handshake()
                pair.transfer(b"x")  # tickets read, as a crawler does before its data
                if pair.c.session_reused != resume:
                    raise RuntimeError("the handshake did not (or did) resume as asked")
                spent += pair.client_cpu
            best = min(best, spent / n * 1000)
        return best

    pair = _Pair(client, server, session)
    pair.handshake()
    pair.transfer(b"x")

    def read_ms() -> float:
        best = float("inf")
        for _ in range(trials):
            pair.client_cpu = 0.0
            for body in bodies:
                pair.transfer(body)
            best = min(best, pair.client_cpu / len(bodies) * 1000)
        return best

    return {
        "tls_full": handshake_ms(False),
        "tls_resumed": handshake_ms(True),
        "tls_read": read_ms(),
    }


# -- the GET -------------------------------------------------------------------------------


async def _get_ms(port: int, targets: list[tuple[int, str]], max_body: int, rounds: int) -> float:
    """Client CPU ms per GET over plain HTTP, a new TCP connection each, the body read
    up to ``max_body`` (the best of ``rounds`` passes)."""
    import aiohttp

    timeout = aiohttp.ClientTimeout(total=60)
    connector = aiohttp.TCPConnector(force_close=True)
    async with aiohttp.ClientSession(timeout=timeout, connector=connector) as session:

        async def get(host: int, path: str) -> None:
            headers = {"Host": f"site{host}.{SUFFIX}:{port}"}
            async with session.get(f"http://127.0.0.1:{port}{path}", headers=headers) as resp:
                size = 0
                while size < max_body:
                    chunk = await resp.content.read(min(65536, max_body - size))
                    if not chunk:
                        break
                    size += len(chunk)

        for h, p in targets:  # warms the server's cache of built pages
            await get(h, p)
        best = float("inf")
        for _ in range(rounds):
            cpu0 = time.process_time()
            for h, p in targets:
                await get(h, p)
            best = min(best, (time.process_time() - cpu0) / len(targets) * 1000)
        return best


# -- the floor -------------------------------------------------------------------------------


def measure_floor(args: argparse.Namespace, port: int) -> dict[str, float]:
    import uvloop
    from bench_vs_scrapy import page_costs

    from headway.testing.features import Renderer
    from headway.testing.graph import HostSpec, SimWebSpec

    web = SimWebSpec(
        hosts=args.hosts, host_spec=HostSpec(pages=args.pages, page_mix="real"), suffix=SUFFIX
    )
    origins = [f"https://site{i}.{SUFFIX}:{port}" for i in range(args.hosts)]
    renderer = Renderer(web, origins)
    everything = [(h, f"/p/{i}") for h in range(args.hosts) for i in range(args.pages)]
    picked = everything[:: max(1, len(everything) // args.sample)][: args.sample]
    full = [renderer.respond(h, p).body for h, p in picked]
    bodies = [b[: args.max_body] for b in full]  # cut as the crawler cuts
    urls = [origins[h] + p for h, p in picked]
    floor, page_hrefs = page_costs(urls, bodies)
    floor["get"] = uvloop.run(_get_ms(port, picked, args.max_body, 3))
    floor |= tls_floor(bodies)
    floor["pages"] = len(picked)
    floor["kb_full"] = statistics.mean(map(len, full)) / 1000
    floor["kb_median"] = statistics.median(map(len, full)) / 1000
    floor["kb_cut"] = statistics.mean(map(len, bodies)) / 1000
    floor["cut"] = sum(len(b) > args.max_body for b in full) / len(full)
    floor["links"] = statistics.mean(map(len, page_hrefs))
    return floor


PARTS = (
    ("parse", "lexbor parse + css('a[href]') attributes"),
    ("join", "ada_url.join_url of each href"),
    ("hash", "blake2b(digest_size=8) of each link"),
    ("sha1", "SHA-1 payload digest of the body"),
    ("gzip", "ISA-L gzip member (level 2) of the body"),
    ("get", "aiohttp GET, new TCP connection (client)"),
    ("tls_read", "TLS 1.3 records: decrypting the body"),
)


def floor_totals(floor: dict[str, float]) -> tuple[float, float]:
    """The floor per page with a full handshake, and with a resumed one."""
    base = sum(floor[k] for k, _ in PARTS)
    return base + floor["tls_full"], base + floor["tls_resumed"]


def print_floor(floor: dict[str, float], args: argparse.Namespace) -> None:
    print(
        f"real page mix: {args.hosts} hosts x {args.pages} pages; {floor['pages']:.0f} pages "
        f"sampled: mean {floor['kb_full']:.0f} KB, median {floor['kb_median']:.0f} KB as "
        f"served; {floor['cut']:.0%} over --max-body {args.max_body} cut there (mean "
        f"{floor['kb_cut']:.0f} KB kept); {floor['links']:.0f} hrefs a page in what is kept"
    )
    print("floor, CPU ms per page (best of 5 trials, this process; client side only):")
    for key, label in PARTS:
        print(f"  {label:<46}{floor[key]:8.3f}")
    print(f"  {'TLS 1.3 handshake, full (ECDSA P-256, verified)':<46}{floor['tls_full']:8.3f}")
    print(f"  {'TLS 1.3 handshake, resumed (session ticket)':<46}{floor['tls_resumed']:8.3f}")
    with_full, with_resumed = floor_totals(floor)
    print(f"  {'floor with a full handshake per page':<46}{with_full:8.3f}")
    print(f"  {'floor with a resumed handshake per page':<46}{with_resumed:8.3f}")


# -- the crawls ------------------------------------------------------------------------------


def run_scrapy(args: argparse.Namespace) -> dict[str, Any] | None:
    """Scrapy on its own server (real mix, HTTPS, idle time-out, resumption accepted)."""
    from headway.bench.harness import BenchCase, _Server
    from headway.bench.proctree import TreeRun

    if not Path(args.scrapy_python).exists():
        print(f"no Scrapy at {args.scrapy_python}: Scrapy skipped")
        return None
    case = BenchCase(
        "https",
        args.gap,
        1,
        args.hosts,
        args.pages,
        280,
        64,
        1,
        args.seconds,
        mix="real",
        idle=args.server_idle,
    )
    with tempfile.TemporaryDirectory() as tmp:
        server = _Server(case, Path(tmp) / "pki")
        try:
            spider = Path(tmp) / "sim_spider.py"
            spider.write_text(SPIDER)
            cmd = [args.scrapy_python, str(spider), str(args.hosts), str(server.port)]
            cmd += [str(args.gap), str(args.seconds)]
            env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
            conns0, resumed0, full0 = server.connections()
            run = TreeRun(cmd, exclude={server.proc.pid}, env=env)
            proc = run.start()
            lines: list[dict[str, Any]] = []

            def read() -> None:
                assert proc.stdout is not None
                for raw in proc.stdout:
                    if raw.startswith(b"{"):
                        msg = json.loads(raw)
                        if msg.get("event") == "started":
                            run.mark()
                        else:
                            lines.append(msg)

            reader = threading.Thread(target=read, daemon=True)
            reader.start()
            usage = run.wait(args.seconds + 120)
            reader.join(10)
            conns, resumed, full = server.connections()
        finally:
            server.stop()
    if usage.returncode != 0 or not lines:
        print(f"scrapy failed (rc {usage.returncode})")
        return None
    return lines[-1] | {
        "cpu": usage.after_mark_cpu,
        "startup": usage.mark_cpu or 0.0,
        "conns": conns - conns0 - 1,
        "resumed": resumed - resumed0,
        "full": full - full0 - 1,
    }


def crawl(args: argparse.Namespace, floor: dict[str, float]) -> None:
    from headway.bench.harness import BenchCase, run_bench
    from headway.bench.report import report_lines

    cases = [
        BenchCase(
            "https",
            args.gap,
            1,
            args.hosts,
            args.pages,
            280,
            64,
            0,
            args.seconds,
            mix="real",
            idle=args.server_idle,
            resumption=resumption,
            client=client,
        )
        for client in dict.fromkeys(args.http_client)
        for resumption in (True, False)
    ]
    results = run_bench(cases)
    print()
    for line in report_lines(results):
        print(line)
    scrapy = run_scrapy(args)
    with_full, with_resumed = floor_totals(floor)
    print()
    for r in results:
        if r.error or not r.pages:
            continue
        floor_ms = with_resumed if r.case.resumption else with_full
        steady = r.steady_ms_per_page
        steady_text = f"; steady {steady:.2f} ms, {steady / floor_ms:.2f}x" if steady else ""
        print(
            f"headway, {r.case.name}: {r.ms_per_page:.2f} ms a page, "
            f"{1000 / r.ms_per_page:.0f} pages per CPU-second; {r.ms_per_page / floor_ms:.2f}x "
            f"the floor with a {'resumed' if r.case.resumption else 'full'} handshake "
            f"({floor_ms:.3f} ms){steady_text}"
        )
    if scrapy is not None:
        ms = scrapy["cpu"] / max(1, scrapy["pages"]) * 1000
        print(
            f"scrapy, https gap {args.gap:g}s real idle {args.server_idle:g}s: {scrapy['pages']} "
            f"pages, {ms:.2f} ms a page (crawl CPU; start-up {scrapy['startup']:.2f} s apart), "
            f"{1000 / ms:.0f} pages per CPU-second; {ms / with_full:.2f}x the floor with a full "
            f"handshake; {scrapy['conns']} connections for {scrapy['requests']} requests, TLS "
            f"handshakes {scrapy['full']} full, {scrapy['resumed']} resumed; ended "
            f"{scrapy['reason']}"
        )
        for r in results:
            if not r.error and r.pages:
                print(
                    f"  pages per CPU-second, headway ({r.case.name}) / scrapy: "
                    f"{ms / r.ms_per_page:.2f}x"
                )


def main() -> int:
    from bench_vs_scrapy import SCRAPY_PYTHON

    from headway.bench.harness import free_port, wait_port

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hosts", type=int, default=50)
    ap.add_argument("--pages", type=int, default=40, help="pages per host")
    ap.add_argument("--sample", type=int, default=200, help="pages timed for the floor")
    ap.add_argument("--max-body", type=int, default=256 * 1024, help="bytes kept of a body")
    ap.add_argument("--crawl", action="store_true", help="then crawl the case: headway, Scrapy")
    ap.add_argument("--gap", type=float, default=1.0, help="politeness gap of the crawls")
    ap.add_argument("--server-idle", type=float, default=0.5, help="server's idle time-out")
    ap.add_argument("--seconds", type=float, default=30.0, help="each crawl stops after this")
    ap.add_argument("--scrapy-python", default=str(SCRAPY_PYTHON))
    ap.add_argument(
        "--http-client",
        nargs="+",
        default=["aiohttp"],
        choices=["aiohttp", "curl"],
        help="headway's HTTP clients to crawl with, each in turn (curl: the curl extra)",
    )
    args = ap.parse_args()
    port = free_port()
    argv = [sys.executable, "-m", "headway.cli", "simweb", "--hosts", str(args.hosts)]
    argv += ["--pages", str(args.pages), "--port", str(port), "--suffix", SUFFIX]
    argv += ["--pages-mix", "real"]
    server = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_port(port)
        floor = measure_floor(args, port)
    finally:
        server.terminate()
        server.wait(10)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print_floor(floor, args)
    if args.crawl:
        crawl(args, floor)
        print(f"load average {os.getloadavg()[0]:.1f} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
