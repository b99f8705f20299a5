"""How much of the web's PageRank a crawl fetches early: headway's order beside offline
breadth-first, OPIC, random and omniscient orders, on a simulated web with known
PageRank (``headway.testing.rankweb``: hub hosts, a link farm, long-tailed host sizes,
every page reachable; PageRank computed from the graph alone).

Each headway run crawls the simulated web (served on loopback in this process) from
the hub hosts' home pages, open scope, ``--concurrency 8 --max-pages`` 20% of the pages
at ``--delay`` (0.05 s by default), and reads the order of the pages from the server's
own request log. Reported for every order: the share of the total PageRank in the first
10% of the web's pages fetched, home pages reached and the link farm's share of those
fetches. The offline orders ignore politeness (any page may go next).

With ``--nodes 2`` each headway run is two nodes in this process sharing a Redis (a
redis-server started for the run, 16 shards), each with ``--max-pages`` half the
budget; their fetches are read from the one server log, in arrival order.

Usage: ``python benchmarks/bench_priority.py [--hosts 1000] [--pages 20000]
[--delay 0.05] [--priority quality] [--priority depth] [--runs 1] [--nodes 2]``.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import checkout_path  # noqa: F401  (tests/support on sys.path)
from tests.support.redisproc import RedisServer

from headway.runtime.node import Node
from headway.settings import build_settings
from headway.testing import rankweb
from headway.testing.simweb import SimWeb

UA = "headway-bench/0.1 (+https://example.org/bench)"
_crawls = itertools.count()


def _row(name: str, order: Sequence[int], g: rankweb.PageGraph, rank: list[float]) -> str:
    n = len(g.pages) // 10
    first = list(dict.fromkeys(order))[:n]
    homes = sum(1 for i in first if g.pages[i][1] == "/")
    farm = sum(1 for i in first if i in g.farm) / max(1, len(first))
    hosts = len({g.pages[i][0] for i in first})
    share = rankweb.captured(first, rank, n)
    return f"| {name} | {share:.1%} | {hosts} | {homes} | {farm:.1%} |"


async def crawl_order(
    spec: rankweb.SimWebSpec,
    g: rankweb.PageGraph,
    *,
    priority: str,
    delay: float,
    concurrency: int,
    extra: dict[str, object],
    nodes: int = 1,
) -> tuple[list[int], float]:
    """The pages headway fetched, in the order the server saw them, and the seconds."""
    index = g.index()
    budget = len(g.pages) // 5
    async with SimWeb(spec) as web:
        seeds = [web.url(web.hosts[h], p) for h, p in rankweb.seeds(spec)]
        host_index = {name: i for i, name in enumerate(web.hosts)}
        with tempfile.TemporaryDirectory() as tmp:
            layer: dict[str, object] = {
                "user_agent": UA,
                "out": str(Path(tmp) / "crawl"),
                "resolve": [f"*.{spec.suffix}=127.0.0.1"],
                "allow_loopback": True,
                "quiet": True,
                "scope": "open",
                "delay": delay,
                "concurrency": concurrency,
                "max_pages": budget,
                "priority": priority,
                "metrics_interval": 1.0,
            }
            layer.update(extra)
            started = time.monotonic()
            if nodes == 1:
                await Node(build_settings(layer), seeds).run()
            else:
                redis = RedisServer(Path(tmp))
                redis.start()
                try:
                    crawl = f"rank{next(_crawls)}"
                    runs = []
                    for i in range(nodes):
                        node_layer = dict(layer)
                        node_layer.update(
                            out=str(Path(tmp) / f"node{i}"),
                            store=redis.url,
                            crawl_id=crawl,
                            shards=16,
                            max_pages=budget // nodes,
                        )
                        runs.append(Node(build_settings(node_layer), seeds).run())
                    await asyncio.gather(*runs)
                finally:
                    redis.stop()
            took = time.monotonic() - started
        order = [
            index[node] for r in web.fetched() if (node := (host_index[r.host], r.path)) in index
        ]
    return order, took


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hosts", type=int, default=1000)
    ap.add_argument("--pages", type=int, default=20_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cross-links", type=float, default=rankweb.CROSS_LINKS)
    ap.add_argument("--home-links", type=float, default=rankweb.HOME_LINKS)
    ap.add_argument("--delay", type=float, default=0.05)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--priority", action="append", default=None)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--nodes", type=int, default=1, help="nodes sharing a Redis (1: embedded)")
    ap.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="another setting for every headway run (repeatable)",
    )
    args = ap.parse_args(argv)
    extra: dict[str, object] = {}
    for item in args.set:
        key, _, value = item.partition("=")
        extra[key] = value
    spec = rankweb.ranked_web(
        args.hosts,
        args.pages,
        args.seed,
        cross_links=args.cross_links,
        home_links=args.home_links,
    )
    g = rankweb.page_graph(spec)
    rank = rankweb.pagerank(g)
    budget = len(g.pages) // 5
    print(
        f"web: {spec.hosts} hosts, {len(g.pages)} pages ({len(g.farm)} in the link farm), "
        f"{sum(map(len, g.links))} links; crawl limited to {budget} pages (20%), "
        f"measured over the first {len(g.pages) // 10} (10%)"
    )
    print("\n| order | PageRank in the first 10% of pages | hosts | home pages | link farm |")
    print("| --- | --- | --- | --- | --- |")
    for priority in args.priority or ["quality"]:
        for run in range(args.runs):
            order, took = asyncio.run(
                crawl_order(
                    spec,
                    g,
                    priority=priority,
                    delay=args.delay,
                    concurrency=args.concurrency,
                    extra=extra,
                    nodes=args.nodes,
                )
            )
            nodes = f", {args.nodes} nodes" if args.nodes > 1 else ""
            label = f"headway --priority {priority} (run {run + 1}{nodes}, {took:.0f} s)"
            print(_row(label, order, g, rank), flush=True)
    print(_row("breadth-first from the seeds (offline)", rankweb.bfs_order(g, budget), g, rank))
    print(_row("OPIC (offline)", rankweb.opic_order(g, budget), g, rank))
    print(_row("random frontier (offline)", rankweb.random_order(g, budget), g, rank))
    print(
        _row(
            "omniscient: by true PageRank (offline)",
            rankweb.omniscient_order(g, rank, budget),
            g,
            rank,
        )
    )
    best = sorted(range(len(rank)), key=lambda i: -rank[i])
    print(_row("the top pages by PageRank, any order (bound)", best, g, rank))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
