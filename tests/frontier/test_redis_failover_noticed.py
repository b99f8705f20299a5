"""A Redis Cluster failover is noticed like a restart: the replica that takes over a
killed master keeps its run id (a client that saw it before would take it for a server
it knows) but starts a new replication history, and it may lack its old master's last
writes, so the node must offer recent links and lost seeds again."""

from __future__ import annotations

import time
from pathlib import Path

import redis

from headway.frontier.redis import RedisFrontier
from tests.frontier.conftest import TEST_LIMITS, entry
from tests.support.redisproc import RedisCluster


def _replicas_listed(cluster: RedisCluster) -> bool:
    with redis.Redis(port=cluster.servers[0].port) as client:
        slots = client.execute_command("CLUSTER", "SLOTS")
    return len(slots) == 3 and all(len(row) >= 4 for row in slots)


def _run_id(address: str) -> str:
    with redis.Redis.from_url(f"redis://{address}") as client:
        return str(client.info("server")["run_id"])


def test_a_replica_taking_over_counts_as_a_restart(tmp_path: Path) -> None:
    with RedisCluster(tmp_path, replicas=1) as cluster:
        # every replica attached and listed in the slots the client reads, so that the
        # client knows the replica's run id before it takes over
        deadline = time.monotonic() + 40
        while not _replicas_listed(cluster):
            assert time.monotonic() < deadline, "the replicas were not listed"
            time.sleep(0.2)
        store = RedisFrontier(
            cluster.url, "promoted", "n1", TEST_LIMITS, shards=8, shard_ttl=60.0, handover_gap=0.0
        )
        try:
            store.add([entry(f"http://h{i}.test/") for i in range(16)], now=0)
            assert store.server_restarts == 0
            known = store._link._run_ids or frozenset()
            roles = cluster.roles()
            # a master whose replica the client has seen (its run id is known)
            victim, replica = next(
                (s, a)
                for s in cluster.servers
                for a, role in roles.items()
                if role == s.address and _run_id(a) in known
            )
            victim.kill()
            deadline = time.monotonic() + 30
            while cluster.roles().get(replica) != "master":
                assert time.monotonic() < deadline, "the replica did not take over"
                time.sleep(0.1)
            assert store.counts().queued == 16  # through the failover (retried)
            assert _run_id(replica) in known  # the same server, promoted: no new run id
            assert store.server_restarts >= 1
        finally:
            store.close()
