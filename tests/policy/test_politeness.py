"""HostLimiter: table-driven sequences and a hypothesis property."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from headway.policy.outcome import Outcome
from headway.policy.politeness import HostLimiter, HostLimitParams

OK = Outcome.OK
P = HostLimitParams


def fetch(
    lim: HostLimiter,
    start: float,
    outcome: Outcome = OK,
    *,
    latency: float = 0.1,
    retry_after: float | None = None,
) -> None:
    """One request, started when allowed at ``start``, finished ``latency`` later."""
    assert lim.can_start(start), (start, lim.ready_at())
    lim.on_start(start)
    lim.on_finish(start + latency, outcome, latency=latency, retry_after=retry_after)


def test_fresh_limiter() -> None:
    lim = HostLimiter()
    assert lim.can_start(0.0)
    assert lim.gap() == 1.0
    stats = lim.statistics()
    assert (stats.in_flight, stats.limit, stats.backoff, stats.health) == (0, 1.0, 0.0, 1.0)


@dataclass(frozen=True)
class Step:
    at: float | None  # None: as soon as allowed
    outcome: Outcome
    latency: float = 0.1
    retry_after: float | None = None


@dataclass(frozen=True)
class Expect:
    gap: float
    limit: float
    ready_at: float


SEQUENCES = {
    "steady successes keep the configured gap": (
        P(),
        None,
        [Step(0, OK), Step(1, OK), Step(2, OK)],
        Expect(gap=1.0, limit=1.0, ready_at=3.0),
    ),
    "crawl delay raises the gap": (
        P(),
        5.0,
        [Step(0, OK), Step(5, OK)],
        Expect(gap=5.0, limit=1.0, ready_at=10.0),
    ),
    "429 without Retry-After doubles the gap": (
        P(),
        None,
        [Step(0, Outcome.THROTTLED)],
        Expect(gap=2.0, limit=1.0, ready_at=2.0),
    ),
    "429 with Retry-After waits exactly that long": (
        P(),
        None,
        [Step(0, Outcome.THROTTLED, latency=0.5, retry_after=30.0)],
        Expect(gap=2.0, limit=1.0, ready_at=30.5),
    ),
    "Retry-After on a success is honored too": (
        P(),
        None,
        [Step(0, OK, latency=0.5, retry_after=7.0)],
        Expect(gap=1.0, limit=1.0, ready_at=7.5),
    ),
    "repeated pushback escalates up to backoff_max": (
        P(backoff_max=10.0),
        None,
        [
            Step(0, Outcome.TIMEOUT),
            Step(2, Outcome.UNAVAILABLE),
            Step(6, Outcome.TIMEOUT),
            Step(14, Outcome.TIMEOUT),
        ],
        Expect(gap=10.0, limit=1.0, ready_at=24.0),
    ),
    "successes decay the backoff": (
        P(),
        None,
        [Step(0, Outcome.THROTTLED), Step(2, OK), Step(3.6, OK)],
        Expect(gap=1.28, limit=1.0, ready_at=3.6 + 1.28),
    ),
    "backoff below the base gap drops to zero": (
        P(),
        None,
        [Step(0, Outcome.THROTTLED), Step(2, OK), Step(3.6, OK), Step(None, OK), Step(None, OK)],
        Expect(gap=1.0, limit=1.0, ready_at=6.904),
    ),
    "additive increase up to the ceiling": (
        P(ceiling=2, min_gap=0.0),
        None,
        [Step(0, OK), Step(1, OK), Step(2, OK)],
        Expect(gap=0.0, limit=2.0, ready_at=2.0),
    ),
    "server errors do not shrink limits": (
        P(),
        None,
        [Step(0, Outcome.SERVER_ERROR), Step(1, Outcome.DNS_ERROR)],
        Expect(gap=1.0, limit=1.0, ready_at=2.0),
    ),
}


@pytest.mark.parametrize("name", list(SEQUENCES))
def test_sequences(name: str) -> None:
    params, crawl_delay, steps, expect = SEQUENCES[name]
    lim = HostLimiter(params, crawl_delay=crawl_delay)
    for step in steps:
        at = lim.ready_at() if step.at is None else step.at
        fetch(lim, at, step.outcome, latency=step.latency, retry_after=step.retry_after)
    assert lim.gap() == pytest.approx(expect.gap)
    assert lim.statistics().limit == pytest.approx(expect.limit)
    assert lim.ready_at() == pytest.approx(expect.ready_at)


def test_retry_after_blocks_until_exact_time() -> None:
    lim = HostLimiter()
    fetch(lim, 0.0, Outcome.THROTTLED, latency=1.0, retry_after=60.0)
    assert not lim.can_start(60.999)
    assert lim.can_start(61.0)
    assert lim.statistics().not_before == 61.0


def test_concurrency_limit_blocks_until_a_finish() -> None:
    lim = HostLimiter(P(ceiling=4, min_gap=0.0))
    for t in range(10):
        fetch(lim, float(t))
    assert lim.statistics().limit == 4.0
    for _ in range(4):
        assert lim.can_start(20.0)
        lim.on_start(20.0)
    assert lim.ready_at() == math.inf and not lim.can_start(1e9)
    lim.on_finish(21.0, OK, latency=1.0)
    assert lim.can_start(21.0)


def test_recovery_is_slow() -> None:
    lim = HostLimiter(P(ceiling=8, min_gap=0.0))
    t = 0.0
    while lim.statistics().limit < 8:
        fetch(lim, t)
        t += 1
    fetch(lim, t, Outcome.THROTTLED)
    assert lim.statistics().limit == 4.0
    successes = 0
    while lim.statistics().limit < 8:
        t += 1
        fetch(lim, max(t, lim.ready_at()))
        successes += 1
    # Additive increase needs (8^2 - 4^2) / 2 = 24 successes to undo one halving.
    assert successes >= 20


def test_backoff_recovery_takes_many_successes() -> None:
    lim = HostLimiter(P(backoff_max=300.0))
    t = 0.0
    for _ in range(12):  # push the backoff to its cap
        fetch(lim, t, Outcome.TIMEOUT)
        t = lim.ready_at()
    assert lim.statistics().backoff == 300.0
    successes = 0
    while lim.gap() > 1.0:
        fetch(lim, t)
        t = lim.ready_at()
        successes += 1
    assert successes > 20


def test_latency_spike_counts_as_pushback() -> None:
    lim = HostLimiter(P(ceiling=4, min_gap=0.0))
    for t in range(10):
        fetch(lim, float(t), latency=0.5)
    assert lim.statistics().limit == 4.0
    fetch(lim, 10.0, latency=5.0)  # 10x the baseline, above latency_min
    stats = lim.statistics()
    assert stats.limit == 2.0 and stats.pushbacks == 1
    assert stats.health > 0.9  # the site still answered


def test_small_latencies_never_count_as_pushback() -> None:
    lim = HostLimiter(P(ceiling=4, min_gap=0.0))
    for t in range(10):
        fetch(lim, float(t), latency=0.001)
    fetch(lim, 10.0, latency=0.5)  # 500x, but below latency_min
    assert lim.statistics().pushbacks == 0


def test_parking_and_unparking() -> None:
    params = P(park_seconds=600.0, ceiling=4, backoff_max=5.0)
    lim = HostLimiter(params)
    t = 0.0
    for _ in range(20):
        fetch(lim, t)
        t += 1
    assert lim.statistics().limit == 4.0
    failures = 0
    while lim.statistics().parked_until == -math.inf:
        t = max(t, lim.ready_at())
        fetch(lim, t, Outcome.CONNECTION_ERROR)
        failures += 1
    assert failures == 7  # 0.8^7 < 0.25 <= 0.8^6
    parked_until = lim.statistics().parked_until
    assert parked_until == pytest.approx(t + 0.1 + 600.0)
    assert lim.ready_at() == parked_until
    assert not lim.can_start(parked_until - 0.001)
    assert lim.can_start(parked_until)
    stats = lim.statistics()
    assert stats.limit == 1.0 and stats.health == 0.5
    # On probation: a few more failures park it again.
    t = parked_until
    for _ in range(4):
        t = max(t, lim.ready_at())
        fetch(lim, t, Outcome.TIMEOUT)
    assert lim.statistics().parked_until > parked_until


def test_failures_while_parked_do_not_extend_the_park() -> None:
    lim = HostLimiter(P(ceiling=2, min_gap=0.0, backoff_max=0.0))
    for t in range(5):
        fetch(lim, float(t))
    assert lim.statistics().limit == 2.0
    t = 10.0
    while lim.statistics().parked_until == -math.inf:
        fetch(lim, t, Outcome.TIMEOUT)
        t += 1
    first = lim.statistics().parked_until
    lim.on_finish(first - 1, Outcome.TIMEOUT, latency=1.0)
    assert lim.statistics().parked_until == first


def test_retry_ratio_slows_the_host() -> None:
    lim = HostLimiter()
    t = 0.0
    for i in range(10):
        lim.on_start(t, retry=i % 4 != 0)  # 3 of 4 starts are retries
        lim.on_finish(t + 0.1, OK, latency=0.1)
        t += 2.0
    stats = lim.statistics()
    assert (stats.requests, stats.retries) == (10, 7)
    assert stats.retry_ratio == 0.7
    assert lim.gap() == 2.0


def test_429_on_one_host_never_affects_another() -> None:
    a, b = HostLimiter(), HostLimiter()
    fetch(a, 0.0, Outcome.THROTTLED, retry_after=100.0)
    assert b.statistics() == HostLimiter().statistics()
    assert b.can_start(0.5) and b.gap() == 1.0


def test_crawl_delay_is_settable() -> None:
    lim = HostLimiter()
    lim.crawl_delay = 7.0
    assert lim.gap() == 7.0
    lim.crawl_delay = None
    assert lim.gap() == 1.0


@pytest.mark.parametrize(
    "kwargs",
    [{"ceiling": 0}, {"min_gap": -1.0}, {"backoff_decay": 0.0}, {"backoff_decay": 1.5}],
)
def test_invalid_params(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        HostLimitParams(**kwargs)  # type: ignore[arg-type]


# -- property ------------------------------------------------------------------------

ALL_OUTCOMES = list(Outcome)

events = st.lists(
    st.tuples(
        st.floats(min_value=0.0, max_value=5.0),  # time advance before the event
        st.booleans(),  # try to start (True) or finish the oldest in-flight (False)
        st.sampled_from(ALL_OUTCOMES),
        st.floats(min_value=0.0, max_value=30.0),  # latency
        st.one_of(st.none(), st.floats(min_value=0.0, max_value=120.0)),  # Retry-After
        st.booleans(),  # is a retry
    ),
    max_size=120,
)


@settings(max_examples=150, deadline=None)
@given(
    events=events,
    min_gap=st.floats(min_value=0.0, max_value=3.0),
    crawl_delay=st.one_of(st.none(), st.floats(min_value=0.0, max_value=10.0)),
    ceiling=st.integers(min_value=1, max_value=6),
)
def test_property_never_early_never_over_ceiling(
    events: list[tuple[float, bool, Outcome, float, float | None, bool]],
    min_gap: float,
    crawl_delay: float | None,
    ceiling: int,
) -> None:
    lim = HostLimiter(P(min_gap=min_gap, ceiling=ceiling, park_seconds=50.0), crawl_delay)
    floor_gap = max(min_gap, crawl_delay or 0.0)
    now = 0.0
    starts: list[float] = []
    in_flight: list[float] = []
    not_before = -math.inf
    for advance, want_start, outcome, latency, retry_after, retry in events:
        now += advance
        if want_start:
            if not lim.can_start(now):
                continue
            assert now >= not_before
            if starts:
                assert now - starts[-1] >= floor_gap - 1e-9
            lim.on_start(now, retry=retry)
            starts.append(now)
            in_flight.append(now)
            assert lim.statistics().in_flight == len(in_flight) <= ceiling
        elif in_flight:
            in_flight.pop(0)
            lim.on_finish(now, outcome, latency=latency, retry_after=retry_after)
            if retry_after is not None:
                not_before = max(not_before, now + retry_after)


def test_mark_sent_moves_the_gap_to_the_actual_send_time() -> None:
    lim = HostLimiter(HostLimitParams(min_gap=1.0))
    lim.on_start(10.0)
    lim.mark_sent(10.4)  # the request left later than it was scheduled
    lim.on_finish(10.5, Outcome.OK, latency=0.1)
    assert lim.ready_at() == 11.4
    lim.mark_sent(10.0)  # never moves the gap earlier
    assert lim.ready_at() == 11.4
