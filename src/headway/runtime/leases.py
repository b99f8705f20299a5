"""The leases a node holds: what its lease heartbeat keeps alive.

A URL's lease is taken by the scheduler (``lease_many``) and ends when the URL is settled
in the frontier, or when the node releases its leases at a stop. In between the page may
wait for a fetch slot, a parser or the store longer than the lease lasts; the heartbeat
(``Node``) extends every held lease in one frontier call per beat, so a URL still in the
pipeline is never reclaimed and fetched again by another node while this one is alive.

A lease is only as good as its last confirmation: the book keeps, for each lease, when
it was taken or last extended by a heartbeat that began while it was still fresh. A
node that stalls (a long pause, ``SIGSTOP``, a slow Redis) can wake with leases that
ran out meanwhile and were reclaimed and handed to the node now holding the shard; it
must not send them. ``may_send`` says whether a lease is fresh: less than
``lease_seconds - guard`` old by this node's clock since Redis last confirmed it. A
stale lease is never confirmed again (a heartbeat cannot tell a reclaimed lease from a
live one); its URL is not sent, the lease is dropped and runs out in the frontier.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Iterable

from headway.frontier.store import FrontierStore, LeasedUrl
from headway.runtime.stats import LeaseStats
from headway.threads import ThreadWorker


class LeaseBook:
    """Ids of the leases this node holds, each with when Redis last confirmed it (the
    clock the leases were taken with). Not thread-safe: used on the event loop.
    ``lease_seconds`` infinite (the default) never calls a lease stale."""

    def __init__(self, lease_seconds: float = math.inf, *, guard: float = 0.0) -> None:
        self._ids: dict[int, float] = {}
        self._life = lease_seconds - guard
        self._beats = 0
        self._extended = 0

    def hold(self, leases: Iterable[LeasedUrl], at: float = -math.inf) -> None:
        """Leases taken with expiry ``at + lease_seconds``."""
        for u in leases:
            self._ids[u.id] = at

    def drop(self, ids: Iterable[int]) -> None:
        """The leases of ``ids`` ended (settled or released)."""
        for i in ids:
            self._ids.pop(i, None)

    def fresh(self, lease_id: int, now: float) -> bool:
        """Whether a held lease was confirmed less than ``lease_seconds - guard`` ago."""
        at = self._ids.get(lease_id)
        return at is not None and (math.isinf(self._life) or now < at + self._life)

    def may_send(self, lease_id: int, now: float) -> bool:
        """Whether the URL of ``lease_id`` may be sent now: its lease is fresh (a lease
        the book does not hold is not its business: True)."""
        return lease_id not in self._ids or self.fresh(lease_id, now)

    def confirm(self, ids: Iterable[int], at: float) -> None:
        """A heartbeat that began at ``at`` extended ``ids`` (all fresh at ``at``)."""
        for i in ids:
            if i in self._ids:
                self._ids[i] = at

    def clear(self) -> None:
        self._ids.clear()

    def ids(self) -> list[int]:
        return list(self._ids)

    def __len__(self) -> int:
        return len(self._ids)

    def record_beat(self, extended: int) -> None:
        """One heartbeat extended ``extended`` leases (fewer than it asked for when some
        were settled meanwhile)."""
        self._beats += 1
        self._extended += extended

    async def keep_alive(
        self,
        fw: ThreadWorker,
        frontier: FrontierStore,
        lease_seconds: float,
        *,
        clock: Callable[[], float],
    ) -> None:
        """The lease heartbeat, until cancelled: every quarter of a lease, every held
        lease is extended by a whole lease, in one ``extend_leases`` call on ``fw``."""
        while True:
            await asyncio.sleep(lease_seconds / 4)
            at = clock()
            ids = self.ids()
            if ids:
                fresh = [i for i in ids if self.fresh(i, at)]
                extended = await fw.call(frontier.extend_leases, ids, at, lease_seconds)
                self.confirm(fresh, at)
                self.record_beat(extended)

    def statistics(self) -> LeaseStats:
        return LeaseStats(held=len(self._ids), beats=self._beats, extended=self._extended)
