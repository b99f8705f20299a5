"""Per-host politeness: the adaptive limiter the scheduler consults before every fetch.

Contract (one ``HostLimiter`` per host; all times are the caller's ``now``):

- Request starts to a host are at least ``gap()`` apart, where ``gap()`` is the largest
  of the configured delay (``min_gap``), the robots.txt Crawl-delay and the pushback
  backoff, doubled while most recent starts are retries.
- At most ``floor(limit)`` requests are in flight; ``limit`` moves AIMD-style between 1
  and ``ceiling``: +1/limit per normal answer, halved on pushback (429, 503, timeouts,
  dropped connections, or latency far above the host's own baseline).
- Pushback also grows the backoff gap (doubling, up to ``backoff_max``); normal answers
  shrink it slowly (x ``backoff_decay`` each), so recovery takes many successes.
- A Retry-After forbids any start before ``now + retry_after``.
- ``health`` is an EWMA of normal answers; when it falls below ``health_park`` the host
  is parked for ``park_seconds`` and comes back at the floor limit (1).

Callers drive it as: ``can_start(now)`` -> ``on_start(now)`` -> ``on_finish(now, ...)``.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass

from headway.policy.outcome import PUSHBACK, Outcome

#: Outcomes in which the site answered normally (the host is healthy).
SUCCESS: frozenset[Outcome] = frozenset(
    {Outcome.OK, Outcome.REDIRECT, Outcome.NOT_MODIFIED, Outcome.CLIENT_ERROR}
)

_HEALTH_ALPHA = 0.2  # about 7 failures in a row take a healthy host below 0.25
_HEALTH_AFTER_PARK = 0.5  # on probation after a park: a few failures park it again
_LATENCY_ALPHA = 0.1
_LATENCY_MIN_SAMPLES = 5  # no latency judgement before a baseline exists
_RETRY_WINDOW = 20  # the retry ratio looks at this many most recent starts


@dataclass(frozen=True, slots=True)
class HostLimitParams:
    min_gap: float = 1.0  # seconds between request starts (the configured delay)
    ceiling: int = 1  # max concurrent requests to the host
    backoff_max: float = 300.0  # cap of the pushback backoff gap
    backoff_decay: float = 0.8  # backoff multiplier per normal answer
    latency_factor: float = 4.0  # latency above factor x baseline counts as pushback
    health_park: float = 0.25  # health below this parks the host
    park_seconds: float = 600.0
    retry_ratio_slow: float = 0.5  # retry ratio above this doubles the gap
    latency_min: float = 1.0  # latencies at or below this never count as pushback

    def __post_init__(self) -> None:
        if self.ceiling < 1:
            raise ValueError("ceiling must be at least 1")
        if self.min_gap < 0 or self.backoff_max < 0 or self.park_seconds < 0:
            raise ValueError("min_gap, backoff_max and park_seconds must be >= 0")
        if not 0 < self.backoff_decay <= 1:
            raise ValueError("backoff_decay must be in (0, 1]")


@dataclass(frozen=True, slots=True)
class HostLimitStats:
    in_flight: int
    limit: float
    gap: float
    backoff: float
    health: float
    parked_until: float  # -inf when never parked
    not_before: float  # -inf when no Retry-After is pending
    requests: int
    retries: int
    retry_ratio: float  # share of retries among the most recent starts
    pushbacks: int


class HostLimiter:
    """Adaptive limits of one host (see the module docstring)."""

    __slots__ = (
        "_backoff",
        "_health",
        "_in_flight",
        "_last_start",
        "_latency_baseline",
        "_latency_samples",
        "_limit",
        "_not_before",
        "_parked",
        "_parked_until",
        "_pushbacks",
        "_recent_retries",
        "_requests",
        "_retries",
        "crawl_delay",
        "params",
    )

    def __init__(
        self, params: HostLimitParams = HostLimitParams(), crawl_delay: float | None = None
    ) -> None:
        self.params = params
        #: The robots.txt Crawl-delay in force (None: none asked); settable at any time.
        self.crawl_delay = crawl_delay
        self._limit = 1.0
        self._in_flight = 0
        self._backoff = 0.0
        self._health = 1.0
        self._parked = False
        self._parked_until = -math.inf
        self._not_before = -math.inf
        self._last_start = -math.inf
        self._latency_baseline = 0.0
        self._latency_samples = 0
        self._requests = 0
        self._retries = 0
        self._pushbacks = 0
        self._recent_retries: deque[bool] = deque(maxlen=_RETRY_WINDOW)

    # -- decisions -------------------------------------------------------------------

    def base_gap(self) -> float:
        """The gap nothing can lower: max(min_gap, crawl delay)."""
        delay = self.crawl_delay if self.crawl_delay is not None else 0.0
        return max(self.params.min_gap, delay)

    def gap(self) -> float:
        """Seconds required between two request starts right now."""
        gap = max(self.base_gap(), self._backoff)
        if self._retry_ratio() > self.params.retry_ratio_slow:
            gap *= 2.0
        return gap

    def ready_at(self) -> float:
        """Earliest time a new request may start; ``math.inf`` while the host is at its
        concurrency limit (a finish has to come first)."""
        if self._in_flight >= math.floor(self._limit):
            return math.inf
        return self.gap_ready_at()

    def gap_ready_at(self) -> float:
        """Earliest time the gap, Retry-After and parking let one more request start,
        whatever is in flight: for a further request of an exchange already counted by
        ``on_start`` (the next hop of a robots.txt redirect), marked by ``mark_sent``."""
        return max(self._last_start + self.gap(), self._not_before, self._parked_until)

    def can_start(self, now: float) -> bool:
        self._unpark(now)
        return now >= self.ready_at()

    # -- events ----------------------------------------------------------------------

    def on_start(self, now: float, *, retry: bool = False) -> None:
        """A request to the host starts at ``now`` (``retry``: it is a retry of a URL)."""
        self._unpark(now)
        self._in_flight += 1
        self._last_start = max(self._last_start, now)
        self._requests += 1
        self._retries += int(retry)
        self._recent_retries.append(retry)

    def mark_sent(self, now: float) -> None:
        """The request counted by the last ``on_start`` actually went out at ``now``
        (work between scheduling and sending takes time): the gap runs from the later of
        the two, so the spacing holds on the wire, not just in the scheduler."""
        self._last_start = max(self._last_start, now)

    def on_cancel(self, now: float) -> None:
        """The request counted by the last ``on_start`` was never sent: it no longer
        counts as in flight, and says nothing about the host's health."""
        self._unpark(now)
        self._in_flight = max(0, self._in_flight - 1)

    def on_finish(
        self, now: float, outcome: Outcome, *, latency: float, retry_after: float | None = None
    ) -> None:
        """A request to the host ended in ``outcome`` after ``latency`` seconds."""
        self._unpark(now)
        self._in_flight = max(0, self._in_flight - 1)
        params = self.params
        success = outcome in SUCCESS
        slow = success and self._too_slow(latency)
        if outcome in PUSHBACK or slow:
            self._pushbacks += 1
            self._limit = max(1.0, self._limit / 2.0)
            self._backoff = min(params.backoff_max, max(2.0 * self.gap(), 2.0 * self._backoff))
        elif success:
            self._limit = min(float(params.ceiling), self._limit + 1.0 / self._limit)
            self._backoff *= params.backoff_decay
            if self._backoff < self.base_gap():
                self._backoff = 0.0
        if success:
            self._observe_latency(latency)
        self._health += _HEALTH_ALPHA * ((1.0 if success else 0.0) - self._health)
        if retry_after is not None and retry_after >= 0:
            self._not_before = max(self._not_before, now + retry_after)
        if not self._parked and self._health < params.health_park:
            self._parked = True
            self._parked_until = now + params.park_seconds
            self._limit = 1.0

    def restore_wait(self, ready_at: float, backoff: float) -> None:
        """Take over a wait saved by an earlier run or another node: no request before
        ``ready_at``, and at least ``backoff`` between requests until it decays."""
        if math.isfinite(ready_at):
            self._not_before = max(self._not_before, ready_at)
        if math.isfinite(backoff) and backoff > 0:
            self._backoff = min(self.params.backoff_max, max(self._backoff, backoff))

    # -- snapshot --------------------------------------------------------------------

    def statistics(self) -> HostLimitStats:
        return HostLimitStats(
            in_flight=self._in_flight,
            limit=self._limit,
            gap=self.gap(),
            backoff=self._backoff,
            health=self._health,
            parked_until=self._parked_until,
            not_before=self._not_before,
            requests=self._requests,
            retries=self._retries,
            retry_ratio=self._retry_ratio(),
            pushbacks=self._pushbacks,
        )

    # -- internals -------------------------------------------------------------------

    def _retry_ratio(self) -> float:
        recent = self._recent_retries
        return sum(recent) / len(recent) if recent else 0.0

    def _too_slow(self, latency: float) -> bool:
        if self._latency_samples < _LATENCY_MIN_SAMPLES or latency <= self.params.latency_min:
            return False
        return latency > self.params.latency_factor * self._latency_baseline

    def _observe_latency(self, latency: float) -> None:
        if latency < 0 or not math.isfinite(latency):
            return
        if self._latency_samples == 0:
            self._latency_baseline = latency
        else:
            self._latency_baseline += _LATENCY_ALPHA * (latency - self._latency_baseline)
        self._latency_samples += 1

    def _unpark(self, now: float) -> None:
        """End a park whose time is over: back at the floor limit, health on probation."""
        if self._parked and now >= self._parked_until:
            self._parked = False
            self._limit = 1.0
            self._health = max(self._health, _HEALTH_AFTER_PARK)
