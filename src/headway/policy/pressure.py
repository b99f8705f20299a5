"""Host pressure (pure): whether a host's limiter holds it back, and the report of the
hosts known, in flight and parked with the most throttled first (``HostPressure``, what
``ScheduleCore.host_pressure`` returns)."""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass

from headway.policy.politeness import HostLimiter, HostLimitStats


@dataclass(frozen=True, slots=True)
class HostPressure:
    known: int  # hosts with a limiter in memory
    active: int  # hosts with a request in flight
    parked: int  # hosts parked (long Crawl-delay, or health cool-down)
    top: list[tuple[str, HostLimitStats]]  # most throttled first


def held_back(lim: HostLimiter, st: HostLimitStats, now: float) -> bool:
    """Whether the limiter holds its host back: a gap above its base, a backoff or a
    parking not yet over."""
    return st.gap > lim.base_gap() or st.not_before > now or st.parked_until > now


def host_pressure(
    limiters: dict[str, HostLimiter],
    watched: Iterable[str],
    parked: set[str],
    now: float,
    top: int,
) -> HostPressure:
    """The pressure over ``limiters`` (least recently used first): the ``top`` most
    throttled of ``watched`` hosts (those active or throttled), filled up with the most
    recently used; costs O(watched + top)."""
    candidates = set(watched)
    candidates.update(itertools.islice(reversed(limiters), top))
    stats = {h: limiters[h].statistics() for h in candidates if h in limiters}
    ranked = sorted(stats.items(), key=lambda kv: (-kv[1].gap, kv[1].limit))[:top]
    parked = parked | {h for h, st in stats.items() if st.parked_until > now}
    active = sum(1 for st in stats.values() if st.in_flight)
    return HostPressure(len(limiters), active, len(parked), ranked)
