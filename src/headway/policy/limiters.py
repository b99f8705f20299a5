"""The scheduler's per-host limiters (pure): one ``HostLimiter`` a host, made on first use
with the host's parameters (the configured limits, its ``--host-concurrency`` ceiling,
an operator's override), kept least recently used first so that the idle ones beyond a
bound can be forgotten (``ScheduleCore.forget_idle``)."""

from __future__ import annotations

import dataclasses
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterable, Mapping

from headway.policy.hoststate import HostWait, wait_of
from headway.policy.overrides import HostCeilings, HostOverride, OverrideBook, limit_params
from headway.policy.politeness import HostLimiter, HostLimitParams, HostLimitStats


class HostLimiters:
    """The limiters by host (``by_host``, least recently used first), made from ``base``,
    the configured ``ceilings`` and the operator's ``overrides``."""

    def __init__(
        self, base: HostLimitParams, ceilings: Mapping[str, int], overrides: OverrideBook
    ) -> None:
        self._base = base
        self._ceilings = HostCeilings(ceilings)
        self._overrides = overrides
        self.by_host: OrderedDict[str, HostLimiter] = OrderedDict()

    def get(self, host: str) -> HostLimiter:
        """The limiter of ``host``, made on first use; now the most recently used."""
        lim = self.by_host.get(host)
        if lim is None:
            lim = self.by_host[host] = HostLimiter(self._params_for(host))
        else:
            self.by_host.move_to_end(host)
        return lim

    def stats(self, hosts: Collection[str]) -> dict[str, HostLimitStats]:
        """The limits of each of ``hosts`` that has a limiter (creates none, moves none)."""
        return {h: self.by_host[h].statistics() for h in hosts if h in self.by_host}

    def gaps(self, hosts: Iterable[str]) -> dict[str, float]:
        """The current gap of each of ``hosts`` that has a limiter (creates none)."""
        return {h: self.by_host[h].gap() for h in hosts if h in self.by_host}

    def _params_for(self, host: str) -> HostLimitParams:
        base, ceiling = self._base, self._ceilings.get(host)
        base = base if ceiling is None else dataclasses.replace(base, ceiling=ceiling)
        return limit_params(base, self._overrides.get(host))

    def set_overrides(self, overrides: Mapping[str, HostOverride]) -> None:
        """Put an operator's per-host overrides in force (``policy/overrides.py``); a
        known host's limiter takes its new delay and concurrency at once."""
        for host in self._overrides.replace(overrides):
            if host in self.by_host:
                self.by_host[host].params = self._params_for(host)

    def forget(
        self, excess: int, idle: Callable[[str, HostLimiter], bool], now: float
    ) -> list[tuple[str, float, HostWait | None]]:
        """Drop up to ``excess`` of the least recently used limiters whose host is
        ``idle``; returns (host, ready_at, wait) of each."""
        victims: list[tuple[str, float, HostWait | None]] = []
        if excess <= 0:
            return victims
        for host, lim in self.by_host.items():
            if len(victims) >= excess:
                break
            if idle(host, lim):
                victims.append((host, lim.ready_at(), wait_of(lim, now)))
        for host, _, _ in victims:
            del self.by_host[host]
        return victims
