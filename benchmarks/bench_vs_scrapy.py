"""headway against Scrapy on the same simulated web, and the floor set by library costs.

Run: ``.venv/bin/python benchmarks/bench_vs_scrapy.py --hosts 20 --pages 50 --links 280
--page-kb 64 [--scrapy-python .venv-scrapy/bin/python] [--scrapy-dns proxy|resolver]``.
Scrapy is not a dependency of headway; give it a virtualenv of its own first:
``python3.11 -m venv .venv-scrapy && .venv-scrapy/bin/pip install scrapy`` (in the
repository's folder, beside ``.venv``; git ignores it).

One ``headway simweb`` process serves every host on a free loopback port; both crawlers
talk to it, and its CPU is not counted (it is a separate process). Then:

1. The floor: every page is fetched once with aiohttp (which also warms the server's
   reply cache), and ~200 of them, sampled evenly, are timed in process CPU time through
   the libraries a crawler cannot avoid: lexbor parse + ``css('a[href]')`` attribute
   collection, ``ada_url.join_url`` of each href, ``blake2b(digest_size=8)`` of each joined
   URL, aiohttp GETs over loopback (client CPU per page), the SHA-1 payload digest and an
   ISA-L gzip member (level 2, as headway's default) of the body for the WARC; each the
   best of a few trials. Their sum is the floor.
2. headway with politeness gaps off (delay 0, 8 per host, concurrency 64), with 1 and 2
   parser processes, writing its WARC and frontier to a temporary crawl directory.
3. Scrapy (a spider generated into a temporary directory, run by ``--scrapy-python``):
   seeds ``http://siteN.sim:PORT/``, every ``<a href>`` followed with ``LinkExtractor``
   inside the seed domains except ``rel=nofollow`` ones, ROBOTSTXT_OBEY, 64 concurrent /
   8 per domain, no delay, items not kept. ``*.sim`` reaches the server through
   ``http_proxy`` (the simweb is also a forward proxy) or, with ``--scrapy-dns resolver``,
   through a DNS_RESOLVER mapping ``*.sim`` to 127.0.0.1.

Each crawler runs under ``TreeRun`` (``headway.bench.proctree``): this process is a
child subreaper, so processes the crawler leaves orphaned (the forkserver of the parser
pool) are still reaped here, and the CPU of the crawler's whole process tree is the sum
of the ``wait4`` usage of the crawler and of those orphans, start-up included. "crawl
CPU" subtracts the tree's CPU when the crawl began: for headway, sampled from ``/proc``
when the node reports its start-up over; for Scrapy (one process), what it had spent when
its spider started.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()
#: Scrapy's own virtualenv, in the repository's folder beside ``.venv`` (see above).
SCRAPY_PYTHON = HERE.parents[1] / ".venv-scrapy" / "bin" / "python"
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
        if name.endswith(".sim"):
            return defer.succeed("127.0.0.1")
        return super().getHostByName(name, timeout)

class SimSpider(scrapy.Spider):
    name = "sim"

    def __init__(self, hosts, port, **kw):
        super().__init__(**kw)
        self.allowed_domains = [f"site{i}.sim" for i in range(hosts)]
        self.start_urls = [f"http://site{i}.sim:{port}/" for i in range(hosts)]
        # scoped by allowed_domains (OffsiteMiddleware): LinkExtractor(allow_domains=...)
        # compares the netloc, port included, so it would drop every link here
        self.links = LinkExtractor()
        self.pages = 0
        self.cpu0 = self.t0 = None

    async def start(self):
        self.cpu0, self.t0 = cpu(), time.monotonic()
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
            "statuses": {k.rsplit("/", 1)[1]: v for k, v in stats.items()
                         if k.startswith("downloader/response_status_count/")},
            "robots": stats.get("robotstxt/response_count", 0),
            "crawl_wall": time.monotonic() - self.t0,
            "startup_cpu": self.cpu0,
            "reason": reason,
        }), flush=True)

hosts, port, dns = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
settings = {
    "ROBOTSTXT_OBEY": True, "CONCURRENT_REQUESTS": 64, "CONCURRENT_REQUESTS_PER_DOMAIN": 8,
    "DOWNLOAD_DELAY": 0, "LOG_LEVEL": "ERROR", "TELNETCONSOLE_ENABLED": False,
    "ITEM_PIPELINES": {}, "USER_AGENT": "scrapy-bench/1.0 (+https://example.org/bench)",
}
if dns == "resolver":
    settings["DNS_RESOLVER"] = "__main__.SimResolver"
process = CrawlerProcess(settings)
process.crawl(SimSpider, hosts=hosts, port=port)
process.start()
"""


# -- child modes -----------------------------------------------------------------------------


def headway_main(argv: list[str]) -> int:
    """``_headway PORT HOSTS PARSERS CRAWL_DIR``: crawl the simweb, print a JSON summary."""
    port, hosts, parsers, crawl_dir = int(argv[0]), int(argv[1]), int(argv[2]), argv[3]
    import uvloop

    from headway.bench.harness import bench_settings
    from headway.runtime.node import Node

    settings = bench_settings(Path(crawl_dir), parsers)

    def started() -> None:
        print(json.dumps({"event": "started"}), flush=True)

    seeds = [f"http://site{i}.sim:{port}/" for i in range(hosts)]
    s = uvloop.run(Node(settings, seeds, on_started=started).run())
    info: dict[str, Any] = {"pages": s.fetches, "requests": s.requests, "crawl_wall": s.seconds}
    info |= {"self_cpu": s.cpu_seconds, "outcomes": s.outcomes}
    print(json.dumps(info), flush=True)
    return 0


# -- the parent ------------------------------------------------------------------------------


def run_measured(name: str, cmd: list[str], timeout: float, env: dict[str, str]) -> dict[str, Any]:
    """Run ``cmd`` under ``TreeRun``; its last JSON line merged with the tree's usage."""
    from headway.bench.proctree import TreeRun

    run = TreeRun(cmd, env=env)
    proc = run.start()
    lines: list[dict[str, Any]] = []
    text: list[str] = []

    def read() -> None:
        assert proc.stdout is not None
        for raw in proc.stdout:
            line = raw.decode(errors="replace")
            text.append(line)
            if line.startswith("{"):
                msg = json.loads(line)
                if msg.get("event") == "started":
                    run.mark()
                else:
                    lines.append(msg)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    usage = run.wait(timeout)
    reader.join(10)
    if usage.returncode != 0 or not lines:
        out = "".join(text)[-3000:]
        print(f"{name}: failed (rc {usage.returncode}):\n{out}")
        return {"name": name, "failed": True}
    result = {"name": name, **lines[-1], "rc": usage.returncode, "wall": usage.wall}
    result |= {"cpu": usage.total_cpu, "orphans": usage.orphans, "processes": usage.processes}
    if usage.mark_cpu is not None:
        result["startup_cpu"] = usage.mark_cpu
    return result


def sample_paths(hosts: int, pages: int) -> list[tuple[int, str]]:
    return [(h, "/") for h in range(hosts)] + [
        (h, f"/p/{i}") for h in range(hosts) for i in range(pages)
    ]


async def _fetch_all(
    port: int, targets: list[tuple[int, str]], rounds: int
) -> tuple[list[bytes], float, int]:
    """Bodies of ``targets``, and client CPU seconds / GET count of ``rounds`` more passes."""
    import aiohttp

    timeout = aiohttp.ClientTimeout(total=30)
    gate = asyncio.Semaphore(8)
    async with aiohttp.ClientSession(timeout=timeout) as session:

        async def get(host: int, path: str) -> bytes:
            async with gate:
                url = f"http://127.0.0.1:{port}{path}"
                headers = {"Host": f"site{host}.sim:{port}"}
                async with session.get(url, headers=headers) as resp:
                    body = await resp.read()
                    if resp.status != 200:
                        raise RuntimeError(f"site{host}.sim{path}: {resp.status}")
                    return body

        bodies = await asyncio.gather(*(get(h, p) for h, p in targets))
        cpu0 = time.process_time()
        for _ in range(rounds):
            await asyncio.gather(*(get(h, p) for h, p in targets))
        return list(bodies), time.process_time() - cpu0, rounds * len(targets)


def per_page(work: Any, items: list[Any], trials: int = 5, min_cpu: float = 0.2) -> float:
    """CPU ms per item of ``work(item)``: the best of ``trials`` runs of >= ``min_cpu`` s
    (the least disturbed one; this is a floor)."""
    best = float("inf")
    for _ in range(trials):
        reps, spent = 0, 0.0
        cpu0 = time.process_time()
        while spent < min_cpu:
            for item in items:
                work(item)
            reps += 1
            spent = time.process_time() - cpu0
        best = min(best, spent / (reps * len(items)) * 1000)
    return best


def page_costs(urls: list[str], bodies: list[bytes]) -> tuple[dict[str, float], list[list[str]]]:
    """CPU ms per page (``per_page``) of what a crawler cannot avoid for the page ``bodies``
    fetched from ``urls``: lexbor parse + ``css('a[href]')`` attributes ("parse"),
    ``ada_url.join_url`` of each href ("join"), ``blake2b(digest_size=8)`` of each joined
    URL ("hash"), the SHA-1 payload digest ("sha1") and an ISA-L gzip member, level 2
    ("gzip"); and the hrefs of each page."""
    import ada_url
    from isal import isal_zlib
    from selectolax.lexbor import LexborHTMLParser

    def hrefs(body: bytes) -> list[str]:
        tree = LexborHTMLParser(body)
        return [n.attributes.get("href") or "" for n in tree.css("a[href]")]

    page_hrefs = [hrefs(b) for b in bodies]
    pairs = list(zip(urls, page_hrefs, strict=True))
    joined = [[ada_url.join_url(u, h) for h in hs] for u, hs in pairs]
    blake = hashlib.blake2b
    costs = {
        "parse": per_page(hrefs, bodies),
        "join": per_page(lambda uh: [ada_url.join_url(uh[0], h) for h in uh[1]], pairs),
        "hash": per_page(
            lambda js: [blake(j.encode(), digest_size=8).digest() for j in js], joined
        ),
        "sha1": per_page(lambda b: hashlib.sha1(b).digest(), bodies),
        "gzip": per_page(
            lambda b: (lambda c: c.compress(b) + c.flush())(isal_zlib.compressobj(2, 8, 31)),
            bodies,
        ),
    }
    return costs, page_hrefs


def measure_floor(port: int, hosts: int, pages: int, sample: int) -> dict[str, float]:
    import uvloop

    everything = sample_paths(hosts, pages)
    uvloop.run(asyncio.wait_for(_fetch_all(port, everything, 0), 300))  # warms the server
    picked = everything[:: max(1, len(everything) // sample)][:sample]
    rounds = max(1, 1000 // len(picked))
    read_ms = float("inf")
    for _ in range(3):  # best of three passes of ~1000 GETs
        bodies, read_cpu, gets = uvloop.run(asyncio.wait_for(_fetch_all(port, picked, rounds), 300))
        read_ms = min(read_ms, read_cpu / gets * 1000)
    urls = [f"http://site{h}.sim:{port}{p}" for h, p in picked]
    floor, page_hrefs = page_costs(urls, bodies)
    floor["read"] = read_ms
    floor["links"] = sum(map(len, page_hrefs)) / len(page_hrefs)
    floor["kib"] = sum(map(len, bodies)) / len(bodies) / 1024
    floor["pages"] = len(picked)
    return floor


def print_report(rows: list[dict[str, Any]], floor: dict[str, float], args: Any) -> None:
    total = sum(floor[k] for k in ("parse", "join", "hash", "read", "sha1", "gzip"))
    print(
        f"\nsimulated web: {args.hosts} hosts x {args.pages} pages, {args.links} links and "
        f"{args.page_kb} KiB of text a page"
        f" (home pages: min(links, pages)); simweb server CPU not counted"
    )
    print(
        f"\nfloor over {floor['pages']:.0f} pages ({floor['kib']:.1f} KiB, "
        f"{floor['links']:.0f} hrefs a page on average), CPU ms per page:"
    )
    print(f"  lexbor parse + css('a[href]') attributes   {floor['parse']:8.3f}")
    print(f"  ada_url.join_url of each href              {floor['join']:8.3f}")
    print(f"  blake2b(digest_size=8) of each link        {floor['hash']:8.3f}")
    print(f"  aiohttp GET + read over loopback (client)  {floor['read']:8.3f}")
    print(f"  SHA-1 payload digest of the body           {floor['sha1']:8.3f}")
    print(f"  ISA-L gzip member (level 2) of the body    {floor['gzip']:8.3f}")
    print(f"  floor (sum)                                {total:8.3f}")
    head = (
        f"\n{'crawler':<22}{'pages':>7}{'wall s':>9}{'CPU s':>9}{'CPU ms/page':>13}"
        f"{'pages/CPU-s':>13}{'crawl CPU s':>13}{'crawl ms/pg':>13}"
    )
    print(head)
    print("-" * (len(head) - 1))
    ok = [r for r in rows if not r.get("failed")]
    for r in ok:
        crawl_cpu = r["cpu"] - r["startup_cpu"]
        r["ms"] = r["cpu"] / max(1, r["pages"]) * 1000
        r["pps"] = r["pages"] / r["cpu"] if r["cpu"] else 0.0
        print(
            f"{r['name']:<22}{r['pages']:>7}{r['wall']:>9.2f}{r['cpu']:>9.2f}{r['ms']:>13.2f}"
            f"{r['pps']:>13.1f}{crawl_cpu:>13.2f}{crawl_cpu / max(1, r['pages']) * 1000:>13.2f}"
        )
    for r in rows:
        if r.get("failed"):
            print(f"{r['name']:<22} failed")
    print()
    scrapies = [r for r in ok if r["name"].startswith("scrapy")]
    for r in ok:
        if r["name"].startswith("headway"):
            print(f"{r['name']}: CPU ms/page / floor = {r['ms'] / total:.2f}x")
            for sc in scrapies:
                line = f"  pages per CPU-s vs {sc['name']} = {r['pps'] / max(sc['pps'], 1e-9):.2f}x"
                diff = abs(r["pages"] - sc["pages"]) / max(r["pages"], sc["pages"], 1)
                if diff > 0.05:
                    line += f"  PAGE COUNT MISMATCH {r['pages']} vs {sc['pages']}"
                print(line)
            extra = f"  outcomes {r['outcomes']}; self-reported CPU s {r['self_cpu']:.2f}"
            print(extra + f"; orphans reaped {r['orphans']}")
    for sc in scrapies:
        print(
            f"{sc['name']}: statuses {sc['statuses']}, robots.txt {sc['robots']}, "
            f"requests {sc['requests']}, ended {sc['reason']}"
        )


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "_headway":
        return headway_main(sys.argv[2:])
    from headway.bench.harness import free_port, wait_port

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hosts", type=int, default=20)
    ap.add_argument("--pages", type=int, default=100, help="pages per host")
    ap.add_argument("--links", type=int, default=280, help="links per page")
    ap.add_argument("--page-kb", type=int, default=64, help="KiB of text added to a page")
    ap.add_argument("--parsers", type=int, nargs="*", default=[1, 2], help="runs of headway")
    ap.add_argument("--scrapy-python", default=str(SCRAPY_PYTHON))
    ap.add_argument("--scrapy-dns", choices=["proxy", "resolver"], nargs="+", default=["proxy"])
    ap.add_argument("--sample", type=int, default=200, help="pages timed for the floor")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per crawler run")
    args = ap.parse_args()
    port = free_port()
    simweb = [sys.executable, "-m", "headway.cli", "simweb", "--hosts", str(args.hosts)]
    simweb += ["--pages", str(args.pages), "--links", str(args.links), "--port", str(port)]
    simweb += ["--page-kb", str(args.page_kb)]
    server = subprocess.Popen(simweb, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    rows: list[dict[str, Any]] = []
    try:
        wait_port(port)
        floor = measure_floor(port, args.hosts, args.pages, args.sample)
        for parsers in args.parsers:
            with tempfile.TemporaryDirectory() as tmp:
                cmd = [sys.executable, str(HERE), "_headway", str(port), str(args.hosts)]
                cmd += [str(parsers), str(Path(tmp) / "crawl")]
                name = f"headway ({parsers} parser{'s' if parsers > 1 else ''})"
                rows.append(run_measured(name, cmd, args.timeout, env))
        if not Path(args.scrapy_python).exists():
            print(f"no Scrapy at {args.scrapy_python}: Scrapy rows skipped")
            args.scrapy_dns = []
        for dns in args.scrapy_dns:
            with tempfile.TemporaryDirectory() as tmp:
                spider = Path(tmp) / "sim_spider.py"
                spider.write_text(SPIDER)
                cmd = [args.scrapy_python, str(spider), str(args.hosts), str(port), dns]
                proxy = {"http_proxy": f"http://127.0.0.1:{port}"} if dns == "proxy" else {}
                rows.append(run_measured(f"scrapy ({dns})", cmd, args.timeout, env | proxy))
    finally:
        server.terminate()
        server.wait(10)
    print_report(rows, floor, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
