"""The shared frontier backend on Redis / Redis Cluster (frontier stage, distributed mode):
the key layout (``keys``), store URLs and scripts (``connect``), shard leasing
(``shards``) and the ``FrontierStore`` implementation (``backend``)."""

from headway.frontier.redis.backend import RedisFrontier
from headway.frontier.redis.connect import StoreUrl, is_redis_url, mask_store_url, parse_store_url

__all__ = ["RedisFrontier", "StoreUrl", "is_redis_url", "mask_store_url", "parse_store_url"]
