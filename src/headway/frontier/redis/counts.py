"""The totals of a shared crawl, summed over its shards (the shard ``totals`` hashes and
the ready sets; see ``keys.py``). Read by the backend and by ``headway status``.

A node reads them every second (``RedisFrontier.counts``); so that this read does not
grow with the number of shards, each call reads a window of at most ``COUNTS_WINDOW``
shards in turn and sums them with the other shards' last readings. Such a sum may be a
few seconds old, which is harmless while it says URLs remain; a sum that says the
frontier is empty (the end of the crawl) is never trusted: every shard is then read
again until two full reads agree."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from headway.frontier.redis.keys import CrawlKeys
from headway.frontier.store import SHED_REASONS, FrontierCounts, counts_from_totals

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
    shed = {r: by_name[f"shed:{r}"] for r in SHED_REASONS}
    return counts_from_totals(by_name, shed, sums[-1])


def read_counts(client: Any, keys: CrawlKeys, shards: int) -> FrontierCounts:
    """The crawl's totals, summed over every shard (one pipeline)."""
    return sum_counts(read_shards(client, keys, range(shards)).values())


class RollingCounts:
    """One node's periodic reading of its crawl's totals (see the module docstring);
    ``retry`` runs a read through an outage (``RedisLink.retry``)."""

    def __init__(
        self, client: Any, keys: CrawlKeys, shards: int, retry: Callable[[Callable[[], Any]], Any]
    ) -> None:
        self._client = client
        self._keys = keys
        self._shards = shards
        self._retry = retry
        self.per_shard: dict[int, ShardTotals] = {}  # last reading of each shard
        self._next = 0  # the first shard of the next window

    def _read(self, shards: Sequence[int]) -> dict[int, ShardTotals]:
        got: dict[int, ShardTotals] = self._retry(
            lambda: read_shards(self._client, self._keys, shards)
        )
        return got

    def read(self) -> FrontierCounts:
        """The totals: the next window of shards read, the others as last read; when that
        says nothing is queued or leased, every shard read until two reads agree."""
        everything = range(self._shards)
        if len(self.per_shard) < self._shards:
            window: Sequence[int] = everything
        else:
            first = self._next
            window = [(first + i) % self._shards for i in range(min(COUNTS_WINDOW, self._shards))]
            self._next = (first + len(window)) % self._shards
        self.per_shard.update(self._read(window))
        counts = sum_counts(self.per_shard.values())
        if counts.queued or counts.leased:
            return counts
        raw = self._read(everything)
        for _ in range(10):
            again = self._read(everything)
            if again == raw:
                break
            raw = again
        self.per_shard = raw
        return sum_counts(raw.values())

    def queued(self) -> dict[int, int]:
        """The queued total of each shard as last read."""
        return {s: row[0] for s, row in self.per_shard.items()}
