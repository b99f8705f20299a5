"""The shared frontier backend on Redis / Redis Cluster (frontier stage, distributed mode):
the key layout (``keys``), store URLs and scripts (``connect``), shard leasing
(``shards``), the settle and lease script calls (``calls``) and the ``FrontierStore``
implementation (``backend``). ``BACKEND`` is what
``headway.frontier.backends`` finds for ``redis://``, ``rediss://`` and
``redis+cluster://`` stores."""

from __future__ import annotations

from headway.frontier.redisclient import require_client

# Every way into this package passes here first: an unusable redis-py is one StoreError
# naming the version needed, before any module below imports it.
require_client()

from headway.errors import ConfigError, HeadwayError  # noqa: E402
from headway.frontier.backends import StoreTarget  # noqa: E402
from headway.frontier.redis.backend import RedisFrontier  # noqa: E402
from headway.frontier.redis.connect import connect  # noqa: E402
from headway.frontier.redis.counts import read_counts  # noqa: E402
from headway.frontier.redis.keys import CrawlKeys  # noqa: E402
from headway.frontier.store import FrontierCounts  # noqa: E402
from headway.frontier.storeurl import (  # noqa: E402
    StoreUrl,
    is_redis_url,
    mask_store_url,
    parse_store_url,
)


def _crawl_id(target: StoreTarget) -> str:
    crawl = target.shared.crawl_id
    if crawl is None:
        raise ConfigError("distributed.crawl_id", "a shared crawl needs --crawl-id NAME")
    return crawl


class RedisBackend:
    """Opens a node's view of a shared crawl; reads a shared crawl's totals."""

    def check(self, store: str) -> None:
        try:
            parse_store_url(store)
        except HeadwayError as exc:
            raise ConfigError("frontier.store", str(exc)) from None

    def open(self, target: StoreTarget) -> RedisFrontier:
        shared = target.shared
        return RedisFrontier(
            target.store,
            _crawl_id(target),
            target.node_id,
            target.limits,
            shards=shared.shards,
            shard_ttl=shared.shard_ttl,
            handover_gap=shared.handover_gap,
            outage_limit=shared.outage_limit,
        )

    def read_counts(self, target: StoreTarget) -> FrontierCounts | None:
        from headway.frontier.redis.status import read_crawl_status

        return read_crawl_status(target.store, _crawl_id(target)).frontier

    def shown(self, store: str) -> str:
        return parse_store_url(store).masked()


BACKEND = RedisBackend()

__all__ = [
    "BACKEND",
    "CrawlKeys",
    "RedisFrontier",
    "StoreUrl",
    "connect",
    "is_redis_url",
    "mask_store_url",
    "parse_store_url",
    "read_counts",
]
