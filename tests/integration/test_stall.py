"""A node that stalls (SIGSTOP) for longer than its leases, on a shared crawl in Redis:
its leases run out, its shards and their URLs go to another node, and once thawed it
must not send the URLs it had leased before the stall (the other node has them, and may
be fetching from the same host), whatever its scheduler had lined up. Asserted from the
server's own log, each request attributed to its node by its User-Agent."""

from __future__ import annotations

import os
import signal
import time
from collections import Counter
from pathlib import Path

import pytest

from headway.testing.simweb import HostSpec, SimWeb, SimWebSpec
from tests.integration.helpers import TOKEN, ThreadedSimWeb, fetched_urls, page_requests
from tests.integration.test_distributed import Nodes, wait_for_node_pages
from tests.support.redisproc import RedisCluster, RedisServer

pytestmark = pytest.mark.slow

#: A gap long enough that each node holds URLs leased ahead for its hosts at any moment.
DELAY = 0.4
#: Longer than a lease (--total-timeout 2 + --lease-margin 1), the shard TTL (1.5 s) and
#: a reclaim sweep after them: the other node has taken the shards and fetched from them.
FREEZE = 7.0


def _agent(name: str) -> str:
    return f"testbot/1.0 (+https://example.org/testbot; {name})"


def _stall(store: str, tmp: Path) -> tuple[SimWeb, Nodes, float, float]:
    spec = SimWebSpec(hosts=6, host_spec=HostSpec(pages=30, links_per_page=4), seed=5)
    with ThreadedSimWeb(spec) as web:
        nodes = Nodes(store, tmp, web)
        try:
            for name in ("a", "b"):
                nodes.start(
                    name,
                    seeds=name == "a",
                    extra=("--delay", str(DELAY), "--user-agent", _agent(name)),
                )
            wait_for_node_pages(nodes, "a", 4)
            wait_for_node_pages(nodes, "b", 4)
            a = nodes.procs["a"]
            os.kill(a.pid, signal.SIGSTOP)
            frozen = time.monotonic()
            time.sleep(FREEZE)
            os.kill(a.pid, signal.SIGCONT)
            thawed = time.monotonic()
            nodes.wait(120)
        finally:
            nodes.stop_all()
        for name, proc in nodes.procs.items():
            assert proc.returncode == 0, nodes.stderr(name)
        return web, nodes, frozen, thawed


def _check(web: SimWeb, frozen: float, thawed: float) -> None:
    log = page_requests(web.log)
    taken = {
        web.url(r.host, r.path)
        for r in log
        if r.user_agent == _agent("b") and frozen < r.arrival <= thawed
    }
    assert taken, "the other node fetched nothing while the first was frozen"
    after = [
        web.url(r.host, r.path) for r in log if r.user_agent == _agent("a") and r.arrival > thawed
    ]
    resent = sorted(set(after) & taken)
    assert resent == [], f"the thawed node sent URLs the other node had taken: {resent[:5]}"
    # nothing was lost on the way
    assert set(fetched_urls(web, web.log)) >= web.expected_pages(TOKEN)
    twice = {u for u, n in Counter(fetched_urls(web, log)).items() if n > 1}
    # a page the frozen node had fetched but not settled is fetched again (its lease ran
    # out while it could not extend it); nothing else is
    before = {
        web.url(r.host, r.path) for r in log if r.user_agent == _agent("a") and r.arrival <= frozen
    }
    assert twice <= before


def test_a_thawed_node_sends_none_of_its_stale_leases_on_redis(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    web, _, frozen, thawed = _stall(redis_server.url, tmp_path)
    _check(web, frozen, thawed)


def test_a_thawed_node_sends_none_of_its_stale_leases_on_a_cluster(
    redis_cluster: RedisCluster, tmp_path: Path
) -> None:
    web, _, frozen, thawed = _stall(redis_cluster.url, tmp_path)
    _check(web, frozen, thawed)
