"""``headway status`` of a shared crawl: live nodes are those seen within the crawl's
shard TTL, a node that has just started is shown as starting, and a store that cannot
be reached is waited for briefly, then named in one line (password masked), exit 2."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import redis

from headway.cli.status import STARTING, shared_status
from headway.errors import StoreError
from headway.frontier.redis import RedisFrontier
from headway.frontier.redis.status import read_crawl_status
from tests.frontier.conftest import TEST_LIMITS
from tests.support.redisproc import RedisCluster, RedisServer, free_port


def test_live_nodes_are_those_seen_within_the_shard_ttl(redis_server: RedisServer) -> None:
    store = RedisFrontier(
        redis_server.url, "st-live", "alive", TEST_LIMITS, shards=4, shard_ttl=2.0
    )
    client = redis.Redis(port=redis_server.port, decode_responses=True)
    try:
        now = time.time()
        # a node last seen 3 s ago (beyond the 2 s TTL) and one seen 1 s ago
        client.zadd(store.keys.nodes, {"dead": now - 3.0, "recent": now - 1.0})
        st = read_crawl_status(redis_server.url, "st-live")
        assert {n.node for n in st.nodes} == {"alive", "recent"}
    finally:
        store.close()
        client.close()


def test_a_node_that_just_started_is_shown_as_starting(redis_server: RedisServer) -> None:
    store = RedisFrontier(redis_server.url, "st-start", "fresh", TEST_LIMITS, shards=4)
    try:
        (row,) = shared_status(redis_server.url, "st-start")["nodes"]
        assert row["note"] == STARTING
        store.publish({"software": "headway/test"})
        store.heartbeat()
        (row,) = shared_status(redis_server.url, "st-start")["nodes"]
        assert row["note"].startswith("written by another version")  # a partial record
    finally:
        store.close()


def test_status_waits_for_a_store_that_comes_back(tmp_path: Path) -> None:
    server = RedisServer(tmp_path)
    server.start()
    try:
        RedisFrontier(server.url, "st-back", "n1", TEST_LIMITS, shards=4).close()
        server.cli("SAVE")
        server.stop()  # (the RDB written just now brings the crawl back)
        restart = threading.Timer(1.0, server.start)
        restart.start()
        st = read_crawl_status(server.url, "st-back", wait=10.0)
        restart.join()
        assert st.shards == 4
    finally:
        server.stop()


def test_status_of_an_unreachable_cluster_is_one_line_naming_it() -> None:
    port = free_port()
    done = subprocess.run(
        [
            sys.executable,
            *("-m", "headway.cli", "status", "--crawl-id", "x"),
            *("--store", f"redis+cluster://:hunter2secret@127.0.0.1:{port}"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert f"redis+cluster://:***@127.0.0.1:{port}" in lines[0]
    assert "cannot be reached" in lines[0] and "hunter2secret" not in done.stderr


def test_status_of_a_cluster_that_is_down_says_so(tmp_path: Path) -> None:
    cluster = RedisCluster(tmp_path)
    cluster.start()
    try:
        RedisFrontier(cluster.url, "st-down", "n1", TEST_LIMITS, shards=8).close()
        cluster.servers[2].kill()  # a master without a replica: its slots are lost
        deadline = time.monotonic() + 20
        while "cluster_state:fail" not in cluster.servers[0].cli("CLUSTER", "INFO"):
            assert time.monotonic() < deadline, "the cluster did not notice"
            time.sleep(0.2)
        with pytest.raises(StoreError, match="failing over or down") as caught:
            read_crawl_status(cluster.url, "st-down", wait=1.0)
        assert "\n" not in str(caught.value)
    finally:
        cluster.stop()


def test_a_node_on_an_unreachable_cluster_names_it(tmp_path: Path) -> None:
    port = free_port()
    done = subprocess.run(
        [
            sys.executable,
            *("-m", "headway.cli", "node", "--crawl-id", "x", "--out", str(tmp_path / "c")),
            *("--store", f"redis+cluster://:hunter2secret@127.0.0.1:{port}"),
            *("--user-agent", "testbot/1.0 (+https://example.org/testbot)", "--quiet"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert f"redis+cluster://:***@127.0.0.1:{port}" in done.stderr, done.stderr
    assert "hunter2secret" not in done.stderr and "Traceback" not in done.stderr
