"""A Redis Cluster that says it is down (a master lost: CLUSTERDOWN until its replica takes
over or it comes back) is an outage to wait through, like a Redis that cannot be
reached: a node crawling through it, and a node started during it, go on once the
cluster is back, and every page is fetched."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from headway.testing.simweb import HostSpec, SimWebSpec
from tests.integration.helpers import TOKEN, ThreadedSimWeb, fetched_urls
from tests.integration.test_distributed import Nodes, wait_for_node_pages
from tests.support.redisproc import RedisCluster

pytestmark = pytest.mark.slow

#: Long enough for the cluster to mark the stopped master failed (its node timeout is
#: 3 s) and answer CLUSTERDOWN for a while.
DOWN = 8.0


def _cluster_down(cluster: RedisCluster) -> bool:
    return "cluster_state:fail" in cluster.servers[1].cli("CLUSTER", "INFO")


def test_nodes_wait_through_a_cluster_that_is_down(tmp_path: Path) -> None:
    spec = SimWebSpec(hosts=6, host_spec=HostSpec(pages=20, links_per_page=4), seed=3)
    with (
        RedisCluster(tmp_path / "redis", appendonly=True) as cluster,
        ThreadedSimWeb(spec) as web,
    ):
        nodes = Nodes(cluster.url, tmp_path, web)
        try:
            nodes.start("a", extra=("--delay", "0.3"))
            wait_for_node_pages(nodes, "a", 5)
            master = cluster.servers[0]
            master.stop()  # a clean stop: its AOF keeps every write
            deadline = time.monotonic() + DOWN
            while not _cluster_down(cluster) and time.monotonic() < deadline:
                time.sleep(0.1)
            assert _cluster_down(cluster), "the cluster never said it was down"
            nodes.start("b", seeds=False, extra=("--delay", "0.3"))  # started while down
            time.sleep(max(0.0, deadline - time.monotonic()))
            master.start()
            nodes.wait(180)
        finally:
            nodes.stop_all()
        for name, proc in nodes.procs.items():
            assert proc.returncode == 0, nodes.stderr(name)
        assert set(fetched_urls(web, web.log)) == web.expected_pages(TOKEN)
