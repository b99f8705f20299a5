"""The ``FrontierStore`` protocol and the values that cross it.

Contract shared by every backend (the contract suite in ``tests/frontier`` checks it):

- A URL is identified by its 64-bit signed fingerprint ``fp``. ``add`` admits a URL at
  most once per crawl: once seen, always seen, whether it was queued, fetched or shed.
- Life of an admitted URL: QUEUED -> LEASED -> DONE | FAILED, or back to QUEUED on
  RETRY, expired lease (``reclaim_expired``) or ``release_all_leases``.
- A host holds at most ``FrontierLimits.host_budget`` URLs in any state; the whole
  frontier holds at most ``max_queued`` QUEUED URLs. Past either cap the lowest-priority
  (numerically highest) queued URLs are shed, counted by reason in ``SHED_REASONS``.
- Every method is one transaction: after a crash the store is as it was after the last
  method that returned.
- Methods are synchronous and are called from one worker thread, never on the event loop.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from enum import IntEnum, StrEnum
from typing import Protocol

#: Reasons a URL is shed at admission (keys of ``AddResult.shed`` and ``FrontierCounts.shed``).
SHED_HOST_BUDGET = "host-budget"
SHED_FRONTIER_FULL = "frontier-full"
SHED_REASONS: tuple[str, ...] = (SHED_HOST_BUDGET, SHED_FRONTIER_FULL)


class UrlState(IntEnum):
    """Where an admitted URL is in its life (stored as an integer)."""

    QUEUED = 0
    LEASED = 1
    DONE = 2
    FAILED = 3


@dataclass(frozen=True, slots=True)
class UrlEntry:
    """A URL offered for admission. ``priority``: lower is better. ``fp``: the URL's
    64-bit signed fingerprint (``headway.urls.fingerprint.fingerprint``)."""

    url: str
    host: str
    depth: int
    priority: int
    fp: int
    via: str | None = None
    attempts: int = 0
    not_before: float = 0.0


@dataclass(frozen=True, slots=True)
class LeasedUrl:
    """A URL handed to a fetcher until ``lease_expires``; settle it with ``Completion(id)``."""

    id: int
    url: str
    host: str
    depth: int
    priority: int
    fp: int
    via: str | None
    attempts: int
    lease_expires: float


class Settle(StrEnum):
    """How a leased URL ends: DONE and FAILED are final, RETRY queues it again as one more
    attempt, REQUEUE puts it back untried (its attempts unchanged), e.g. while its host's
    robots.txt is unavailable."""

    DONE = "done"
    FAILED = "failed"
    RETRY = "retry"
    REQUEUE = "requeue"


@dataclass(frozen=True, slots=True)
class Completion:
    """Settles one lease. For RETRY the URL is QUEUED again with attempts + 1, not
    leasable before ``not_before``."""

    id: int
    settle: Settle
    not_before: float = 0.0


@dataclass(frozen=True, slots=True)
class AddResult:
    """What one admission batch did. ``shed`` counts by reason (evictions included);
    ``evicted`` counts queued URLs dropped to make room for better ones."""

    added: int
    duplicates: int
    shed: dict[str, int]
    evicted: int = 0


@dataclass(frozen=True, slots=True)
class FrontierCounts:
    """A snapshot of the frontier; ``shed`` holds the persisted totals by reason."""

    queued: int
    leased: int
    done: int
    failed: int
    seen: int
    hosts_queued: int
    shed: dict[str, int]


@dataclass(frozen=True, slots=True)
class FrontierLimits:
    """Caps of the frontier. Bloom sizing fixes its memory whatever the crawl size."""

    host_budget: int = 10_000
    max_queued: int = 10_000_000
    bloom_capacity: int = 10_000_000
    bloom_error: float = 0.001


class FrontierStore(Protocol):
    """The durable frontier: seen filter, per-host queues, leases, budgets."""

    def add(self, entries: Sequence[UrlEntry], now: float) -> AddResult:
        """Admit new URLs: unseen ones are marked seen and queued unless shed.
        Duplicates within the batch count once."""
        ...

    def complete(
        self, completions: Sequence[Completion], discovered: Sequence[UrlEntry], now: float
    ) -> AddResult:
        """In one transaction settle leased URLs and admit ``discovered`` (as ``add``).
        Settling an id that is not LEASED is ignored."""
        ...

    def ready_hosts(
        self, now: float, limit: int, exclude: Collection[str] = ()
    ) -> list[tuple[str, float]]:
        """Up to ``limit`` (host, ready_time) with queued URLs and ready_time <= now,
        soonest first; ready_time = max(host ready_at, earliest queued not_before)."""
        ...

    def next_ready_time(self, exclude: Collection[str] = ()) -> float | None:
        """Earliest ready time of any host with queued URLs; None when nothing is queued."""
        ...

    def set_host_ready_at(self, host: str, ready_at: float) -> None:
        """Persist the earliest time the host may be fetched again."""
        ...

    def lease(self, host: str, n: int, now: float, lease_seconds: float) -> list[LeasedUrl]:
        """Up to ``n`` queued URLs of ``host`` with not_before <= now, best priority then
        oldest first; they are LEASED until now + lease_seconds."""
        ...

    def drop_host(self, host: str, reason: str) -> int:
        """Mark every QUEUED URL of ``host`` FAILED; return how many."""
        ...

    def reclaim_expired(self, now: float, limit: int = 1000) -> int:
        """Return at most ``limit`` leases that expired before ``now`` to the queue."""
        ...

    def release_all_leases(self) -> int:
        """Return every LEASED URL to the queue (start-up of a single node, shutdown)."""
        ...

    def counts(self) -> FrontierCounts:
        """Current totals."""
        ...

    def get_meta(self, key: str) -> str | None:
        """A persisted string value, or None."""
        ...

    def set_meta(self, key: str, value: str) -> None:
        """Persist a string value."""
        ...

    def close(self) -> None:
        """Release the store; further calls are errors."""
        ...
