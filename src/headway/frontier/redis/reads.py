"""Read pipelines of the Redis frontier over a node's shards (see ``keys.py``): ready
hosts, the next ready time, expired and own leases, the lease heartbeat's extension and
the hosts of URLs from their records.
Each function is one pipeline, meant to be run through ``RedisLink.retry``."""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from typing import Any

from headway.frontier.redis.keys import CrawlKeys, member


def ready_hosts(
    client: Any, keys: CrawlKeys, shards: Sequence[int], now: float, num: int
) -> list[tuple[float, str]]:
    """Up to ``num`` hosts ready at ``now`` per shard, as (ready time, host), soonest first."""
    pipe = client.pipeline(transaction=False)
    for s in shards:
        pipe.zrangebyscore(keys.shard(s, "ready"), "-inf", now, start=0, num=num, withscores=True)
    found = [(score, host) for rows in pipe.execute() for host, score in rows]
    found.sort()
    return found


def next_ready_time(
    client: Any, keys: CrawlKeys, shards: Sequence[int], exclude: Collection[str]
) -> float | None:
    pipe = client.pipeline(transaction=False)
    for s in shards:
        pipe.zrange(keys.shard(s, "ready"), 0, len(exclude), withscores=True)
    best: float | None = None
    for rows in pipe.execute():
        for host, score in rows:
            if host not in exclude:
                best = score if best is None else min(best, score)
                break
    return best


def expired_leases(
    client: Any, keys: CrawlKeys, shards: int, now: float, limit: int
) -> list[tuple[int, str]]:
    """(shard, lease member) of up to ``limit`` leases that expired before ``now``."""
    pipe = client.pipeline(transaction=False)
    for s in range(shards):
        pipe.zrangebyscore(keys.shard(s, "leases"), "-inf", f"({now!r}", start=0, num=limit)
    return [(s, m) for s, rows in enumerate(pipe.execute()) for m in rows][:limit]


def own_leases(client: Any, keys: CrawlKeys, shards: int, node: str) -> list[tuple[int, str]]:
    """(shard, lease member) of every lease of ``node``."""
    pipe = client.pipeline(transaction=False)
    for s in range(shards):
        pipe.zrange(keys.shard(s, "leases"), 0, -1)
    suffix = "|" + node
    return [(s, m) for s, rows in enumerate(pipe.execute()) for m in rows if m.endswith(suffix)]


def extend_leases(
    client: Any, keys: CrawlKeys, shards: int, node: str, ids: Sequence[int], expires: float
) -> int:
    """Move the expiry of ``node``'s leases of ``ids``; how many were moved. ZADD XX: only
    a member that exists (this node's lease) gets the new score; a lease reclaimed or
    taken by another node has another member and stays as it is."""
    by_shard: dict[int, dict[str, float]] = {}
    for i in ids:
        by_shard.setdefault(i % shards, {})[f"{member(i)}|{node}"] = expires
    pipe = client.pipeline(transaction=False)
    for s, members in by_shard.items():
        pipe.zadd(keys.shard(s, "leases"), members, xx=True, ch=True)
    return sum(int(n) for n in pipe.execute())


def hosts_of(client: Any, keys: CrawlKeys, shards: int, ids: Sequence[int]) -> dict[int, str]:
    """The host of each of ``ids`` from its stored record (none for an id without one)."""
    if not ids:
        return {}
    pipe = client.pipeline(transaction=False)
    for i in ids:
        pipe.hget(keys.shard(i % shards, "urls"), member(i))
    return {
        i: json.loads(rec)[1] for i, rec in zip(ids, pipe.execute(), strict=True) if rec is not None
    }
