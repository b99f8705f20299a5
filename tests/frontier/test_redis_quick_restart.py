"""A Redis server restarted between two calls of a node (no call failed: the client opens
a new connection without a word) is noticed all the same: ``server_restarts`` counts it,
so the node forgets its recently admitted URLs and offers its seeds again
(tests/integration/test_redis_data_loss.py)."""

from __future__ import annotations

from pathlib import Path

from headway.frontier.redis import RedisFrontier
from tests.frontier.conftest import TEST_LIMITS, entry
from tests.support.redisproc import RedisServer


def test_restart_between_two_calls_is_noticed_once(tmp_path: Path) -> None:
    server = RedisServer(tmp_path, appendonly=True)
    server.start()
    # a long shard TTL: no heartbeat runs while the server is down
    store = RedisFrontier(
        server.url, "quick", "n1", TEST_LIMITS, shards=4, shard_ttl=60.0, handover_gap=0.0
    )
    try:
        store.add([entry(f"http://a.test/{i}") for i in range(10)], now=0)
        assert store.counts().queued == 10
        assert store.server_restarts == 0
        server.stop()  # a clean stop: the AOF has every write
        server.start()  # and back before the store's next call
        assert store.counts().queued == 10  # this call itself did not fail
        assert store.server_restarts == 1
        again = store.add([entry(f"http://a.test/{i}") for i in range(12)], now=1)
        assert (again.added, again.duplicates) == (2, 10)
        assert store.server_restarts == 1  # one restart, counted once
    finally:
        store.close()
        server.stop()


def test_no_restart_is_seen_where_there_was_none(tmp_path: Path) -> None:
    """New connections to the same server (a pool that grows, a reconnect) are not
    restarts."""
    server = RedisServer(tmp_path)
    server.start()
    store = RedisFrontier(
        server.url, "same", "n1", TEST_LIMITS, shards=4, shard_ttl=60.0, handover_gap=0.0
    )
    try:
        store.add([entry("http://a.test/")], now=0)
        store._client.connection_pool.disconnect()  # every connection opened anew
        assert store.counts().queued == 1
        assert store.server_restarts == 0
    finally:
        store.close()
        server.stop()


def test_seeds_are_offered_again_only_for_shards_that_lost_their_note(tmp_path: Path) -> None:
    """``mark_seeded`` writes one key per shard of the seeds' hosts; a shard whose key is
    gone (its latest writes lost) names its hosts, the others none."""
    server = RedisServer(tmp_path)
    server.start()
    store = RedisFrontier(
        server.url, "noted", "n1", TEST_LIMITS, shards=4, shard_ttl=60.0, handover_gap=0.0
    )
    hosts = {f"h{i}.test" for i in range(12)}
    try:
        assert store.seeded_hosts_lost(hosts) == hosts  # never noted
        store.mark_seeded(hosts)
        assert store.seeded_hosts_lost(hosts) == set()
        victim = store.shard_of("h0.test")
        store._client.delete(store.keys.shard(victim, "seeded"))  # that shard's writes lost
        lost = store.seeded_hosts_lost(hosts)
        assert lost == {h for h in hosts if store.shard_of(h) == victim}
        assert "h0.test" in lost and len(lost) < len(hosts)
        assert store.seeded_hosts_lost(set()) == set()
    finally:
        store.close()
        server.stop()
