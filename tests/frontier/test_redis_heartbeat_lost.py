"""A node whose shard heartbeat has failed for longer than ``--shard-ttl`` schedules
nothing: its shards' owner keys have expired by then and another node may hold them."""

from __future__ import annotations

import time
from pathlib import Path

from headway.frontier.redis import RedisFrontier
from tests.frontier.conftest import TEST_LIMITS, entry
from tests.support.redisproc import RedisServer

TTL = 1.0
#: How long the test waits for the node to give its shards up (many TTLs: a loaded
#: machine may run the heartbeat thread late, never early).
WAIT = 15.0


def test_no_scheduling_once_the_heartbeat_failed_for_a_ttl(tmp_path: Path) -> None:
    server = RedisServer(tmp_path)
    server.start()
    store = RedisFrontier(
        server.url,
        "hb",
        "n1",
        TEST_LIMITS,
        shards=4,
        shard_ttl=TTL,
        handover_gap=0.0,
        outage_limit=2.0,
    )
    try:
        hosts = [f"h{i}.test" for i in range(8)]
        store.add([entry(f"http://{h}/") for h in hosts], now=0)
        assert store.schedulable_shards() == frozenset(range(4))  # a lone node holds all
        assert len(store.ready_hosts(now=1, limit=10)) == len(hosts)
        server.kill()  # every heartbeat fails from now on
        deadline = time.monotonic() + WAIT
        while store.schedulable_shards() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert store.schedulable_shards() == frozenset(), "still scheduling without Redis"
        # nothing is scheduled: no host is ready, no URL is leased (and Redis, which is
        # down, is not even asked: these return at once instead of waiting it out)
        assert store.ready_hosts(now=1, limit=10) == []
        assert store.lease_many([(h, 1) for h in hosts], now=1, lease_seconds=30) == []
        assert all(not store.owns(h) for h in hosts)
    finally:
        store.close()
        server.stop()
