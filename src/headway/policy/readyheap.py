"""The hosts a scheduler waits for, by the time each is next ready, and among the hosts
ready, by importance.

One live entry per host. ``advance`` moves a host that is in the heap up to an earlier
time without searching the heap: a new entry is pushed and the host's old one becomes
stale (its sequence number is no longer the host's) and is dropped when it reaches the
top, whatever the host did since. There is at most one stale entry per ``advance``, and
every reading (``top``, ``pop``, ``count``) skips them.

``pop(now)`` takes the earliest host when the heap has no ``rank``. With a ``rank``
(higher: more important), every host ready at ``now`` first moves to a second heap
ordered by its rank as it is when it moves (ties: the earlier arrival), and ``pop`` takes
the most important of them: among the hosts politeness lets go, importance chooses; a
host not ready yet is never taken while one is ready."""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Callable, KeysView


class ReadyHeap:
    def __init__(self, rank: Callable[[str], float] | None = None) -> None:
        self._heap: list[tuple[float, int, str]] = []
        self._seq = itertools.count()
        # host -> (its ready time, the sequence number of its live entry)
        self._live: dict[str, tuple[float, int]] = {}
        self._rank = rank
        # hosts found ready by a pop: (-rank, seq, host); their ready times are in _live
        self._due: list[tuple[float, int, str]] = []
        self._due_min = math.inf  # no later than the earliest ready time in _due

    def __contains__(self, host: str) -> bool:
        return host in self._live

    def __len__(self) -> int:
        return len(self._live)

    def hosts(self) -> KeysView[str]:
        return self._live.keys()

    def push(self, host: str, ready_at: float) -> None:
        """Add ``host`` (not in the heap) ready at ``ready_at``."""
        seq = next(self._seq)
        heapq.heappush(self._heap, (ready_at, seq, host))
        self._live[host] = (ready_at, seq)

    def advance(self, host: str, ready_at: float) -> None:
        """Move ``host`` (in the heap) up to ``ready_at``; never later than it was."""
        if ready_at < self._live[host][0]:
            self.push(host, ready_at)  # the new entry is the live one, the old goes stale

    def _is_live(self, seq: int, host: str) -> bool:
        live = self._live.get(host)
        return live is not None and live[1] == seq

    def _clean_due(self) -> None:
        due = self._due
        while due and not self._is_live(due[0][1], due[0][2]):
            heapq.heappop(due)
        if not due:
            self._due_min = math.inf

    def top(self) -> float:
        """The earliest ready time (inf when empty); stale entries at the top dropped."""
        heap = self._heap
        while heap and not self._is_live(heap[0][1], heap[0][2]):
            heapq.heappop(heap)
        self._clean_due()
        return min(heap[0][0] if heap else math.inf, self._due_min)

    def pop(self, now: float = math.inf) -> str:
        """Take the next host out of the heap: the earliest, or with a ``rank`` the most
        important of those ready at ``now`` (the earliest when none is)."""
        if self._rank is not None:
            heap = self._heap
            while heap and heap[0][0] <= now:
                ready_at, seq, host = heapq.heappop(heap)
                if self._is_live(seq, host):
                    heapq.heappush(self._due, (-self._rank(host), seq, host))
                    self._due_min = min(self._due_min, ready_at)
            self._clean_due()
            if self._due:
                _, _, host = heapq.heappop(self._due)
                del self._live[host]
                self._clean_due()
                return host
        self.top()
        _, _, host = heapq.heappop(self._heap)
        del self._live[host]
        return host

    def count(self, now: float, *, ready: bool) -> int:
        """Hosts ready at ``now`` (``ready``) or still waiting then."""
        return sum(1 for t, _ in self._live.values() if (t <= now) == ready)
