"""The lease book: a lease is sent only while fresh by the node's own clock, and a
heartbeat that comes after a stall never makes a stale lease fresh again."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from headway.frontier.store import LeasedUrl
from headway.runtime.leases import LeaseBook


def lease(i: int) -> LeasedUrl:
    return LeasedUrl(i, f"http://a.sim/p/{i}", "a.sim", 1, 0, i, None, 0, 0.0)


def test_a_lease_is_fresh_for_its_life_less_the_guard() -> None:
    book = LeaseBook(10.0, guard=2.0)
    book.hold([lease(1)], 100.0)
    assert book.may_send(1, 107.9)
    assert not book.may_send(1, 108.0)
    assert book.may_send(99, 500.0)  # not held here: not the book's business


def test_a_confirmation_renews_only_what_it_names() -> None:
    book = LeaseBook(10.0, guard=2.0)
    book.hold([lease(1), lease(2)], 100.0)
    book.confirm([1], 105.0)
    assert book.may_send(1, 112.0) and not book.may_send(2, 112.0)


def test_an_unbounded_book_never_calls_a_lease_stale() -> None:
    book = LeaseBook()
    book.hold([lease(1)], 0.0)
    assert book.may_send(1, 1e12)


class _Worker:
    async def call(self, fn: Callable[..., Any], *args: Any) -> Any:
        return fn(*args)


class _Frontier:
    def __init__(self) -> None:
        self.extended: list[list[int]] = []

    def extend_leases(self, ids: list[int], now: float, seconds: float) -> int:
        self.extended.append(sorted(ids))
        return len(ids)


async def test_a_heartbeat_after_a_stall_leaves_the_stale_leases_stale() -> None:
    book = LeaseBook(1.0, guard=0.2)
    clock = [100.0]
    book.hold([lease(1)], 100.0)
    frontier = _Frontier()
    beat = asyncio.create_task(
        book.keep_alive(_Worker(), frontier, 1.0, clock=lambda: clock[0])  # type: ignore[arg-type]
    )
    await asyncio.sleep(0.3)  # one beat at 100.0: fresh, confirmed
    assert frontier.extended and book.may_send(1, 100.7)
    book.hold([lease(2)], 100.1)
    clock[0] = 105.0  # the node stalled for 5 s (leases of 1 s)
    await asyncio.sleep(0.3)  # a beat at 105.0: both stale by then
    beat.cancel()
    assert frontier.extended[-1] == [1, 2]  # extended (a page in the pipeline may be saved)
    assert not book.may_send(1, 105.0) and not book.may_send(2, 105.0)  # but never sent
