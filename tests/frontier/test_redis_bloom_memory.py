"""The Redis frontier's Bloom bitmap is written whole at its size on a shard's first
admission: grown bit by bit, Redis doubles a string as it grows and a shard's bitmap took
up to twice its size (benchmarks/bench_redis_bloom.py measures it)."""

from __future__ import annotations

import redis

from headway.frontier.redis import RedisFrontier
from tests.frontier.conftest import TEST_LIMITS, entry
from tests.support.redisproc import RedisServer


def test_a_shards_bitmap_is_allocated_once_at_its_size(redis_server: RedisServer) -> None:
    store = RedisFrontier(redis_server.url, "bloom-size", "n1", TEST_LIMITS, shards=8)
    client = redis.Redis(port=redis_server.port, decode_responses=True)
    try:
        store.add([entry("http://a.test/one")], now=0)
        bits = int(client.hget(store.keys.meta, "bloom_bits") or 0)
        key = store.keys.shard(store.shard_of("a.test"), "bloom")
        # one URL sets a few bits anywhere in the bitmap: the whole of it is there
        assert client.strlen(key) == bits // 8
        store.add([entry(f"http://a.test/{i}") for i in range(2000)], now=0)
        assert client.strlen(key) == bits // 8
        # what the allocator gives it: the size, at most rounded up to its size class
        assert int(client.memory_usage(key) or 0) <= bits // 8 * 1.25 + 1024
        assert store.add([entry("http://a.test/one")], now=0).duplicates == 1
    finally:
        store.close()
        client.close()
