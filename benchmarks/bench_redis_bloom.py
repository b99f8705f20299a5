"""Redis memory of the shared frontier's Bloom bitmaps: MEMORY USAGE of every shard's
bitmap (min, median, max) against the size it is meant to have, and their share of the
server's memory, after admitting ``--urls`` URLs over ``--hosts`` hosts with the
default ``--bloom-capacity`` and ``--shards``.

    python benchmarks/bench_redis_bloom.py --urls 32000

Starts its own redis-server on loopback and stops it."""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

import checkout_path  # noqa: F401  (tests/support on sys.path)
import redis
from tests.support.redisproc import RedisServer

from headway.frontier.redis import RedisFrontier
from headway.frontier.redis.keys import DEFAULT_SHARDS
from headway.frontier.store import FrontierLimits, UrlEntry
from headway.urls.fingerprint import fingerprint


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--urls", type=int, default=32_000)
    ap.add_argument("--hosts", type=int, default=2_000)
    ap.add_argument("--shards", type=int, default=DEFAULT_SHARDS)
    args = ap.parse_args()
    limits = FrontierLimits()
    with tempfile.TemporaryDirectory() as tmp, RedisServer(Path(tmp)) as server:
        store = RedisFrontier(server.url, "bloom", "n1", limits, shards=args.shards)
        client = redis.Redis(port=server.port, decode_responses=True)
        batch: list[UrlEntry] = []
        for i in range(args.urls):
            host = f"h{i % args.hosts}.test"
            url = f"http://{host}/p{i}"
            batch.append(UrlEntry(url=url, host=host, depth=1, priority=0, fp=fingerprint(url)))
            if len(batch) == 500:
                store.add(batch, now=0)
                batch = []
        if batch:
            store.add(batch, now=0)
        bits = int(client.hget(store.keys.meta, "bloom_bits") or 0)
        sizes = [
            int(client.memory_usage(store.keys.shard(s, "bloom")) or 0) for s in range(store.shards)
        ]
        used = int(client.info("memory")["used_memory"]) - int(
            client.info("memory")["used_memory_startup"]
        )
        print(
            f"{args.urls:,} URLs, {store.shards} shards, --bloom-capacity"
            f" {limits.bloom_capacity:,}: bitmap of {bits // 8 / 1024:.0f} KB per shard;"
            f" MEMORY USAGE min {min(sizes) / 1024:.0f} KB, median"
            f" {statistics.median(sizes) / 1024:.0f} KB, max {max(sizes) / 1024:.0f} KB;"
            f" all bitmaps {sum(sizes) / 2**20:.1f} MiB of {used / 2**20:.1f} MiB used"
        )
        store.close()
        client.close()


if __name__ == "__main__":
    main()
