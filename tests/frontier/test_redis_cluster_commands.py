"""On a Redis Cluster, the frontier's script calls cost one command each: the client
routes a pipelined EVALSHA by the keys it is given, without asking a server for them
(``COMMAND GETKEYS``, a round trip per script call with redis-py 8's defaults)."""

from __future__ import annotations

from collections import Counter

import redis

from headway.frontier.redis import RedisFrontier
from tests.frontier.conftest import TEST_LIMITS, entry
from tests.support.redisproc import RedisCluster


def _calls(cluster: RedisCluster) -> Counter[str]:
    total: Counter[str] = Counter()
    for server in cluster.servers:
        with redis.Redis(port=server.port) as client:
            for name, row in client.info("commandstats").items():
                total[name.removeprefix("cmdstat_")] += int(row["calls"])
    return total


def test_script_calls_ask_no_server_for_their_keys(redis_cluster: RedisCluster) -> None:
    store = RedisFrontier(
        redis_cluster.url, "routed", "n1", TEST_LIMITS, shards=8, shard_ttl=60.0, handover_gap=0.0
    )
    try:
        before = _calls(redis_cluster)
        added = store.add([entry(f"http://h{i}.test/{j}") for i in range(20) for j in range(3)], 0)
        leased = store.lease_many([(f"h{i}.test", 1) for i in range(20)], 1.0, 60.0)
        after = _calls(redis_cluster) - before
    finally:
        store.close()
    assert added.added == 60 and len(leased) == 20
    assert after["evalsha"] >= 2  # the calls went through pipelined scripts ...
    assert after["command|getkeys"] == 0, after  # ... routed by the client alone
