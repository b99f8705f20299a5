"""The ``FrontierStore`` protocol and the values that cross it.

Contract shared by every backend (the contract suite in ``tests/frontier`` checks it):

- A URL is identified by its 64-bit signed fingerprint ``fp``. ``add`` admits a URL at
  most once per crawl: once seen, always seen, whether it was queued, fetched or shed.
- What a URL is admitted with (depth, via, ``handler``) is stored with it and returned by
  every lease of it, across retries, requeues, reclaims and revisits.
- Every backend instance is built for one ``node_id`` (stable per crawl directory / node).
  A lease belongs to the node that took it.
- Life of an admitted URL: QUEUED -> LEASED -> DONE | FAILED, or back to QUEUED on
  RETRY / REQUEUE, on an expired lease (``reclaim_expired``, any node's), on
  ``release_own_leases`` (this node's), or on DONE with ``revisit_at`` (a recrawl).
  A page waiting for its revisit (QUEUED, fetched before) is PARKED by
  ``park_revisits`` (a run without recrawl: it leaves the queue, keeping its due time and
  validators) and QUEUED again, with the same due time, by ``unpark_revisits``.
- A node keeps the leases of URLs still in its pipeline alive with ``extend_leases``
  (a heartbeat); a lease it no longer holds (settled, reclaimed, leased by another node)
  is never extended, so a lease only outlives its expiry while its node is alive.
- Scheduling scope: ``ready_hosts`` and ``next_ready_time`` list only hosts this node may
  schedule (SQLite: every host; a shared backend: the hosts of the shards it holds).
- Payload digests (``find_payloads``/``put_payloads``) and per-host state
  (``get_host_states``/``put_host_states``) are shared by every node of a crawl.
- A host holds at most ``FrontierLimits.host_budget`` URLs in any state; the whole
  frontier holds at most ``max_queued`` QUEUED URLs. Past either cap the lowest-priority
  (numerically highest) queued URLs are shed, counted by reason in ``SHED_REASONS``.
- Every method is one transaction: after a crash the store is as it was after the last
  method that returned.
- Methods are synchronous and are called from one worker thread, never on the event loop.
- What a frontier shared by many nodes adds (the crawl's seeds stored once, node
  statistics published, restarts of the store) is a second protocol, ``SharedCrawl``,
  which ``shared()`` returns (None: a frontier of one node). Nothing outside a backend's
  package names a backend class.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum, StrEnum
from typing import Any, Protocol

#: Reasons a URL is shed at admission (keys of ``AddResult.shed`` and ``FrontierCounts.shed``).
SHED_HOST_BUDGET = "host-budget"
SHED_FRONTIER_FULL = "frontier-full"
SHED_REASONS: tuple[str, ...] = (SHED_HOST_BUDGET, SHED_FRONTIER_FULL)
#: The priority of a URL waiting for its revisit: better than any admitted URL's, so
#: shedding (which drops the worst) never drops a fetched page's due time.
REVISIT_PRIORITY = -1_000_000_000


class UrlState(IntEnum):
    """Where an admitted URL is in its life (stored as an integer)."""

    QUEUED = 0
    LEASED = 1
    DONE = 2
    FAILED = 3
    PARKED = 4


@dataclass(frozen=True, slots=True)
class UrlEntry:
    """A URL offered for admission. ``priority``: lower is better. ``fp``: the URL's
    64-bit signed fingerprint (``headway.urls.fingerprint.fingerprint``). ``validators``:
    stored as the URL's validators until its first DONE (recrawl: a sitemap's hint about
    it), returned by its first lease with ``fetches`` 0. ``handler``: the content handler
    the URL was admitted to be read with (``sitemap``, ``feed``: a document), stored with
    it and returned by every lease; None for an ordinary link."""

    url: str
    host: str
    depth: int
    priority: int
    fp: int
    via: str | None = None
    attempts: int = 0
    not_before: float = 0.0
    validators: str | None = None
    handler: str | None = None


@dataclass(frozen=True, slots=True)
class LeasedUrl:
    """A URL handed to a fetcher until ``lease_expires``; settle it with ``Completion(id)``.
    ``validators``: what the last DONE completion stored (None before); ``fetches``: how
    many times the URL was settled DONE before this lease; ``handler``: what it was
    admitted with (``UrlEntry.handler``; None for an ordinary link, and for every URL of
    a frontier written before the field existed)."""

    id: int
    url: str
    host: str
    depth: int
    priority: int
    fp: int
    via: str | None
    attempts: int
    lease_expires: float
    validators: str | None = None
    fetches: int = 0
    handler: str | None = None


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
    leasable before ``not_before``; REQUEUE likewise with attempts unchanged.

    DONE counts one more fetch of the URL and stores ``validators`` (an opaque string,
    e.g. ETag, Last-Modified, payload digest and interval as JSON; None keeps what was
    stored). With ``revisit_at`` set, DONE puts the URL back to QUEUED, not leasable
    before ``revisit_at``, attempts reset to 0, with priority ``REVISIT_PRIORITY`` (it
    counts as queued, not done, and is never shed)."""

    id: int
    settle: Settle
    not_before: float = 0.0
    revisit_at: float | None = None
    validators: str | None = None


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
    """A snapshot of the frontier; ``shed`` holds the persisted totals by reason.
    ``fetched``: DONE settlements over the crawl's life (each fetch of a recrawl, first
    fetches and revisits; equal to ``done`` without recrawl); ``revisits_parked``: pages
    waiting for a revisit that a run without recrawl set aside (``park_revisits``)."""

    queued: int
    leased: int
    done: int
    failed: int
    seen: int
    hosts_queued: int
    shed: dict[str, int]
    fetched: int = 0
    revisits_parked: int = 0


def counts_from_totals(
    totals: Mapping[str, int], shed: Mapping[str, int], hosts_queued: int
) -> FrontierCounts:
    """A backend's snapshot from its named totals (``queued``, ``leased``, ``done``,
    ``failed``, ``seen``, ``fetched``, ``parked``), its shed URLs by reason and its hosts
    with queued URLs; a total or a reason missing is 0."""
    return FrontierCounts(
        queued=totals.get("queued", 0),
        leased=totals.get("leased", 0),
        done=totals.get("done", 0),
        failed=totals.get("failed", 0),
        seen=totals.get("seen", 0),
        hosts_queued=hosts_queued,
        shed={r: shed.get(r, 0) for r in SHED_REASONS},
        fetched=totals.get("fetched", 0),
        revisits_parked=totals.get("parked", 0),
    )


@dataclass(frozen=True, slots=True)
class FoundUrl:
    """What a frontier holds of one URL (``headway why``): ``seen`` whether it was ever
    admitted; ``state`` where it is now, None when the frontier keeps no record of it
    (never seen, shed, or settled in a backend that drops settled records: Redis);
    ``owner`` the node leasing it."""

    seen: bool
    state: UrlState | None = None
    depth: int | None = None
    priority: int | None = None
    via: str | None = None
    attempts: int = 0
    not_before: float = 0.0
    fetches: int = 0
    lease_expires: float | None = None
    owner: str | None = None


@dataclass(frozen=True, slots=True)
class FrontierLimits:
    """Caps of the frontier. ``bloom_capacity``: the largest sizing of the seen filter
    (the embedded store's grows to it with the crawl; Redis bitmaps are sized for it)."""

    host_budget: int = 10_000
    max_queued: int = 10_000_000
    bloom_capacity: int = 10_000_000
    bloom_error: float = 0.001


class FrontierStore(Protocol):
    """The durable frontier: seen filter, per-host queues, leases, budgets, shared payload
    digests and per-host state. Built for one node (``node_id``)."""

    @property
    def node_id(self) -> str:
        """The node this instance leases for."""
        ...

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
        """Up to ``limit`` (host, ready_time) this node may schedule, with queued URLs and
        ready_time <= now, soonest first; ready_time = max(host ready_at, earliest queued
        not_before)."""
        ...

    def next_ready_time(self, exclude: Collection[str] = ()) -> float | None:
        """Earliest ready time of any host this node may schedule with queued URLs; None
        when there is none."""
        ...

    def set_host_ready_at(self, host: str, ready_at: float) -> None:
        """Persist the earliest time the host may be fetched again."""
        ...

    def lease_many(
        self,
        wants: Sequence[tuple[str, int]],
        now: float,
        lease_seconds: float,
        *,
        revisits_first: bool | None = None,
    ) -> list[LeasedUrl]:
        """For each (host, n): up to ``n`` queued URLs of ``host`` with not_before <= now,
        best priority then oldest first, LEASED to this node until now + lease_seconds.
        One transaction (one round trip) for the whole batch; results grouped by host in
        the order of ``wants``.

        ``revisits_first`` (recrawl): True takes due revisits (URLs fetched before,
        ``fetches > 0``) first, most overdue first; False takes new URLs first; either
        way the rest of ``n`` is filled by the plain order. None: the plain order only."""
        ...

    def extend_leases(self, ids: Sequence[int], now: float, lease_seconds: float) -> int:
        """Move the expiry of each of ``ids`` still LEASED by this node to
        now + lease_seconds; other ids (settled, reclaimed, another node's, unknown) are
        left alone. One transaction (one round trip); returns how many were extended."""
        ...

    def park_revisits(self) -> int:
        """Set aside every page waiting for its revisit (QUEUED and fetched before: not
        leasable, not counted as queued, never shed), keeping its due time and
        validators; return how many. For a run without recrawl."""
        ...

    def unpark_revisits(self) -> int:
        """Put every parked page back in its host queue as QUEUED with the due time it
        was parked with; return how many. For a run with recrawl."""
        ...

    def drop_host(self, host: str, reason: str) -> int:
        """Mark every QUEUED URL of ``host`` FAILED; return how many."""
        ...

    def reclaim_expired(self, now: float, limit: int = 1000) -> int:
        """Return at most ``limit`` leases (of any node) that expired before ``now`` to
        the queue, attempts unchanged; soonest expired first."""
        ...

    def release_own_leases(self) -> int:
        """Return every URL LEASED by this node to the queue (start-up recovery of this
        node, clean shutdown); other nodes' leases are untouched."""
        ...

    def find_payloads(self, digests: Sequence[str]) -> dict[str, tuple[str, str]]:
        """Payload digest -> (target URI, WARC-Date) of the first capture, for the known
        ones among ``digests``."""
        ...

    def put_payloads(self, items: Sequence[tuple[str, str, str]]) -> None:
        """Record (digest, target URI, WARC-Date) captures; the first writer of a digest
        wins, later ones are ignored."""
        ...

    def get_host_states(self, hosts: Sequence[str]) -> dict[str, str]:
        """The stored state string of each of ``hosts`` that has one."""
        ...

    def put_host_states(self, items: Sequence[tuple[str, str]]) -> None:
        """Store (host, state) pairs, replacing earlier values. States are opaque."""
        ...

    def host_counts(self, hosts: Sequence[str]) -> dict[str, tuple[int, int]]:
        """(queued, admitted) of each of ``hosts`` the frontier knows: its QUEUED URLs,
        and its URLs admitted in any state (what the host budget bounds)."""
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

    def shared(self) -> SharedCrawl | None:
        """What this frontier adds when the nodes of a crawl share it; None when it is
        one node's own. Does no IO."""
        ...

    def close(self) -> None:
        """Release the store; further calls are errors."""
        ...


class SharedCrawl(Protocol):
    """What the frontier of a crawl shared by many nodes adds (``FrontierStore.shared``).
    ``get_meta``/``set_meta_once``/``verify_epoch`` are called from the frontier's worker
    thread like the ``FrontierStore`` methods; the rest does no IO."""

    @property
    def store_url(self) -> str:
        """The store's URL with any password masked (for messages)."""
        ...

    @property
    def server_restarts(self) -> int:
        """Times the store was found restarted after an outage: it may have lost its last
        writes (recently admitted URLs, or the whole crawl)."""
        ...

    @property
    def crawl_lost(self) -> str | None:
        """Why the crawl is lost (one line: its keys are gone from the store, by a flush,
        eviction or a failover), once a call found it so; None while the store holds it."""
        ...

    def verify_epoch(self) -> None:
        """Check that the store still holds the crawl (its epoch); mark it lost if not."""
        ...

    def get_meta(self, key: str) -> str | None:
        """A value of the crawl (the seeds: ``"seeds"``), or None."""
        ...

    def set_meta_once(self, key: str, value: str) -> bool:
        """Set ``key`` unless it is set; True for the one caller, of all nodes, that set
        it (the crawl's seeds are stored once)."""
        ...

    def mark_seeded(self, hosts: Collection[str]) -> None:
        """Note, in the shard of each of ``hosts``, that seeds of it were admitted (call it
        once they were): a store that still has the note after a restart or a failover
        still has them, since each shard's writes are kept and replicated in order."""
        ...

    def seeded_hosts_lost(self, hosts: Collection[str]) -> set[str]:
        """Of ``hosts``, those whose shard lost the ``mark_seeded`` note: the store may
        have lost their seeds with it (offer them again)."""
        ...

    def publish(self, stats: Mapping[str, Any]) -> None:
        """This node's statistics, published with its next heartbeat (``headway
        status`` reads them)."""
        ...

    def publish_console(self, snapshot: bytes, ttl: float) -> None:
        """This node's console snapshot (JSON), kept ``ttl`` seconds unless renewed
        (``headway console --store ...`` reads them)."""
        ...

    def shards_held(self) -> int:
        """How many of the crawl's shards this node holds now."""
        ...
