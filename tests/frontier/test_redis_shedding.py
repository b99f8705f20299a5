"""Shedding of a shared frontier over ``max_queued``: the worst priorities go first,
whichever shard holds them, and a frontier over its cap sheds down to 99.9 % of it, so
that a frontier held at its cap does not shed at every admission."""

from __future__ import annotations

import itertools

from headway.frontier.redis import RedisFrontier
from headway.frontier.store import FrontierLimits
from tests.frontier.conftest import entry, lease
from tests.support.redisproc import RedisServer

_ids = itertools.count()


def test_over_the_cap_the_worst_go_down_to_999_per_mille(redis_server: RedisServer) -> None:
    cap = 5000
    limits = FrontierLimits(max_queued=cap, bloom_capacity=10_000, host_budget=10**6)
    store = RedisFrontier(
        redis_server.url, f"shed{next(_ids)}", "n1", limits, shards=8, handover_gap=0.0
    )
    try:
        hosts = [f"h{i}.test" for i in range(50)]
        first = [entry(f"http://{h}/{j}", j % 3) for h in hosts for j in range(cap // 50)]
        assert store.add(first, now=0).added == cap
        worse = [entry(f"http://late{i}.test/x", 9) for i in range(3)]
        res = store.add(worse, now=0)
        # the 3 new (worst) URLs, then 5 of the worst level left (priority 2)
        assert res.shed["frontier-full"] == 3 + cap // 1000
        assert (res.added, res.evicted) == (0, cap // 1000)
        counts = store.counts()
        assert counts.queued == cap - cap // 1000
        kept = [u.priority for h in hosts for u in lease(store, h, 1000, now=0, lease_seconds=9)]
        assert sorted(kept).count(2) == sum(1 for e in first if e.priority == 2) - 5
    finally:
        store.close()
