"""The hosts a scheduler waits for, by the time each is next ready.

One live entry per host. ``advance`` moves a host that is in the heap up to an earlier
time without searching the heap: a new entry is pushed and the host's old one becomes
stale (its sequence number is no longer the host's) and is dropped when it reaches the
top, whatever the host did since. There is at most one stale entry per ``advance``, and
every reading (``top``, ``pop``, ``count``) skips them."""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import KeysView


class ReadyHeap:
    def __init__(self) -> None:
        self._heap: list[tuple[float, int, str]] = []
        self._seq = itertools.count()
        # host -> (its ready time, the sequence number of its live entry)
        self._live: dict[str, tuple[float, int]] = {}

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

    def top(self) -> float:
        """The earliest ready time (inf when empty); stale entries at the top dropped."""
        heap = self._heap
        while heap and not self._is_live(heap[0][1], heap[0][2]):
            heapq.heappop(heap)
        return heap[0][0] if heap else math.inf

    def pop(self) -> str:
        """Take the host with the earliest ready time out of the heap."""
        self.top()
        _, _, host = heapq.heappop(self._heap)
        del self._live[host]
        return host

    def count(self, now: float, *, ready: bool) -> int:
        """Hosts ready at ``now`` (``ready``) or still waiting then."""
        return sum(
            1 for t, seq, host in self._heap if (t <= now) == ready and self._is_live(seq, host)
        )
