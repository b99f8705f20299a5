"""Per-host overrides in the scheduler's pure core: a delay override changes the gap,
a concurrency override the ceiling, an exclusion stops the host, a budget caps it."""

from __future__ import annotations

import itertools
import math

import pytest

from headway.frontier.store import LeasedUrl
from headway.policy.outcome import Outcome
from headway.policy.overrides import EXCLUDED, OVER_BUDGET, HostCeilings, HostOverride
from headway.policy.politeness import HostLimitParams
from headway.policy.robots import RobotsKind, RobotsRules
from headway.policy.schedule import (
    DropHost,
    FetchPage,
    LeaseFor,
    Refill,
    ScheduleCore,
    ScheduleParams,
    Skip,
    Wait,
)

UA = "testbot/1.0 (+https://example.org/bot)"
T0 = 1_000.0


def core(gap: float = 1.0, ceiling: int = 1) -> ScheduleCore:
    params = ScheduleParams(
        limits=HostLimitParams(min_gap=gap, ceiling=ceiling),
        crawl_delay_max=30,
        user_agent=UA,
        lease_ahead=1,
    )
    return ScheduleCore(params)


class Sim:
    """Drives a core like the shell does, against an endless frontier: every host
    always has one more URL; a fetch takes ``latency`` seconds."""

    def __init__(self, c: ScheduleCore, hosts: list[str], latency: float = 0.05) -> None:
        self.c = c
        self.hosts = hosts
        self.latency = latency
        self.now = T0
        self.ids = iter(range(1, 10**9))
        self.fetches: list[tuple[float, str]] = []
        self.dropped: list[DropHost] = []
        self.skipped: list[Skip] = []
        self.running: list[tuple[float, str]] = []  # (finish time, host)
        for h in hosts:
            c.robots.put(h, RobotsRules(RobotsKind.ALLOW_ALL, T0, T0 + 86400))

    def run(self, until: float, slots: int = 4) -> None:
        while self.now < until:
            self.running.sort()
            while self.running and self.running[0][0] <= self.now:
                t, host = self.running.pop(0)
                self.c.on_fetch_done(host, t, Outcome.OK, latency=self.latency, retry_after=None)
            d = self.c.decide(self.now, slots - len(self.running))
            if isinstance(d, Refill):
                live = [h for h in self.hosts if h not in {x.host for x in self.dropped}]
                offered = [(h, self.now) for h in live if h not in d.exclude]
                self.c.offer_hosts(offered, None, {}, self.now)
            elif isinstance(d, LeaseFor):
                got = [
                    LeasedUrl(next(self.ids), f"http://{h}/{i}", h, 0, 0, 0, None, 0, T0 + 600)
                    for h, n in d.wants
                    if h not in {x.host for x in self.dropped}
                    for i in range(n)
                ]
                self.c.offer_leases(d.wants, got, self.now)
            elif isinstance(d, FetchPage):
                self.fetches.append((self.now, d.lease.host))
                self.running.append((self.now + self.latency, d.lease.host))
            elif isinstance(d, DropHost):
                self.dropped.append(d)
            elif isinstance(d, Skip):
                self.skipped.append(d)
            elif isinstance(d, Wait):
                nxt = min([d.until, until, *(t for t, _ in self.running)])
                self.now = max(self.now + 0.001, nxt) if math.isfinite(nxt) else until

    def times(self, host: str) -> list[float]:
        return [t for t, h in self.fetches if h == host]


def gaps(times: list[float]) -> list[float]:
    return [b - a for a, b in itertools.pairwise(times)]


def test_a_delay_override_changes_the_gap_of_that_host_only() -> None:
    c = core(gap=1.0)
    c.set_overrides({"slow.test": HostOverride(delay=5.0)})
    sim = Sim(c, ["slow.test", "other.test"])
    sim.run(T0 + 30)
    slow, other = sim.times("slow.test"), sim.times("other.test")
    assert len(slow) >= 5 and min(gaps(slow)) >= 5.0 - 1e-9
    assert max(gaps(slow)) < 5.2  # the new gap, not a longer one
    assert min(gaps(other)) >= 1.0 - 1e-9 and max(gaps(other)) < 1.2


def test_a_delay_override_takes_effect_on_a_known_host_and_clears() -> None:
    c = core(gap=1.0)
    sim = Sim(c, ["a.test"])
    sim.run(T0 + 5)
    c.set_overrides({"a.test": HostOverride(delay=3.0)})
    t_set = sim.now
    sim.run(T0 + 20)
    after = [t for t in sim.times("a.test") if t > t_set + 1.2]
    assert after and min(gaps(after)) >= 3.0 - 1e-9
    c.set_overrides({})
    t_clear = sim.now
    sim.run(T0 + 30)
    cleared = [t for t in sim.times("a.test") if t > t_clear + 3.1]
    assert len(cleared) >= 5 and max(gaps(cleared)) < 1.2


def test_a_delay_override_never_undercuts_the_robots_crawl_delay() -> None:
    c = core(gap=1.0)
    c.set_overrides({"a.test": HostOverride(delay=0.0)})
    lim = c.limiter("a.test")
    lim.crawl_delay = 4.0
    assert lim.gap() == 4.0
    c.set_overrides({"a.test": HostOverride(delay=0.2)})
    assert lim.params.min_gap == 0.2 and lim.gap() == 4.0


def test_a_concurrency_override_raises_the_ceiling() -> None:
    c = core(gap=0.0, ceiling=1)
    c.set_overrides({"wide.test": HostOverride(concurrency=3)})
    assert c.limiter("wide.test").params.ceiling == 3
    assert c.limiter("narrow.test").params.ceiling == 1


def test_an_excluded_host_is_stopped_and_its_urls_dropped() -> None:
    c = core(gap=1.0)
    sim = Sim(c, ["bad.test", "good.test"])
    sim.run(T0 + 5)
    assert sim.times("bad.test")
    c.set_overrides({"bad.test": HostOverride(exclude=True)})
    t_set = sim.now
    sim.run(T0 + 20)
    assert [t for t in sim.times("bad.test") if t > t_set] == []
    assert DropHost("bad.test", EXCLUDED) in sim.dropped
    assert all(s.note == EXCLUDED for s in sim.skipped if s.lease.host == "bad.test")
    assert len([t for t in sim.times("good.test") if t > t_set]) >= 10


def test_a_budget_caps_the_pages_fetched_after_it_is_set() -> None:
    c = core(gap=0.5)
    c.set_overrides({"big.test": HostOverride(budget=3)})
    sim = Sim(c, ["big.test", "small.test"])
    sim.run(T0 + 20)
    assert len(sim.times("big.test")) == 3
    assert sim.dropped == [DropHost("big.test", OVER_BUDGET)]
    assert len(sim.times("small.test")) >= 30


def test_a_changed_budget_counts_again_and_a_cleared_one_lifts_the_cap() -> None:
    c = core(gap=0.5)
    c.set_overrides({"a.test": HostOverride(budget=2)})
    sim = Sim(c, ["a.test"])
    sim.run(T0 + 5)
    assert len(sim.times("a.test")) == 2
    assert c.overrides.stop_reason("a.test") == OVER_BUDGET
    c.set_overrides({"a.test": HostOverride(budget=4)})
    assert c.overrides.stop_reason("a.test") is None and c.overrides.fetched("a.test") == 0
    c.set_overrides({})
    assert c.overrides.stop_reason("a.test") is None


@pytest.mark.parametrize(
    ("ceilings", "host", "want"),
    [
        ({}, "a.test", None),
        ({"a.test": 4}, "a.test", 4),
        ({"a.test": 4}, "a.test:8080", 4),
        ({"a.test:8080": 2, "a.test": 4}, "a.test:8080", 2),
        ({"*.example.org": 3}, "www.example.org", 3),
        ({"*.example.org": 3}, "example.org", None),  # the suffix entry covers subdomains
        ({"*.example.org": 3}, "example.com", None),
    ],
)
def test_configured_ceilings(ceilings: dict[str, int], host: str, want: int | None) -> None:
    assert HostCeilings(ceilings).get(host) == want


@pytest.mark.parametrize(
    "kwargs", [{"delay": -1.0}, {"delay": math.inf}, {"budget": -1}, {"concurrency": 0}]
)
def test_bad_overrides_are_refused(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        HostOverride(**kwargs)  # type: ignore[arg-type]
