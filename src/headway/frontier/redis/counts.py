"""The totals of a shared crawl, summed over its shards (the shard ``totals`` hashes and
the ready sets; see ``keys.py``). Read by the backend and by ``headway status``.

A node reads them every second (``RedisFrontier.counts``); so that this read does not
grow with the number of shards, each call reads a window of at most ``COUNTS_WINDOW``
shards in turn and sums them with the other shards' last readings. Such a sum may be a
few seconds old, which is harmless while it says URLs remain; a sum that says the
frontier is empty (the end of the crawl) is never trusted: every shard is then read
again until two full reads agree."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
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
#: Shards whose totals one periodic read covers: a node reads at most twice as many
#: keys a second, whatever the crawl's shard count (every shard in turn is read once
#: every ``shards / COUNTS_WINDOW`` calls).
COUNTS_WINDOW = 64

#: One shard's ``TOTALS`` values, then the size of its ready set.
ShardTotals = tuple[int, ...]


def read_shards(client: Any, keys: CrawlKeys, shards: Sequence[int]) -> dict[int, ShardTotals]:
    """The totals of the given shards (one pipeline)."""
    pipe = client.pipeline(transaction=False)
    for s in shards:
        pipe.hmget(keys.shard(s, "totals"), list(TOTALS))
        pipe.zcard(keys.shard(s, "ready"))
    replies = pipe.execute()
    return {
        s: (*(int(v or 0) for v in replies[2 * i]), int(replies[2 * i + 1]))
        for i, s in enumerate(shards)
    }


def sum_counts(per_shard: Iterable[ShardTotals]) -> FrontierCounts:
    sums = [0] * (len(TOTALS) + 1)
    for row in per_shard:
        for i, v in enumerate(row):
            sums[i] += v
    by_name = dict(zip(TOTALS, sums, strict=False))
    return FrontierCounts(
        queued=by_name["queued"],
        leased=by_name["leased"],
        done=by_name["done"],
        failed=by_name["failed"],
        seen=by_name["seen"],
        hosts_queued=sums[-1],
        shed={r: by_name[f"shed:{r}"] for r in SHED_REASONS},
        fetched=by_name["fetched"],
        revisits_parked=by_name["parked"],
    )


def read_counts(client: Any, keys: CrawlKeys, shards: int) -> FrontierCounts:
    """The crawl's totals, summed over every shard (one pipeline)."""
    return sum_counts(read_shards(client, keys, range(shards)).values())
