"""The totals of a shared crawl, summed over its shards (the shard ``totals`` hashes and
the ready sets; see ``keys.py``). Read by the backend and by ``headway status``."""

from __future__ import annotations

from typing import Any

from headway.frontier.redis.keys import CrawlKeys
from headway.frontier.store import SHED_REASONS, FrontierCounts

TOTALS = (
    "queued",
    "leased",
    "done",
    "failed",
    "seen",
    "fetched",
    "parked",
    *(f"shed:{r}" for r in SHED_REASONS),
)


def read_counts(client: Any, keys: CrawlKeys, shards: int) -> FrontierCounts:
    """The crawl's totals, summed over its shards (one pipeline)."""
    return read_counts_raw(client, keys, shards)[0]


def read_counts_raw(client: Any, keys: CrawlKeys, shards: int) -> tuple[FrontierCounts, Any]:
    """The crawl's totals and the raw per-shard replies they were summed from."""
    pipe = client.pipeline(transaction=False)
    for s in range(shards):
        pipe.hmget(keys.shard(s, "totals"), list(TOTALS))
        pipe.zcard(keys.shard(s, "ready"))
    replies = pipe.execute()
    sums = dict.fromkeys(TOTALS, 0)
    hosts_queued = 0
    for i in range(0, len(replies), 2):
        for name, v in zip(TOTALS, replies[i], strict=True):
            sums[name] += int(v or 0)
        hosts_queued += int(replies[i + 1])
    counts = FrontierCounts(
        queued=sums["queued"],
        leased=sums["leased"],
        done=sums["done"],
        failed=sums["failed"],
        seen=sums["seen"],
        hosts_queued=hosts_queued,
        shed={r: sums[f"shed:{r}"] for r in SHED_REASONS},
        fetched=sums["fetched"],
        revisits_parked=sums["parked"],
    )
    return counts, replies
