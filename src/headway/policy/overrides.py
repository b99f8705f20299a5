"""Per-host overrides set by an operator while a crawl runs (pure), like Heritrix's
per-domain overlays: one host's delay, budget or concurrency, or its exclusion.

Contract:

- An override names one host exactly as the frontier keys it (lower-case, ``:port`` when
  not the default); it never spreads to other hosts of the site.
- ``delay`` replaces the configured delay (``--delay``) of the host; the robots.txt
  Crawl-delay and the pushback backoff still apply on top of it, so an override never
  lets a host be fetched sooner than its robots.txt asks.
- ``concurrency`` replaces the host's ceiling of requests in flight (``--host-concurrency``).
- ``budget`` caps the pages of the host this node starts to fetch in this run once the
  override is in force (counted by the scheduler); when the cap is reached the host's
  queued URLs are dropped, like an excluded host's.
- ``exclude``: no further fetch of the host; its queued and held URLs are dropped.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass

from headway.policy.politeness import HostLimitParams
from headway.urls.domain import match_host, strip_port

#: Why a host's URLs were dropped by an override (the note in the crawl log).
EXCLUDED = "excluded"
OVER_BUDGET = "host-budget-override"


@dataclass(frozen=True, slots=True)
class HostOverride:
    """What an operator set for one host; None leaves the crawl's setting in force."""

    delay: float | None = None
    budget: int | None = None
    concurrency: int | None = None
    exclude: bool = False

    def __post_init__(self) -> None:
        if self.delay is not None and not (math.isfinite(self.delay) and self.delay >= 0):
            raise ValueError("delay must be a number of seconds, at least 0")
        if self.budget is not None and self.budget < 0:
            raise ValueError("budget must be at least 0")
        if self.concurrency is not None and self.concurrency < 1:
            raise ValueError("concurrency must be at least 1")

    def merged(self, later: HostOverride) -> HostOverride:
        """This override with the values ``later`` sets replacing its own."""
        return HostOverride(
            delay=later.delay if later.delay is not None else self.delay,
            budget=later.budget if later.budget is not None else self.budget,
            concurrency=later.concurrency if later.concurrency is not None else self.concurrency,
            exclude=self.exclude or later.exclude,
        )


def limit_params(base: HostLimitParams, override: HostOverride | None) -> HostLimitParams:
    """The limiter parameters of a host under ``override`` (``base`` when None)."""
    if override is None or (override.delay is None and override.concurrency is None):
        return base
    changes: dict[str, object] = {}
    if override.delay is not None:
        changes["min_gap"] = override.delay
    if override.concurrency is not None:
        changes["ceiling"] = override.concurrency
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


class HostCeilings:
    """Configured per-host ceilings of requests in flight (``--host-concurrency``):
    ``HOST[:PORT]=N`` for one host, ``*.SUFFIX=N`` for every host under a domain."""

    __slots__ = ("_exact", "_suffix")

    def __init__(self, ceilings: Mapping[str, int]) -> None:
        self._exact = {k: v for k, v in ceilings.items() if not k.startswith("*.")}
        self._suffix = {k[2:]: v for k, v in ceilings.items() if k.startswith("*.")}

    def get(self, host: str) -> int | None:
        """The ceiling of ``host`` (may carry ``:port``): a HOST:PORT entry, else the
        host's own or nearest ``*.suffix`` entry; None when none is configured."""
        if not self._exact and not self._suffix:
            return None
        ceiling = self._exact.get(host)
        if ceiling is None:
            ceiling = match_host(strip_port(host), self._exact, self._suffix)
        return ceiling


class OverrideBook:
    """The overrides in force and the pages fetched under each budget."""

    __slots__ = ("_by_host", "_fetched")

    def __init__(self) -> None:
        self._by_host: dict[str, HostOverride] = {}
        self._fetched: dict[str, int] = {}

    def get(self, host: str) -> HostOverride | None:
        return self._by_host.get(host)

    def replace(self, overrides: Mapping[str, HostOverride]) -> set[str]:
        """Put ``overrides`` in force (every other host back to the crawl's settings);
        returns the hosts whose override changed. A budget counts from the moment it is
        set (or changed)."""
        changed = {h for h in self._by_host.keys() | overrides.keys()}
        changed = {h for h in changed if self._by_host.get(h) != overrides.get(h)}
        for host in changed:
            old, new = self._by_host.get(host), overrides.get(host)
            if new is None or new.budget is None:
                self._fetched.pop(host, None)
            elif old is None or old.budget != new.budget:
                self._fetched[host] = 0
        self._by_host = dict(overrides)
        return changed

    def stop_reason(self, host: str) -> str | None:
        """Why ``host`` may not be fetched any more (None: it may)."""
        o = self._by_host.get(host)
        if o is None:
            return None
        if o.exclude:
            return EXCLUDED
        if o.budget is not None and self._fetched.get(host, 0) >= o.budget:
            return OVER_BUDGET
        return None

    def on_fetch(self, host: str) -> None:
        """A page fetch of ``host`` starts (counted against its budget)."""
        if host in self._fetched:
            self._fetched[host] += 1

    def fetched(self, host: str) -> int:
        """Pages of ``host`` started since its budget was set (0 without a budget)."""
        return self._fetched.get(host, 0)

    def __len__(self) -> int:
        return len(self._by_host)
