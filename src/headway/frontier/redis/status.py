"""What ``headway status --store URL --crawl-id ID`` reads: a shared crawl as a whole and
one row per live node, from what the nodes keep and publish in Redis. Read-only: it
holds no shard and registers no node."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import redis

from headway.errors import StoreError
from headway.frontier.redis.connect import connect, parse_store_url
from headway.frontier.redis.counts import read_counts
from headway.frontier.redis.keys import CrawlKeys
from headway.frontier.store import FrontierCounts


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


def read_crawl_status(store: str, crawl_id: str, *, live_within: float = 60.0) -> CrawlStatus:
    """The crawl's status; ``StoreError`` when Redis is unreachable or the crawl unknown."""
    url = parse_store_url(store)
    keys = CrawlKeys(crawl_id)
    client: Any = connect(url)
    try:
        shards_text = client.hget(keys.meta, "shards")
        if shards_text is None:
            raise StoreError(f"no crawl {crawl_id!r} in {url.masked()}")
        shards = int(shards_text)
        counts = read_counts(client, keys, shards)
        now = time.time()
        beats = client.zrangebyscore(keys.nodes, now - live_within, "+inf", withscores=True)
        pipe = client.pipeline(transaction=False)
        for s in range(shards):
            pipe.get(keys.shard(s, "owner"))
        owners = pipe.execute()
        pipe = client.pipeline(transaction=False)
        for node, _ in beats:
            pipe.get(keys.node(node))
        published = pipe.execute() if beats else []
    except redis.RedisError as exc:
        raise StoreError(f"cannot read {url.masked()}: {exc}") from exc
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
        crawl_id=crawl_id,
        shards=shards,
        frontier=counts,
        nodes=tuple(rows),
        unowned_shards=sum(1 for o in owners if o is None),
    )
