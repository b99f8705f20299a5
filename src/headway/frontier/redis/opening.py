"""What a node reads, checks or fixes when it opens a shared crawl: the shard count,
key layout, seen buckets and shard TTL (fixed by whoever creates the crawl; later nodes
read them), the server's eviction policy and the crawl epoch (``epoch.py``).

A crawl created by an earlier version of headway (no ``layout`` in its meta hash: a
Bloom bitmap and one seen set per shard, JSON records in a hash and a shard-wide queue)
is refused with one line: this version cannot go on with it without rebuilding every
shard, and running both layouts in one crawl would let one node admit again what the
other saw. Finish such a crawl with the version that started it."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from headway.errors import StoreError
from headway.frontier.redis.epoch import check_eviction, open_epoch
from headway.frontier.redis.keys import LAYOUT, CrawlKeys, seen_bits_for
from headway.frontier.store import FrontierLimits

log = logging.getLogger(__name__)

# Creates the crawl's meta hash whole, or reads the one there (one key: atomic, and
# routed by that key on a cluster). Returns {created, shards, layout, seen_bits}.
_CREATE = """
local created = redis.call('HSETNX', KEYS[1], 'shards', ARGV[1])
if created == 1 then
  redis.call('HSET', KEYS[1], 'layout', ARGV[2], 'seen_bits', ARGV[3], 'shard_ttl', ARGV[4])
end
local got = redis.call('HMGET', KEYS[1], 'shards', 'layout', 'seen_bits')
return {created, got[1], got[2] or '', got[3] or ''}
"""


@dataclass(frozen=True, slots=True)
class CrawlShape:
    shards: int
    seen_bits: int
    epoch: str


def open_crawl(
    client: Any, keys: CrawlKeys, limits: FrontierLimits, shards: int, shard_ttl: float, shown: str
) -> CrawlShape:
    """The crawl's shape, created with the crawl when it does not exist yet (the shard
    TTL is stored too: what ``headway status`` counts as live)."""
    check_eviction(client, shown)
    bits = seen_bits_for(limits.bloom_capacity, shards)
    _, have, layout, seen_bits = client.eval(
        _CREATE, 1, keys.meta, shards, LAYOUT, bits, repr(float(shard_ttl))
    )
    if str(layout) != str(LAYOUT):
        made_by = "an earlier version of headway" if not layout else f"layout {layout}"
        raise StoreError(
            f"crawl {keys.crawl!r} in {shown} was created by {made_by}, whose Redis key"
            f" layout this version (layout {LAYOUT}) cannot go on with: finish it with the"
            " version that started it, or start afresh under a new --crawl-id"
        )
    have = int(have)
    if have != shards:
        log.info("crawl %s has %d shards (fixed at its creation)", keys.crawl, have)
    return CrawlShape(have, int(seen_bits), open_epoch(client, keys, have))
