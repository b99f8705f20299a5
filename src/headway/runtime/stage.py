"""Bounded FIFO queues between pipeline stages, with pressure statistics.

Every arrow of the pipeline is one ``Stage``: a put waits when the stage is full (and is
counted as a blocked put), so the slowest stage sets the pace of the ones before it.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class StageStats:
    name: str
    depth: int
    capacity: int
    oldest_age: float  # seconds the oldest waiting item has waited (0 when empty)
    puts: int
    blocked_puts: int  # puts that had to wait for room


class Stage(Generic[T]):
    def __init__(self, name: str, capacity: int) -> None:
        self.name = name
        self.capacity = capacity
        self._items: deque[tuple[float, T]] = deque()
        self._not_empty = asyncio.Condition()
        self._not_full = asyncio.Condition()
        self._puts = 0
        self._blocked = 0

    def __len__(self) -> int:
        return len(self._items)

    def full(self) -> bool:
        return len(self._items) >= self.capacity

    async def wait_room(self) -> None:
        """Return once the stage has room for one more item."""
        if self.full():
            async with self._not_full:
                await self._not_full.wait_for(lambda: not self.full())

    async def put(self, item: T) -> None:
        if self.full():
            self._blocked += 1
            async with self._not_full:
                await self._not_full.wait_for(lambda: not self.full())
        self._items.append((time.monotonic(), item))
        self._puts += 1
        async with self._not_empty:
            self._not_empty.notify()

    async def get_batch(self, max_items: int, linger: float = 0.0) -> list[T]:
        """Wait for at least one item, then take up to ``max_items`` (waiting up to
        ``linger`` seconds for the batch to fill)."""
        async with self._not_empty:
            await self._not_empty.wait_for(lambda: bool(self._items))
        if linger > 0 and len(self._items) < max_items:
            await asyncio.sleep(linger)
        out: list[T] = []
        while self._items and len(out) < max_items:
            out.append(self._items.popleft()[1])
        async with self._not_full:
            self._not_full.notify_all()
        return out

    def statistics(self) -> StageStats:
        oldest = time.monotonic() - self._items[0][0] if self._items else 0.0
        return StageStats(
            self.name, len(self._items), self.capacity, oldest, self._puts, self._blocked
        )
