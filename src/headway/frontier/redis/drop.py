"""Removing a shared crawl from its Redis: every key of the crawl (``keys.py``: the
crawl's ``{C}`` keys and every shard's ``{C:s}`` keys), and nothing of any other crawl.

Contract of ``drop_crawl``: the crawl's meta hash and every shard's epoch key go first,
so a node still running (``force``) finds its crawl lost and writes nothing more into a
frontier half removed (its scripts refuse without the epoch key); then every other key
of the crawl, found by ``SCAN`` on each server (every master of a cluster), is unlinked.
Keys a live node re-creates meanwhile (its heartbeat, its published statistics) are
swept again, up to ``SWEEPS`` times; what is left after that is counted, not hidden.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from headway.frontier.redis.counts import read_counts
from headway.frontier.redis.epoch import epoch_key_of
from headway.frontier.redis.keys import PREFIX, CrawlKeys
from headway.frontier.redis.status import DEFAULT_SHARD_TTL, live_node_ids
from headway.frontier.store import FrontierCounts

#: Rounds of scanning and unlinking before the keys left are reported.
SWEEPS = 3
#: Keys unlinked per pipeline round trip.
BATCH = 500


@dataclass(frozen=True, slots=True)
class CrawlInStore:
    """What a store holds of one shared crawl: its shards, totals and live nodes."""

    shards: int
    counts: FrontierCounts
    live_nodes: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Dropped:
    """What ``drop_crawl`` removed: ``keys`` unlinked, ``left`` still there at the end."""

    keys: int
    left: int


def inspect_crawl(client: Any, crawl_id: str) -> CrawlInStore | None:
    """The crawl as the store holds it, or None when it holds no such crawl. Live nodes:
    a heartbeat within the crawl's shard TTL (as ``headway status`` counts them)."""
    keys = CrawlKeys(crawl_id)
    shards, ttl = client.hmget(keys.meta, ["shards", "shard_ttl"])
    if shards is None:
        return None
    live = live_node_ids(client, crawl_id, time.time() - float(ttl or DEFAULT_SHARD_TTL))
    return CrawlInStore(int(shards), read_counts(client, keys, int(shards)), tuple(live))


def _patterns(crawl_id: str) -> tuple[str, str]:
    """SCAN patterns of the crawl's keys and its shards' (a crawl id has no ``:``, ``{``
    or ``}``, so no other crawl's keys match: ``news`` never matches ``news2``)."""
    return f"{PREFIX}:{{{crawl_id}}}:*", f"{PREFIX}:{{{crawl_id}:[0-9]*}}:*"


def _scan(client: Any, pattern: str) -> Iterator[str]:
    # a cluster client's scan_iter visits every master; a plain client its one server
    yield from client.scan_iter(match=pattern, count=1000)


def _unlink(client: Any, names: list[str]) -> int:
    removed = 0
    for start in range(0, len(names), BATCH):
        pipe = client.pipeline(transaction=False)
        for name in names[start : start + BATCH]:
            pipe.unlink(name)  # one key a command: a cluster routes each by its own slot
        removed += sum(int(n) for n in pipe.execute())
    return removed


def drop_crawl(client: Any, crawl_id: str, shards: int) -> Dropped:
    """Remove every key of the crawl (see the module contract)."""
    keys = CrawlKeys(crawl_id)
    token = client.hget(keys.meta, "epoch")
    first = [keys.meta]
    if token is not None:
        first += [epoch_key_of(keys.shard(s, "epoch"), str(token)) for s in range(shards)]
    removed = _unlink(client, first)
    left = 0
    for _ in range(SWEEPS):
        names = sorted({n for p in _patterns(crawl_id) for n in _scan(client, p)})
        if not names:
            left = 0
            break
        removed += _unlink(client, names)
        left = len(names)
    else:
        left = len({n for p in _patterns(crawl_id) for n in _scan(client, p)})
    return Dropped(keys=removed, left=left)
