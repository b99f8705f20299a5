"""What the scheduler's pure core decides (``schedule.ScheduleCore.decide``), one frozen
value per kind of decision; the shell (``runtime/scheduler.py``) matches on the type. A
``SkippedUrl`` is also a work item: the store stage carries it on as it is
(``headway.work.items``)."""

from __future__ import annotations

from dataclasses import dataclass

from headway.frontier.store import LeasedUrl
from headway.policy.hoststate import HostState

#: The note of a URL settled without a fetch because robots.txt disallows it.
ROBOTS_DISALLOWED = "robots-disallowed"
#: The note of a queued URL settled without a fetch because an exclusion matches it.
EXCLUDED = "excluded"


@dataclass(frozen=True, slots=True)
class FetchRobots:
    host: str
    url: str  # the robots.txt URL


@dataclass(frozen=True, slots=True)
class FetchPage:
    lease: LeasedUrl
    retry: bool


@dataclass(frozen=True, slots=True)
class SkippedUrl:
    """A leased URL settled without a fetch: failed for good (``requeue_at`` None), or put
    back untried, not before ``requeue_at``. The scheduler decides it; the store stage
    carries it on as a work item."""

    lease: LeasedUrl
    note: str
    requeue_at: float | None = None

    @property
    def url(self) -> str:
        return self.lease.url

    @property
    def depth(self) -> int:
        return self.lease.depth


@dataclass(frozen=True, slots=True)
class DropHost:
    host: str
    reason: str


@dataclass(frozen=True, slots=True)
class LeaseFor:
    """Lease ``n`` URLs for each (host, n), all in one frontier call."""

    wants: tuple[tuple[str, int], ...]


@dataclass(frozen=True, slots=True)
class Refill:
    """Ask the frontier for up to ``limit`` ready hosts not in ``exclude``, and for its
    next ready time."""

    limit: int
    exclude: frozenset[str]


@dataclass(frozen=True, slots=True)
class SaveStates:
    """Persist these host states (merged over what is stored)."""

    states: tuple[tuple[str, HostState], ...]


@dataclass(frozen=True, slots=True)
class Wait:
    """Nothing to do before ``until`` (``math.inf``: until an event)."""

    until: float


Job = FetchRobots | FetchPage
Decision = FetchRobots | FetchPage | SkippedUrl | DropHost | LeaseFor | Refill | SaveStates | Wait
