"""Redis memory of the shared frontier. The seen set: fingerprints in small per-shard
buckets that Redis keeps as intsets (8 bytes a fingerprint), exact (a new URL is never
taken for a seen one). A queued URL: one string (id and record) in its host's level list,
nothing else per URL. A crawl made with the previous layout is refused with one line."""

from __future__ import annotations

import itertools

import pytest
import redis

from headway.errors import StoreError
from headway.frontier.redis import RedisFrontier
from headway.frontier.redis.keys import seen_bits_for, seen_bucket
from headway.frontier.store import FrontierLimits
from tests.frontier.conftest import entry
from tests.support.redisproc import RedisServer

SHARDS = 4
_ids = itertools.count()


def test_seen_buckets_are_intsets_that_hold_every_fingerprint(redis_server: RedisServer) -> None:
    urls = 4000
    limits = FrontierLimits(bloom_capacity=urls, host_budget=10**6)
    store = RedisFrontier(
        redis_server.url, f"seen{next(_ids)}", "n1", limits, shards=SHARDS, handover_gap=0.0
    )
    client = redis.Redis(port=redis_server.port, decode_responses=True)
    try:
        batch = [entry(f"http://h{i % 7}.test/p{i}") for i in range(urls)]
        assert store.add(batch, now=0).added == urls
        bits = seen_bits_for(urls, SHARDS)
        assert bits > 0
        keys = client.keys(f"hw:{{{store.keys.crawl}:*}}:sn:*")
        assert sum(int(client.scard(k)) for k in keys) == urls == store.counts().seen
        assert {client.object("encoding", k) for k in keys} == {"intset"}
        # each fingerprint in the bucket its top bits name, as the integer itself
        e = batch[0]
        key = store.keys.seen(store.shard_of(e.host), seen_bucket(e.fp, bits))
        assert client.sismember(key, str(e.fp))
        used = sum(int(client.memory_usage(k) or 0) for k in keys)
        assert used / urls < 24  # the target per seen URL, key overhead included
        # exact: every URL again is a duplicate, every other URL is new
        assert store.add(batch, now=0).duplicates == urls
        fresh = [entry(f"http://h{i % 7}.test/q{i}") for i in range(500)]
        assert store.add(fresh, now=0).added == 500
    finally:
        store.close()
        client.close()


def test_a_crawl_of_the_previous_layout_is_refused_with_one_line(
    redis_server: RedisServer,
) -> None:
    crawl = f"old-layout{next(_ids)}"
    client = redis.Redis(port=redis_server.port, decode_responses=True)
    try:
        # the meta hash as the previous version wrote it (Bloom shape, no layout)
        meta = f"hw:{{{crawl}}}:meta"
        client.hset(meta, mapping={"shards": SHARDS, "bloom_bits": 8192, "bloom_probes": 7})
        with pytest.raises(StoreError) as err:
            RedisFrontier(redis_server.url, crawl, "n1", shards=SHARDS)
        message = str(err.value)
        assert "\n" not in message
        assert "earlier version" in message and "--crawl-id" in message
        assert client.hget(meta, "layout") is None  # left as it was
    finally:
        client.close()


def test_a_queued_url_costs_its_record_and_a_few_bytes(redis_server: RedisServer) -> None:
    urls = 3000
    limits = FrontierLimits(bloom_capacity=urls, host_budget=10**6)
    store = RedisFrontier(
        redis_server.url, f"queued{next(_ids)}", "n1", limits, shards=SHARDS, handover_gap=0.0
    )
    client = redis.Redis(port=redis_server.port, decode_responses=True)
    try:
        batch = [
            entry(f"http://big.test/section/{i % 40}/page-{i}.html", i % 3) for i in range(urls)
        ]
        assert store.add(batch, now=0).added == urls
        shard_keys = client.keys(f"hw:{{{store.keys.crawl}:*}}:*")
        queue = [k for k in shard_keys if ":sn:" not in k and ":epoch:" not in k]
        used = sum(int(client.memory_usage(k) or 0) for k in queue)
        record = len(batch[0].url) + 60  # its JSON record and id, about
        assert used / urls < record + 40, (used / urls, record)
    finally:
        store.close()
        client.close()
