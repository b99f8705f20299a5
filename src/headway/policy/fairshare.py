"""Sharing a stage between hosts by cost (pure): which waiting item is taken next.

``FairQueue`` holds items per key (a host), each with a cost (for the parse queue: the
bytes a parser reads, plus a fixed amount per page), and hands them out by weighted fair
queueing, a deficit round robin without rounds:

- a *virtual clock* ``vtime`` counts the cost an ideal taker shared equally by the keys
  with items waiting would have given each of them: taking an item moves it on by the
  item's cost divided by the number of keys that had items waiting;
- every key has a *finish tag*; an item put for key ``k`` finishes at
  ``max(vtime, finish[k]) + cost``, which becomes ``finish[k]``;
- the item with the lowest finish is taken next (ties: the one put first).

So keys with items waiting are served equal cost, not equal turns: a key whose items cost
a hundred times more gets a hundredth of the turns, and with equal costs the keys take
turns as in a round robin. A key that had nothing waiting starts from ``vtime``: its
cheap item is taken before the costly items already waiting (which finish later), yet
idle time is not saved up as credit for a later burst. Items of one key leave in the
order they were put.

``take(max_items, max_cost)`` takes a batch in that order: at least one item, then more
while the batch stays within ``max_cost``, so a costly item travels alone.
"""

from __future__ import annotations

import heapq
import itertools
from collections import deque
from collections.abc import Hashable, Iterator
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class _Entry(Generic[T]):
    finish: float  # on the virtual clock
    seq: int  # put order, breaks ties
    cost: int
    item: T


class FairQueue(Generic[T]):
    """Items per key, taken by weighted fair queueing on their costs."""

    def __init__(self) -> None:
        self._queues: dict[Hashable, deque[_Entry[T]]] = {}
        # (finish, seq, key) of the first item of each key with items
        self._heads: list[tuple[float, int, Hashable]] = []
        self._finish: dict[Hashable, float] = {}  # keys whose finish tag is ahead of vtime
        self._idle: list[tuple[float, int, Hashable]] = []  # (finish, seq, key): no items
        self._seq = itertools.count()
        self._len = 0
        self.vtime = 0.0

    def __len__(self) -> int:
        return self._len

    def __contains__(self, key: Hashable) -> bool:
        """Whether ``key`` has items waiting."""
        return key in self._queues

    def put(self, key: Hashable, item: T, cost: int) -> None:
        """Queue ``item`` for ``key``; ``cost`` is clamped at 1."""
        cost = max(1, cost)
        finish = max(self.vtime, self._finish.get(key, 0.0)) + cost
        self._finish[key] = finish
        entry = _Entry(finish, next(self._seq), cost, item)
        queue = self._queues.get(key)
        if queue is None:
            self._queues[key] = deque((entry,))
            self._push_head(key, entry)
        else:
            queue.append(entry)
        self._len += 1

    def pop(self) -> tuple[Hashable, T]:
        """Take the next item (IndexError when empty) with its key."""
        _, _, key = heapq.heappop(self._heads)
        queue = self._queues[key]
        entry = queue.popleft()
        self.vtime += entry.cost / len(self._queues)  # the keys that had items waiting
        self._len -= 1
        if queue:
            self._push_head(key, queue[0])
        else:
            del self._queues[key]
            heapq.heappush(self._idle, (self._finish[key], next(self._seq), key))
        self._forget_idle()
        return key, entry.item

    def _push_head(self, key: Hashable, entry: _Entry[T]) -> None:
        heapq.heappush(self._heads, (entry.finish, entry.seq, key))

    def take(self, max_items: int, max_cost: int) -> list[T]:
        """Up to ``max_items`` items in turn order: the first whatever its cost, then
        more while their costs add up to at most ``max_cost``."""
        out: list[T] = []
        spent = 0
        while self._heads and len(out) < max_items:
            cost = self._queues[self._heads[0][2]][0].cost
            if out and spent + cost > max_cost:
                break
            out.append(self.pop()[1])
            spent += cost
        return out

    def heads(self) -> Iterator[T]:
        """The first waiting item of every key (the oldest ones)."""
        return (queue[0].item for queue in self._queues.values())

    def _forget_idle(self) -> None:
        """Drop the finish tags of keys with no items once ``vtime`` has passed them:
        they start at ``vtime`` again, as keys never seen do (memory stays bounded by the
        keys recently served)."""
        idle = self._idle
        while idle and idle[0][0] <= self.vtime:
            finish, _, key = heapq.heappop(idle)
            if key not in self._queues and self._finish.get(key) == finish:
                del self._finish[key]
