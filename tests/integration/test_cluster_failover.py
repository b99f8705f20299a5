"""A Redis Cluster master killed for good: its replica takes over (the cluster's own
failover) and the nodes go on with the new master, without waiting for the old one to
come back. Asserted from the server's own log: pages are fetched after the failover and
the crawl finishes."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from headway.testing.simweb import HostSpec, SimWebSpec
from tests.integration.helpers import ThreadedSimWeb, page_requests
from tests.integration.test_distributed import Nodes, wait_for_node_pages
from tests.support.redisproc import RedisCluster

pytestmark = pytest.mark.slow


def test_nodes_go_on_with_the_replica_of_a_master_killed_for_good(tmp_path: Path) -> None:
    spec = SimWebSpec(hosts=8, host_spec=HostSpec(pages=40, links_per_page=4), seed=9)
    with (
        RedisCluster(tmp_path / "redis", replicas=1, appendonly=True) as cluster,
        ThreadedSimWeb(spec) as web,
    ):
        nodes = Nodes(cluster.url, tmp_path, web)
        # a node still waiting for the dead master gives up within the test's time
        flags = ("--delay", "0.2", "--store-outage-limit", "40")
        try:
            nodes.start("a", extra=flags)
            nodes.start("b", seeds=False, extra=flags)
            wait_for_node_pages(nodes, "a", 5)
            wait_for_node_pages(nodes, "b", 5)
            masters = [a for a, role in cluster.roles().items() if role == "master"]
            victim = next(s for s in cluster.servers if s.address == masters[0])
            victim.kill()  # kill -9, never started again
            killed = time.monotonic()
            nodes.wait(150)
        finally:
            nodes.stop_all()
        for name, proc in nodes.procs.items():
            assert proc.returncode == 0, nodes.stderr(name)[-3000:]
        after = [r for r in page_requests(web.log) if r.arrival > killed + 1.0]
        assert len(after) >= 20, "the crawl stalled after the failover"
