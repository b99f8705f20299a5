"""The scheduler gives each host its limiter, with the operator's ceiling overrides."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from headway.frontier.sqlite import SqliteFrontier
from headway.frontier.store import UrlEntry
from headway.policy.politeness import HostLimitParams
from headway.policy.robots import RobotsCache
from headway.policy.schedule import Refill
from headway.runtime.scheduler import Scheduler
from headway.threads import ThreadWorker
from headway.urls.fingerprint import fingerprint


async def _noop(*_: Any) -> None:
    return None


def _scheduler(tmp_path: Path, ceilings: dict[str, int], max_limiters: int = 50_000) -> Scheduler:
    return Scheduler(
        SqliteFrontier(tmp_path / "f.sqlite3", node_id="n"),
        ThreadWorker("test"),
        limits=HostLimitParams(min_gap=1.0, ceiling=1),
        robots=RobotsCache(),
        robots_ttl=3600,
        crawl_delay_max=30,
        lease_seconds=60,
        optout=None,
        on_skip=_noop,
        host_ceilings=ceilings,
        max_limiters=max_limiters,
    )


def test_ceiling_overrides_exact_then_longest_suffix(tmp_path: Path) -> None:
    s = _scheduler(tmp_path, {"big.example": 4, "*.cdn.example": 8, "*.example": 2})
    assert s.limiter("big.example").statistics().limit <= 4
    assert s.limiter("big.example").params.ceiling == 4
    assert s.limiter("img.cdn.example:8080").params.ceiling == 8
    assert s.limiter("other.example").params.ceiling == 2
    assert s.limiter("elsewhere.org").params.ceiling == 1


async def test_idle_limiters_are_evicted_and_waiting_hosts_keep_their_wait(
    tmp_path: Path,
) -> None:
    from headway.policy.outcome import Outcome

    s = _scheduler(tmp_path, {}, max_limiters=2)
    slow = s.limiter("slow.example")
    slow.on_start(100.0)
    slow.on_finish(100.1, Outcome.THROTTLED, latency=0.1, retry_after=500.0)
    s.limiter("a.example")
    s.limiter("b.example")
    busy = s.limiter("busy.example")
    busy.on_start(100.0)  # in flight: never evicted
    frontier = s._frontier
    await s._refill(101.0, Refill(10, frozenset()))  # forgets idle limiters first
    assert [s.core.knows(h) for h in ("busy.example", "b.example")] == [True, True]
    assert not s.core.knows("slow.example") and not s.core.knows("a.example")
    # the forgotten host's Retry-After wait was written to the frontier: its queued URL
    # is not offered before the wait ends
    url = "http://slow.example/"
    frontier.add([UrlEntry(url, "slow.example", 0, 0, fingerprint(url))], 101.0)
    assert frontier.ready_hosts(599.0, 10) == []
    assert [h for h, _ in frontier.ready_hosts(601.0, 10)] == ["slow.example"]


def test_host_pressure_ranks_the_throttled_and_counts_the_active(tmp_path: Path) -> None:
    from headway.policy.outcome import Outcome

    s = _scheduler(tmp_path, {})
    for i in range(100):
        s.limiter(f"idle{i}.example")
    s.limiter("hot.example").on_start(100.0)
    s.on_fetch_done("hot.example", 100.1, Outcome.THROTTLED, latency=0.1, retry_after=None)
    s.limiter("busy.example").on_start(100.2)
    s.core._active.add("busy.example")
    for i in range(30):  # used after hot.example: the most recent limiters
        s.limiter(f"late{i}.example")
    p = s.host_pressure(now=100.3, top=5)
    assert p.known == 102 + 30
    assert p.active == 1
    assert p.top[0][0] == "hot.example"  # throttled hosts first, even if not recent
    assert p.top[0][1].gap > 1.0
    assert len(p.top) == 5
    # once the host recovers it leaves the throttled set
    for i in range(10):  # successes decay the backoff below the base gap
        s.limiter("hot.example").on_start(200.0 + 10 * i)
        s.on_fetch_done("hot.example", 200.1 + 10 * i, Outcome.OK, latency=0.1, retry_after=None)
    assert "hot.example" not in s.core._throttled
