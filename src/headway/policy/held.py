"""Leased URLs waiting for their host's turn (pure): the scheduler's per-host lease queue.

A host is leased several URLs in one frontier call (as many as it may fetch in the next
few seconds, see ``ScheduleCore``); they wait here, in the order the frontier gave them,
and leave one at a time when the host may start a request, or all at once when the host
is dropped or its robots.txt cannot be read. Every one of them holds a lease in the
frontier until it is settled, so a crash loses none (they are put back at the next
start) and the lease heartbeat keeps them alive while they wait.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator

from headway.frontier.store import LeasedUrl


def lease_count(gap: float, ahead: int, horizon: float) -> int:
    """URLs to lease for a host at once: the fetches its ``gap`` (seconds between
    requests) allows within ``horizon`` seconds, at least 1 and at most ``ahead``."""
    n = ahead if gap <= 0 else int(horizon / gap)
    return max(1, min(n, ahead))


class HeldLeases:
    """Per-host queues of leased URLs, and their total count in O(1)."""

    __slots__ = ("_by_host", "_count")

    def __init__(self) -> None:
        self._by_host: dict[str, deque[LeasedUrl]] = {}
        self._count = 0

    def __contains__(self, host: object) -> bool:
        return host in self._by_host

    def __len__(self) -> int:
        """URLs held, over every host."""
        return self._count

    def hosts(self) -> Iterator[str]:
        return iter(self._by_host)

    def count(self, host: str) -> int:
        queue = self._by_host.get(host)
        return len(queue) if queue is not None else 0

    def add(self, lease: LeasedUrl) -> None:
        """Hold ``lease`` behind the host's other held URLs."""
        self._by_host.setdefault(lease.host, deque()).append(lease)
        self._count += 1

    def first(self, host: str) -> LeasedUrl | None:
        """The host's next URL, left in place."""
        queue = self._by_host.get(host)
        return queue[0] if queue else None

    def pop(self, host: str) -> LeasedUrl:
        """Take the host's next URL (``first`` must have returned one)."""
        queue = self._by_host[host]
        lease = queue.popleft()
        if not queue:
            del self._by_host[host]
        self._count -= 1
        return lease

    def pop_all(self, host: str) -> list[LeasedUrl]:
        """Take every URL the host holds, in order."""
        queue = self._by_host.pop(host, None)
        if queue is None:
            return []
        self._count -= len(queue)
        return list(queue)
