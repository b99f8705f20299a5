"""What a node reads, checks or fixes when it opens a shared crawl: the shard count,
Bloom shape and shard TTL (fixed by whoever creates the crawl; later nodes read them),
the server's eviction policy and the crawl epoch (``epoch.py``)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from headway.frontier.bloom import _size as bloom_size
from headway.frontier.redis.epoch import check_eviction, open_epoch
from headway.frontier.redis.keys import CrawlKeys
from headway.frontier.store import FrontierLimits

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class CrawlShape:
    shards: int
    bloom_bits: int
    bloom_probes: int
    epoch: str


def open_crawl(
    client: Any, keys: CrawlKeys, limits: FrontierLimits, shards: int, shard_ttl: float, shown: str
) -> CrawlShape:
    """The crawl's shape, created with the crawl when it does not exist yet (the shard
    TTL is stored too: what ``headway status`` counts as live)."""
    check_eviction(client, shown)
    bits, probes = bloom_size(max(1, limits.bloom_capacity // shards), limits.bloom_error)
    pipe = client.pipeline(transaction=False)
    pipe.hsetnx(keys.meta, "shards", shards)
    pipe.hsetnx(keys.meta, "bloom_bits", bits)
    pipe.hsetnx(keys.meta, "bloom_probes", probes)
    pipe.hsetnx(keys.meta, "shard_ttl", repr(float(shard_ttl)))
    pipe.hmget(keys.meta, ["shards", "bloom_bits", "bloom_probes"])
    got = pipe.execute()[-1]
    have = int(got[0])
    if have != shards:
        log.info("crawl %s has %d shards (fixed at its creation)", keys.crawl, have)
    return CrawlShape(have, int(got[1]), int(got[2]), open_epoch(client, keys, have))
