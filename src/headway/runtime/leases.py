"""The leases a node holds: what its lease heartbeat keeps alive.

A URL's lease is taken by the scheduler (``lease_many``) and ends when the URL is settled
in the frontier, or when the node releases its leases at a stop. In between the page may
wait for a fetch slot, a parser or the store longer than the lease lasts; the heartbeat
(``Node``) extends every held lease in one frontier call per beat, so a URL still in the
pipeline is never reclaimed and fetched again by another node while this one is alive.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable

from headway.frontier.store import FrontierStore, LeasedUrl
from headway.runtime.stats import LeaseStats
from headway.runtime.worker import ThreadWorker


class LeaseBook:
    """Ids of the leases this node holds. Not thread-safe: used on the event loop."""

    def __init__(self) -> None:
        self._ids: set[int] = set()
        self._beats = 0
        self._extended = 0

    def hold(self, leases: Iterable[LeasedUrl]) -> None:
        self._ids.update(u.id for u in leases)

    def drop(self, ids: Iterable[int]) -> None:
        """The leases of ``ids`` ended (settled or released)."""
        self._ids.difference_update(ids)

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
            ids = self.ids()
            if ids:
                extended = await fw.call(frontier.extend_leases, ids, clock(), lease_seconds)
                self.record_beat(extended)

    def statistics(self) -> LeaseStats:
        return LeaseStats(held=len(self._ids), beats=self._beats, extended=self._extended)
