"""Stage: bounded by items and by bytes, fair between keys, drained at a stop."""

from __future__ import annotations

import asyncio

from headway.runtime.stage import Stage


def _weighed(max_bytes: int, *, fair: bool = False) -> Stage[tuple[str, int]]:
    return Stage(
        "s",
        100,
        max_bytes=max_bytes,
        weight=lambda item: item[1],
        key=(lambda item: item[0]) if fair else None,
    )


async def test_bytes_bound_blocks_puts_until_a_get() -> None:
    stage = _weighed(1000)
    await stage.put(("a", 600))
    await stage.put(("a", 600))  # crosses the line: the one item allowed past it
    assert stage.full() and stage.statistics().bytes == 1200
    blocked = asyncio.create_task(stage.put(("a", 10)))
    await asyncio.sleep(0.01)
    assert not blocked.done() and len(stage) == 2
    assert await stage.get_batch(1) == [("a", 600)]
    await asyncio.wait_for(blocked, 1)
    assert len(stage) == 2 and stage.statistics().blocked_puts == 1


async def test_one_item_larger_than_the_bound_still_passes_an_empty_stage() -> None:
    stage = _weighed(1000)
    await asyncio.wait_for(stage.put(("a", 5000)), 1)
    assert stage.full()
    assert await stage.get_batch(4) == [("a", 5000)]
    assert not stage.full() and stage.statistics().bytes == 0


async def test_item_capacity_still_bounds() -> None:
    stage: Stage[int] = Stage("s", 2)
    await stage.put(1)
    await stage.put(2)
    assert stage.full()
    assert await stage.get_batch(5) == [1, 2]


async def test_keys_take_turns() -> None:
    stage = _weighed(10**9, fair=True)
    for i in range(5):
        await stage.put(("costly", i))
    await stage.put(("normal", 100))
    await stage.put(("other", 200))
    first = await stage.get_batch(3)
    assert first == [("costly", 0), ("normal", 100), ("other", 200)]
    assert await stage.get_batch(10) == [("costly", i) for i in range(1, 5)]


async def test_keys_share_by_cost_and_costly_items_go_alone() -> None:
    """With a cost per item (the parse queue: bytes to parse), a cheap key's items are
    taken before a costly key's backlog, and a batch stops before passing ``max_cost``."""
    stage: Stage[tuple[str, int]] = Stage(
        "s", 100, weight=lambda item: item[1], key=lambda item: item[0], cost=lambda i: i[1]
    )
    for i in range(4):
        await stage.put(("costly", 1000 + i))
    for i in range(3):
        await stage.put(("cheap", 10 + i))
    assert await stage.get_batch(8, max_cost=1100) == [
        ("cheap", 10),
        ("cheap", 11),
        ("cheap", 12),
        ("costly", 1000),
    ]
    assert await stage.get_batch(8, max_cost=1100) == [("costly", 1001)]
    assert stage.statistics().bytes == 1002 + 1003


async def test_holds_a_key_while_its_item_waits_in_the_stage_or_for_room() -> None:
    stage = _weighed(10, fair=True)
    await stage.put(("a", 10))
    blocked = asyncio.create_task(stage.put(("b", 1)))
    await asyncio.sleep(0.01)
    assert stage.holds("a") and stage.holds("b") and not stage.holds("c")
    assert await stage.get_batch(1) == [("a", 10)]
    await asyncio.wait_for(blocked, 1)
    assert not stage.holds("a") and stage.holds("b")
    assert await stage.get_batch(1) == [("b", 1)]
    assert not stage.holds("b")


async def test_without_key_it_is_fifo() -> None:
    stage = _weighed(10**9)
    for item in [("b", 1), ("a", 2), ("b", 3)]:
        await stage.put(item)
    assert await stage.get_batch(3) == [("b", 1), ("a", 2), ("b", 3)]


async def test_drain_nowait_empties_and_wakes_putters() -> None:
    stage = _weighed(10, fair=True)
    await stage.put(("a", 10))
    blocked = asyncio.create_task(stage.put(("b", 1)))
    await asyncio.sleep(0.01)
    assert await stage.drain_nowait() == [("a", 10)]
    await asyncio.wait_for(blocked, 1)
    assert len(stage) == 1 and stage.statistics().oldest_age >= 0


async def test_on_leave_names_a_key_once_its_last_waiting_item_is_taken() -> None:
    stage = _weighed(0, fair=True)
    left: list[object] = []
    stage.on_leave = left.append
    for item in (("a", 1), ("a", 2), ("b", 1)):
        await stage.put(item)
    assert await stage.get_batch(2) == [("a", 1), ("b", 1)]  # keys take turns
    assert left == ["b"] and stage.holds("a")  # a still has an item waiting
    assert await stage.get_batch(2) == [("a", 2)]
    assert left == ["b", "a"] and not stage.holds("a")


async def test_an_item_costlier_than_the_batch_bound_is_taken_at_once() -> None:
    """The parse queue's batches are bounded by cost; a page costlier than the bound is
    still handed out (alone), at once: a parser never waits on a batch that cannot form."""
    stage: Stage[tuple[str, int]] = Stage(
        "s", 100, weight=lambda item: item[1], key=lambda item: item[0], cost=lambda i: i[1]
    )
    await stage.put(("costly", 5_000_000))
    await stage.put(("cheap", 10))
    first = await asyncio.wait_for(stage.get_batch(8, max_cost=1_048_576), 1)
    second = await asyncio.wait_for(stage.get_batch(8, max_cost=1_048_576), 1)
    assert first + second == [("cheap", 10), ("costly", 5_000_000)]
    assert second == [("costly", 5_000_000)] and len(stage) == 0
