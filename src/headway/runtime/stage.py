"""Bounded queues between pipeline stages, with pressure statistics.

Every arrow of the pipeline is one ``Stage``: a put waits when the stage is full (and is
counted as a blocked put), so the slowest stage sets the pace of the ones before it.

A stage is full when it holds ``capacity`` items, or (with ``max_bytes``) when the items
it holds weigh ``max_bytes`` or more by its ``weight`` function: what a stage holds in
memory is at most ``max_bytes`` plus the one item that crossed the line. With a ``key``
function items are held per key (a host) and the keys share the stage's taker by the
``cost`` of their items (``policy.fairshare``: equal cost per key, so a key whose items
cost a hundred times more gets a hundredth of the turns; with no ``cost`` function every
item costs 1 and the keys take turns). A key with many waiting items cannot hold back the
items of the others. Without a key the stage is FIFO. ``drain_nowait`` takes every
waiting item out at once (a stop).
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections import Counter
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Generic, TypeVar

from headway.policy.fairshare import FairQueue

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class StageStats:
    name: str
    depth: int
    capacity: int
    oldest_age: float  # seconds the oldest waiting item has waited (0 when empty)
    puts: int
    blocked_puts: int  # puts that had to wait for room
    bytes: int = 0  # weight of the waiting items (0 when the stage is not weighed)
    max_bytes: int = 0  # the byte bound (0: none)


class Stage(Generic[T]):
    def __init__(
        self,
        name: str,
        capacity: int,
        *,
        max_bytes: int = 0,
        weight: Callable[[T], int] | None = None,
        key: Callable[[T], Hashable] | None = None,
        cost: Callable[[T], int] | None = None,
    ) -> None:
        self.name = name
        self.capacity = capacity
        self.max_bytes = max_bytes
        self._weight = weight
        self._key = key
        self._cost = cost
        self._waiting: FairQueue[tuple[float, int, T]] = FairQueue()  # (time put, weight, item)
        self._len = 0
        self._bytes = 0
        self._not_empty = asyncio.Condition()
        self._not_full = asyncio.Condition()
        self._puts = 0
        self._blocked = 0
        self._blocked_keys: Counter[Hashable] = Counter()  # keys of the puts waiting
        # called with a key whose last waiting item was taken (set by the stage's owner)
        self.on_leave: Callable[[Hashable], None] | None = None

    def __len__(self) -> int:
        return self._len

    def full(self) -> bool:
        if self._len >= self.capacity:
            return True
        return bool(self.max_bytes) and self._len > 0 and self._bytes >= self.max_bytes

    async def wait_room(self) -> None:
        """Return once the stage has room for one more item."""
        if self.full():
            async with self._not_full:
                await self._not_full.wait_for(lambda: not self.full())

    def holds(self, key: Hashable) -> bool:
        """Whether an item of ``key`` waits in the stage, or for room in it."""
        return key in self._waiting or key in self._blocked_keys

    async def put(self, item: T) -> None:
        key = self._key(item) if self._key is not None else None
        if self.full():
            self._blocked += 1
            self._blocked_keys[key] += 1
            try:
                async with self._not_full:
                    await self._not_full.wait_for(lambda: not self.full())
            finally:
                self._blocked_keys[key] -= 1
                if not self._blocked_keys[key]:
                    del self._blocked_keys[key]
        weight = self._weight(item) if self._weight is not None else 0
        cost = self._cost(item) if self._cost is not None else 1
        self._waiting.put(key, (time.monotonic(), weight, item), cost)
        self._len += 1
        self._bytes += weight
        self._puts += 1
        async with self._not_empty:
            self._not_empty.notify()

    def _take(self, max_items: int, max_cost: int = sys.maxsize) -> list[T]:
        out: list[T] = []
        for _, weight, item in self._waiting.take(max_items, max_cost):
            out.append(item)
            self._len -= 1
            self._bytes -= weight
        if self.on_leave is not None and self._key is not None:
            for key in {self._key(item) for item in out}:
                if not self.holds(key):
                    self.on_leave(key)
        return out

    async def get_batch(
        self, max_items: int, linger: float = 0.0, *, max_cost: int = sys.maxsize
    ) -> list[T]:
        """Wait for at least one item, then take up to ``max_items`` (waiting up to
        ``linger`` seconds for the batch to fill) in turn order: the first whatever its
        cost, then more while their costs add up to at most ``max_cost``."""
        async with self._not_empty:
            await self._not_empty.wait_for(lambda: self._len > 0)
        if linger > 0 and self._len < max_items:
            await asyncio.sleep(linger)
        out = self._take(max_items, max_cost)
        async with self._not_full:
            self._not_full.notify_all()
        return out

    async def drain_nowait(self) -> list[T]:
        """Take every waiting item out (in turn order) and wake the putters."""
        out = self._take(self._len)
        async with self._not_full:
            self._not_full.notify_all()
        return out

    def statistics(self) -> StageStats:
        now = time.monotonic()
        oldest = max((now - put for put, _, _ in self._waiting.heads()), default=0.0)
        return StageStats(
            self.name,
            self._len,
            self.capacity,
            oldest,
            self._puts,
            self._blocked,
            self._bytes,
            self.max_bytes,
        )
