"""Benchmark of the SQLite frontier as the runtime drives it.

Adds 1,000,000 URLs over 10,000 hosts in batches of 500, then leases and completes
100,000 (2 URLs per ready host, then a politeness gap; each completion batch of 50
carries 100 already-seen links), then
reopens the store to time the Bloom rebuild. Prints URLs/s for add, leases+completions/s,
DB size and peak RSS. Usage: ``python benchmarks/bench_frontier.py [--urls N] [--dir D]``.
"""

from __future__ import annotations

import argparse
import hashlib
import resource
import tempfile
import time
from pathlib import Path

from headway.frontier.sqlite import SqliteFrontier
from headway.frontier.store import Completion, FrontierLimits, Settle, UrlEntry


def fp_of(url: str) -> int:
    return int.from_bytes(hashlib.blake2b(url.encode(), digest_size=8).digest(), "big", signed=True)


def make(i: int, hosts: int) -> UrlEntry:
    """URL ``i``; like a page's links, 4 in 5 of a batch of 500 share one host."""
    h = (i // 500 * 7919) % hosts if i % 5 else (i // 5) % hosts
    host = f"host{h}.example"
    url = f"https://{host}/section/{i // hosts}/page-{i}.html"
    return UrlEntry(url=url, host=host, depth=1 + i % 4, priority=i % 7, fp=fp_of(url))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--urls", type=int, default=1_000_000)
    ap.add_argument("--hosts", type=int, default=10_000)
    ap.add_argument("--batch", type=int, default=500)
    ap.add_argument("--settle", type=int, default=100_000)
    ap.add_argument("--dir", type=Path, default=None)
    args = ap.parse_args()
    where = args.dir or Path(tempfile.mkdtemp(prefix="bench-frontier-"))
    db = where / "frontier.db"
    limits = FrontierLimits(bloom_capacity=max(args.urls, 1_000))
    store = SqliteFrontier(db, limits, node_id="bench")

    t0, c0 = time.perf_counter(), time.process_time()
    for start in range(0, args.urls, args.batch):
        store.add([make(i, args.hosts) for i in range(start, start + args.batch)], now=0.0)
    add_s, add_cpu = time.perf_counter() - t0, time.process_time() - c0
    print(
        f"add: {args.urls:,} URLs in {add_s:.1f} s = {args.urls / add_s:,.0f} URLs/s"
        f" ({args.urls / add_cpu:,.0f} URLs per CPU-second)"
    )

    # lease/complete as the scheduler does: pick ready hosts, lease a few URLs each,
    # complete them in batches together with discovered links (here: already seen).
    settled = 0
    now = 1.0
    t0, c0 = time.perf_counter(), time.process_time()
    pending: list[Completion] = []
    seen_links = [make(i, args.hosts) for i in range(0, 100)]
    while settled < args.settle:
        hosts = store.ready_hosts(now, 100)
        for host, _ in hosts:
            for u in store.lease_many([(host, 2)], now, 60.0):
                pending.append(Completion(u.id, Settle.DONE))
            store.set_host_ready_at(host, now + 1.0)  # the politeness gap
            if len(pending) >= 50:
                store.complete(pending, seen_links, now)
                settled += len(pending)
                pending = []
        now += 1.0
    lc_s, lc_cpu = time.perf_counter() - t0, time.process_time() - c0
    print(
        f"lease+complete: {settled:,} in {lc_s:.1f} s = {settled / lc_s:,.0f} URLs/s"
        f" ({settled / lc_cpu:,.0f} per CPU-second)"
    )
    counts = store.counts()
    store.close()

    t0 = time.perf_counter()
    SqliteFrontier(db, limits, node_id="bench").close()
    reopen_s = time.perf_counter() - t0
    size = sum(p.stat().st_size for p in where.glob("frontier.db*"))
    rss_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"reopen (Bloom rebuild of {counts.seen:,} fingerprints): {reopen_s:.1f} s")
    print(f"counts: {counts}")
    print(f"db size: {size / 2**20:,.0f} MiB; peak RSS: {rss_kib / 1024:,.0f} MiB")


if __name__ == "__main__":
    main()
