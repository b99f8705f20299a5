"""Benchmark of the Redis frontier: memory per seen and per queued URL, Redis commands,
network bytes and Redis CPU per discovered URL and per settled page.

Starts its own redis-server on a free loopback port. Phase 1 admits ``--urls`` URLs over
``--hosts`` hosts (batches of ``--batch``; 500 is what a node's pages give, larger
batches fill 10 million URLs in minutes: the memory figures do not depend on it); phase 2
leases and settles ``--pages`` pages the way a node does (ready hosts, a batch lease,
completions in batches of 50 carrying ``--links`` discovered links each, 1 in
``--new-every`` of them new, 5 by default); phase 3 marks every URL seen but not queued
(drops all queued URLs) to separate seen memory from queued memory. Figures come from
INFO (commandstats, stats, cpu, memory) deltas.

The crawl's expected size (``--bloom-capacity``, which sizes the seen buckets) is
``--urls``. Usage: ``python benchmarks/bench_redis.py [--urls N] [--batch N] [--pages N]
[--shards S]``; at 10 million URLs: ``--urls 10000000 --batch 5000 --hosts 20000``.
"""

from __future__ import annotations

import argparse
import hashlib
import tempfile
import time
from pathlib import Path
from typing import Any

import checkout_path  # noqa: F401  (tests/support on sys.path)
import redis
from tests.support.redisproc import RedisServer

from headway.frontier.redis import RedisFrontier
from headway.frontier.store import Completion, FrontierLimits, Settle, UrlEntry


def fp_of(url: str) -> int:
    return int.from_bytes(hashlib.blake2b(url.encode(), digest_size=8).digest(), "big", signed=True)


def make(i: int, hosts: int, salt: str = "") -> UrlEntry:
    h = (i // 500 * 7919) % hosts if i % 5 else (i // 5) % hosts
    host = f"host{h}.example"
    url = f"https://{host}/section/{i // hosts}/page-{i}{salt}.html"
    return UrlEntry(url=url, host=host, depth=1 + i % 4, priority=i % 7, fp=fp_of(url))


def snapshot(client: Any) -> dict[str, float]:
    info = client.info("all")
    calls = sum(v["calls"] for k, v in info.items() if k.startswith("cmdstat_"))
    return {
        "calls": calls,
        "net": info["total_net_input_bytes"] + info["total_net_output_bytes"],
        "cpu": info["used_cpu_sys"] + info["used_cpu_user"],
        "mem": info["used_memory"],
    }


def commandstats(client: Any) -> dict[str, int]:
    return {k: int(v["calls"]) for k, v in client.info("commandstats").items()}


def by_command(before: dict[str, int], client: Any, per: int) -> str:
    """The commands run since ``before``, per ``per``, the most frequent first."""
    after = commandstats(client)
    diff = {k.removeprefix("cmdstat_"): after[k] - before.get(k, 0) for k in after}
    top = sorted(((n, k) for k, n in diff.items() if n), reverse=True)[:10]
    return ", ".join(f"{k} {n / per:.2f}" for n, k in top)


def delta(a: dict[str, float], b: dict[str, float]) -> dict[str, float]:
    return {k: b[k] - a[k] for k in a}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--urls", type=int, default=200_000)
    ap.add_argument("--hosts", type=int, default=2_000)
    ap.add_argument("--pages", type=int, default=20_000)
    ap.add_argument("--links", type=int, default=50)
    ap.add_argument("--new-every", type=int, default=5, help="1 link in this many is new")
    ap.add_argument("--shards", type=int, default=64)
    ap.add_argument("--batch", type=int, default=500)
    ap.add_argument(
        "--max-queued", type=int, default=0, help="the frontier's cap (default: none reached)"
    )
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-redis-") as tmp, RedisServer(Path(tmp)) as srv:
        client = redis.Redis(port=srv.port)
        cap = args.max_queued or 2 * args.urls + 10**6
        limits = FrontierLimits(
            bloom_capacity=max(args.urls, 1000), host_budget=10**9, max_queued=cap
        )
        store = RedisFrontier(
            srv.url, "bench", "node-1", limits, shards=args.shards, handover_gap=0.0
        )
        base = snapshot(client)
        t0 = time.perf_counter()
        for start in range(0, args.urls, args.batch):
            end = min(args.urls, start + args.batch)
            store.add([make(i, args.hosts) for i in range(start, end)], now=0.0)
        secs = time.perf_counter() - t0
        d = delta(base, snapshot(client))
        n = args.urls
        print(
            f"admit {n:,} URLs ({args.shards} shards): {n / secs:,.0f} URLs/s;"
            f" per URL: {d['calls'] / n:.3f} commands, {d['net'] / n:.0f} bytes,"
            f" {d['mem'] / n:.0f} bytes of Redis memory (seen + queued);"
            f" Redis CPU {d['cpu'] / n * 1e6:.1f} us"
        )

        base = snapshot(client)
        cmd_base = commandstats(client)
        t0 = time.perf_counter()
        settled = new_links = 0
        now = 1.0
        salt = 0
        while settled < args.pages:
            hosts = store.ready_hosts(now, 200)
            if not hosts:
                now += 1.0
                continue
            leased = store.lease_many([(h, 1) for h, _ in hosts], now, 60.0)
            for h, _ in hosts:
                store.set_host_ready_at(h, now + 1.0)
            for i in range(0, len(leased), 50):
                part = leased[i : i + 50]
                links = []
                for j in range(len(part) * args.links):
                    if j % args.new_every == 0:
                        salt += 1
                        links.append(make(salt, args.hosts, salt=f"-new{salt}"))
                    else:
                        links.append(make((salt * 31 + j) % n, args.hosts))
                new_links += sum(
                    1 for j in range(len(part) * args.links) if j % args.new_every == 0
                )
                store.complete([Completion(u.id, Settle.DONE) for u in part], links, now)
            settled += len(leased)
            now += 1.0
        secs = time.perf_counter() - t0
        d = delta(base, snapshot(client))
        found = settled * args.links
        print(
            f"settle {settled:,} pages with {args.links} links each ({new_links:,} new):"
            f" {settled / secs:,.0f} pages/s; per page: {d['calls'] / settled:.2f} commands,"
            f" {d['net'] / settled:,.0f} bytes; per discovered link:"
            f" {d['calls'] / found:.3f} commands, {d['net'] / found:.0f} bytes;"
            f" Redis CPU per 1,000 pages: {d['cpu'] / settled * 1000:.2f} s"
            f" ({d['cpu'] / found * 1e6:.1f} us per discovered link)"
        )
        print("commands per discovered link: " + by_command(cmd_base, client, found))

        counts = store.counts()
        before = snapshot(client)
        for h in range(args.hosts):
            store.drop_host(f"host{h}.example", "bench")
        client.execute_command("MEMORY", "PURGE")
        after = snapshot(client)
        queued_bytes = before["mem"] - after["mem"]
        print(
            f"memory: {counts.seen:,} seen, {counts.queued:,} queued URLs;"
            f" per queued URL {queued_bytes / max(1, counts.queued):.0f} bytes;"
            f" per seen-only URL {(after['mem'] - base_mem(client)) / counts.seen:.0f} bytes"
            f" (used_memory {after['mem'] / 2**20:.1f} MiB)"
        )
        store.close()


def base_mem(client: Any) -> int:
    """used_memory of an empty server (measured the same way) for the seen-only figure."""
    return int(client.info("memory")["used_memory_startup"])


if __name__ == "__main__":
    main()
