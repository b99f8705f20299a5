"""What ``headway status --store URL --crawl-id ID`` reads: a shared crawl as a whole and
one row per live node, from what the nodes keep and publish in Redis. Read-only: it
holds no shard and registers no node."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import redis
from redis.exceptions import (
    ClusterDownError,
    MasterDownError,
    RedisClusterException,
    TryAgainError,
)

from headway.errors import StoreError
from headway.frontier.redis.connect import StoreUrl, connect, parse_store_url
from headway.frontier.redis.counts import read_counts
from headway.frontier.redis.keys import CrawlKeys
from headway.frontier.store import FrontierCounts

#: The shard TTL of a crawl that did not store its own (``--shard-ttl``'s default).
DEFAULT_SHARD_TTL = 10.0


@dataclass(frozen=True, slots=True)
class NodeRow:
    """One live node as it last published itself: ``record`` is the statistics record
    (JSON text, ``NodeStats`` of the node's version) it published with its heartbeat,
    None when it has published none yet."""

    node: str
    last_heartbeat: float
    shards_held: int
    record: str | None


@dataclass(frozen=True, slots=True)
class CrawlStatus:
    """A shared crawl: its store (password masked), shards, totals and live nodes."""

    store: str
    crawl_id: str
    shards: int
    frontier: FrontierCounts
    nodes: tuple[NodeRow, ...]
    unowned_shards: int


#: Seconds ``headway status`` waits for a store that does not answer, or a cluster that
#: says it is down, before it says so: a cluster failing over answers again within its
#: cluster-node-timeout (a few seconds).
STATUS_WAIT = 8.0
#: Errors worth waiting through (an authentication error is a ConnectionError too, but
#: it will not go away by waiting).
_TRANSIENT = (
    redis.ConnectionError,
    redis.TimeoutError,
    ClusterDownError,
    TryAgainError,
    MasterDownError,
    RedisClusterException,
)


def read_crawl_status(store: str, crawl_id: str, *, wait: float = STATUS_WAIT) -> CrawlStatus:
    """The crawl's status; ``StoreError`` (one line, the store's password masked) when
    Redis cannot be reached for ``wait`` seconds or the crawl is unknown."""
    url = parse_store_url(store)
    deadline = time.monotonic() + wait
    delay = 0.2
    while True:
        try:
            return _read(url, CrawlKeys(crawl_id))
        except (StoreError, redis.RedisError, RedisClusterException) as exc:
            # connect() reports an unreachable store as a StoreError caused by it
            cause = exc.__cause__ if isinstance(exc, StoreError) else exc
            if not isinstance(cause, _TRANSIENT) or isinstance(cause, redis.AuthenticationError):
                if isinstance(exc, StoreError):
                    raise
                raise StoreError(f"cannot read {url.masked()}: {exc}") from None
            if time.monotonic() + delay > deadline:
                down = isinstance(cause, (ClusterDownError, TryAgainError, MasterDownError))
                what = "is failing over or down" if down else "cannot be reached"
                raise StoreError(
                    f"Redis {url.masked()} {what} (waited {wait:.0f} s): {cause}"
                ) from None
            time.sleep(delay)
            delay = min(delay * 2, 2.0)


def _read(url: StoreUrl, keys: CrawlKeys) -> CrawlStatus:
    client: Any = connect(url, timeout=2.0)  # (a StoreError when unreachable)
    try:
        meta = client.hmget(keys.meta, ["shards", "shard_ttl"])
        if meta[0] is None:
            raise StoreError(f"no crawl {keys.crawl!r} in {url.masked()}")
        shards = int(meta[0])
        # live: seen within the shard TTL, as the nodes themselves count each other
        # (crawls created before the TTL was stored: the default, 10 s)
        ttl = float(meta[1] or DEFAULT_SHARD_TTL)
        counts = read_counts(client, keys, shards)
        now = time.time()
        beats = client.zrangebyscore(keys.nodes, now - ttl, "+inf", withscores=True)
        pipe = client.pipeline(transaction=False)
        for s in range(shards):
            pipe.get(keys.shard(s, "owner"))
        owners = pipe.execute()
        pipe = client.pipeline(transaction=False)
        for node, _ in beats:
            pipe.get(keys.node(node))
        published = pipe.execute() if beats else []
    finally:
        client.close()
    rows = [
        NodeRow(
            node=node,
            last_heartbeat=float(beat),
            shards_held=sum(1 for o in owners if o == node),
            record=text,
        )
        for (node, beat), text in zip(beats, published, strict=True)
    ]
    return CrawlStatus(
        store=url.masked(),
        crawl_id=keys.crawl,
        shards=shards,
        frontier=counts,
        nodes=tuple(rows),
        unowned_shards=sum(1 for o in owners if o is None),
    )


def live_node_ids(client: Any, crawl_id: str, since: float) -> list[str]:
    """The nodes of a shared crawl with a heartbeat at or after ``since`` (epoch seconds),
    read through ``client`` (a client of the store; Redis errors pass through)."""
    nodes = client.zrangebyscore(CrawlKeys(crawl_id).nodes, since, "+inf")
    return [n.decode() if isinstance(n, bytes) else str(n) for n in nodes]


def crawl_meta(client: Any, crawl_id: str) -> dict[str, str]:
    """The shared crawl's meta record, field by field (Redis errors pass through)."""
    meta = client.hgetall(CrawlKeys(crawl_id).meta)
    return {
        (k.decode() if isinstance(k, bytes) else str(k)): (
            v.decode() if isinstance(v, bytes) else str(v)
        )
        for k, v in meta.items()
    }
