"""The crawl epoch of the Redis frontier: a Redis that keeps running but loses the
crawl's keys (a flush, eviction, a failover to a replica without them) is noticed by
every script and by the heartbeat, nothing is written into the emptied store, and the
node is told what happened; a server that may evict keys is refused at start."""

from __future__ import annotations

import contextlib
import itertools
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from headway.errors import StoreError
from headway.frontier.redis import RedisFrontier
from headway.frontier.redis.epoch import (
    CrawlLostError,
    LossFacts,
    epoch_key_of,
    lost_message,
)
from headway.frontier.store import Completion, Settle
from tests.frontier.conftest import TEST_LIMITS, entry
from tests.support.redisproc import RedisCluster, RedisServer

SHARDS = 8
_ids = itertools.count()


@pytest.fixture(params=["redis", "redis-cluster"])
def server(request: pytest.FixtureRequest) -> RedisServer | RedisCluster:
    name = "redis_server" if request.param == "redis" else "redis_cluster"
    got: RedisServer | RedisCluster = request.getfixturevalue(name)
    return got


def _client(server: RedisServer | RedisCluster) -> Any:
    if isinstance(server, RedisCluster):
        host, port = server.servers[0].address.split(":")
        return redis.RedisCluster(host=host, port=int(port), decode_responses=True)
    return redis.Redis(port=server.port, decode_responses=True)


@pytest.fixture
def crawl(server: RedisServer | RedisCluster) -> Iterator[tuple[RedisFrontier, Any]]:
    store = RedisFrontier(
        server.url, f"ep{next(_ids)}", "n1", TEST_LIMITS, shards=SHARDS, handover_gap=0.0
    )
    client = _client(server)
    yield store, client
    with contextlib.suppress(CrawlLostError):
        store.close()
    client.close()


def _crawl_keys(client: Any, crawl: str) -> dict[str, Any]:
    """Every key of the crawl and its serialized value."""
    if isinstance(client, redis.RedisCluster):
        names = client.keys(f"hw:{{{crawl}*", target_nodes=redis.RedisCluster.PRIMARIES)
    else:
        names = client.keys(f"hw:{{{crawl}*")
    return {k: client.dump(k) for k in sorted(names) if ":owner" not in k}


def _drop_epoch_keys(client: Any, store: RedisFrontier) -> None:
    token = client.hget(store.keys.meta, "epoch")
    for s in range(store.shards):
        assert client.delete(epoch_key_of(store.keys.shard(s, "epoch"), token)) == 1


def _script_calls(store: RedisFrontier) -> list[tuple[str, list[str], list[Any]]]:
    """A real call of every script of the frontier, each of which would write."""
    host = "a.test"
    s = store.shard_of(host)
    k = store.keys
    admit, _ = store._admission.calls([entry("http://a.test/new")])
    lease_keys = k.shard_keys(s, "urls", "pq", "ready", "hosts", "leases", "totals", "owner")
    lease_keys += k.host_keys(s, [host])
    queued = store._client.zrange(k.queue(s, host), 0, 0)[0]
    leased = store._client.zrange(k.shard(s, "leases"), 0, 0)[0]
    return [
        *admit,
        ("lease", lease_keys, ["1", "100", "n1", 0, "", 1, host, 1]),
        store._settle_call(s, [(leased, host, "done", "0", "", "")]),
        ("set_ready", [*k.shard_keys(s, "ready", "hosts"), *k.host_pair(s, host)], [host, "9"]),
        (
            "drop_host",
            [*k.shard_keys(s, "urls", "pq", "ready", "totals"), *k.host_pair(s, host)],
            [host],
        ),
        (
            "evict",
            [
                *k.shard_keys(s, "urls", "pq", "ready", "hosts", "admitted", "totals"),
                *k.host_keys(s, [host]),
            ],
            [1, host, queued, 1],
        ),
        (
            "park",
            [
                *k.shard_keys(s, "urls", "pq", "ready", "hosts", "totals", "parked"),
                *k.host_keys(s, [host]),
            ],
            ["park", 1, host],
        ),
        ("shard", [k.shard(s, "owner")], ["acquire", "intruder", 60_000]),
        ("worst", [k.shard(s, "worst")], [5, k.queue(s, "")]),
    ]


def test_every_script_refuses_to_act_without_its_epoch_key(
    crawl: tuple[RedisFrontier, Any],
) -> None:
    store, client = crawl
    store.add([entry(f"http://a.test/{i}") for i in range(6)], now=0)
    assert store.lease_many([("a.test", 2)], now=0, lease_seconds=60)
    calls = _script_calls(store)
    _drop_epoch_keys(client, store)
    before = _crawl_keys(client, store.keys.crawl)
    for call in calls:
        with pytest.raises(redis.ResponseError, match=r"^HWLOST"):
            store._scripts.run_many([call])
        assert _crawl_keys(client, store.keys.crawl) == before, call[0]
    owner = client.get(store.keys.shard(store.shard_of("a.test"), "owner"))
    assert owner in (None, "n1")  # never taken by the refused acquire


def test_a_lost_crawl_is_noticed_by_a_call_and_then_nothing_is_written(
    crawl: tuple[RedisFrontier, Any],
) -> None:
    store, client = crawl
    store.add([entry(f"http://a.test/{i}") for i in range(6)], now=0)
    (first,) = store.lease_many([("a.test", 1)], now=0, lease_seconds=60)
    good = store.counts()
    _drop_epoch_keys(client, store)
    before = _crawl_keys(client, store.keys.crawl)
    done = store.complete([Completion(first.id, Settle.DONE)], [entry("http://b.test/x")], now=1)
    assert (done.added, done.duplicates) == (0, 0)
    assert store.crawl_lost is not None
    assert store.lease_many([("a.test", 5)], now=1, lease_seconds=60) == []
    assert store.add([entry("http://c.test/")], now=1).added == 0
    assert store.counts() == good  # the last counts, not an empty (finished) frontier
    assert _crawl_keys(client, store.keys.crawl) == before
    with pytest.raises(CrawlLostError, match="no longer holds crawl"):
        store.close()


def test_a_flushed_live_server_is_noticed_by_the_counts_and_the_heartbeat(
    tmp_path: Path,
) -> None:
    with RedisServer(tmp_path, appendonly=True) as server:
        store = RedisFrontier(server.url, "flushed", "n1", TEST_LIMITS, shards=4, handover_gap=0.0)
        try:
            store.add([entry("http://a.test/")], now=0)
            (leased,) = store.lease_many([("a.test", 1)], now=0, lease_seconds=60)
            store.complete([Completion(leased.id, Settle.DONE)], [], now=1)
            finished = store.counts()
            assert (finished.queued, finished.leased, finished.done) == (0, 0, 1)
            assert store.crawl_lost is None
            assert server.cli("FLUSHALL") == "OK"
            # an empty frontier after a flush reads like a finished one: it is checked
            store.counts()
            assert store.crawl_lost is not None
            message = store.crawl_lost
            assert server.address in message and "'flushed'" in message
            assert "AOF was on" in message and "FLUSHALL" in message
            assert "--appendonly" not in message  # AOF was on: no advice to turn it on
            assert "fetches every page again" in message
        finally:
            with pytest.raises(CrawlLostError):
                store.close()
        other = RedisFrontier(server.url, "flushed2", "n1", TEST_LIMITS, shards=4)
        try:
            other.add([entry("http://a.test/")], now=0)
            server.cli("DEL", other.keys.meta)  # the crawl's own keys (one slot) gone
            other.heartbeat()
            assert other.crawl_lost is not None
            assert other.schedulable_shards() == frozenset()
        finally:
            with pytest.raises(CrawlLostError):
                other.close()


def test_a_node_starting_on_a_crawl_with_lost_shards_stops(tmp_path: Path) -> None:
    with RedisServer(tmp_path) as server:
        first = RedisFrontier(server.url, "partial", "n1", TEST_LIMITS, shards=4)
        first.close()
        client = redis.Redis(port=server.port, decode_responses=True)
        token = client.hget(first.keys.meta, "epoch")
        client.delete(epoch_key_of(first.keys.shard(2, "epoch"), token))
        with pytest.raises(CrawlLostError, match="lost the keys of 1 of its 4 shards"):
            RedisFrontier(server.url, "partial", "n2", TEST_LIMITS, shards=4)
        client.close()


def test_a_server_that_evicts_keys_is_refused(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with RedisServer(tmp_path) as server:
        server.cli("CONFIG", "SET", "maxmemory-policy", "allkeys-lru")
        with caplog.at_level(logging.WARNING):
            # no maxmemory: nothing is evicted yet, but it is said loudly
            RedisFrontier(server.url, "ev", "n1", TEST_LIMITS, shards=4).close()
        assert "maxmemory-policy allkeys-lru" in caplog.text
        server.cli("CONFIG", "SET", "maxmemory", "500mb")
        with pytest.raises(StoreError, match="maxmemory-policy noeviction"):
            RedisFrontier(server.url, "ev", "n1", TEST_LIMITS, shards=4)
        server.cli("CONFIG", "SET", "maxmemory-policy", "volatile-ttl")
        with pytest.raises(StoreError, match="evicts keys"):
            RedisFrontier(server.url, "ev", "n1", TEST_LIMITS, shards=4)
        server.cli("CONFIG", "SET", "maxmemory-policy", "noeviction")
        RedisFrontier(server.url, "ev", "n1", TEST_LIMITS, shards=4).close()


def test_the_lost_message_says_what_happened_and_what_to_do() -> None:
    store = "redis://:***@10.0.0.5:6379/0"
    restart_no_aof = lost_message(store, "news", LossFacts(True, False, 0, "noeviction"))
    assert "restarted with AOF off" in restart_no_aof
    assert "--appendonly yes" in restart_no_aof
    restart_aof = lost_message(store, "news", LossFacts(True, True, 0, "noeviction"))
    assert "AOF was on" in restart_aof and "--appendonly" not in restart_aof
    flushed = lost_message(store, "news", LossFacts(False, True, 0, "noeviction"))
    assert "while the server ran" in flushed and "--appendonly" not in flushed
    evicted = lost_message(store, "news", LossFacts(False, True, 1200, "allkeys-lru"))
    assert "evicted keys" in evicted and "noeviction" in evicted
    for text in (restart_no_aof, restart_aof, flushed, evicted):
        assert "\n" not in text and store in text and "'news'" in text
        # the same command does not resume: it starts again from nothing
        assert "resume" not in text and "starts it afresh" in text


def test_keys_lost_on_one_cluster_master_are_noticed(redis_cluster: RedisCluster) -> None:
    """A failover to a replica that had not received the keys of its slots: the crawl's
    keys on one master are gone, the others' are not."""
    crawl = f"ep{next(_ids)}"
    store = RedisFrontier(redis_cluster.url, crawl, "n1", TEST_LIMITS, shards=SHARDS)
    try:
        hosts = [f"h{i}.test" for i in range(40)]
        store.add([entry(f"http://{h}/") for h in hosts], now=0)
        victim = redis_cluster.servers[1]
        gone = victim.cli("KEYS", f"hw:{{{crawl}:*").split()
        assert gone, "no shard of the crawl on this master"
        for key in gone:
            victim.cli("DEL", key)
        assert store.crawl_lost is None
        again = store.add([entry(f"http://{h}/again") for h in hosts], now=1)
        assert again.added == 0
        assert store.crawl_lost is not None and "no longer holds crawl" in store.crawl_lost
    finally:
        with pytest.raises(CrawlLostError):
            store.close()
