"""Sharing the parser by cost: turns per key when costly keys wait beside cheap ones."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from headway.policy.fairshare import FairQueue

#: Costs as the parse queue counts them: a page of 1 MiB of links (what --max-parsed
#: leaves of a page decoding to 8 MB) and a page of 3 KB, each plus 4 KiB per page.
COSTLY = 1_048_576 + 4096
ORDINARY = 3_000 + 4096


def serve(keys: dict[str, tuple[int, int]], takes: int) -> Counter[str]:
    """Turns each key gets in ``takes`` takes, every key keeping ``waiting`` items of
    ``cost`` waiting all along (one put again for each one taken): keys ->
    (cost, waiting)."""
    queue: FairQueue[str] = FairQueue()
    for rank in range(max(waiting for _, waiting in keys.values())):
        for key, (cost, waiting) in keys.items():
            if rank < waiting:
                queue.put(key, key, cost)
    turns: Counter[str] = Counter()
    for _ in range(takes):
        key, item = queue.pop()
        assert key == item
        turns[key] += 1
        queue.put(key, key, keys[key][0])
    return turns


def costly(n: int, waiting: int = 1) -> dict[str, tuple[int, int]]:
    return {f"costly{i}": (COSTLY, waiting) for i in range(n)}


#: Turns an ordinary key takes while each costly key takes one (equal cost served).
PER_ROUND = COSTLY / ORDINARY  # 148.3
ROUNDS = 10

#: (case, keys -> (cost, items waiting), takes, expected turns of the keys named)
SHARES = [
    (
        "equal costs take turns",
        {"a": (500, 3), "b": (500, 1), "c": (500, 2)},
        300,
        {"a": 100, "b": 100, "c": 100},
    ),
    (
        "a hundred times the cost, a hundredth of the turns",
        {"costly": (100_000, 5), "cheap": (1_000, 5)},
        1010,
        {"costly": 10, "cheap": 1000},
    ),
    (
        "twice the cost, half the turns",
        {"a": (2_000, 1), "b": (1_000, 1)},
        300,
        {"a": 100, "b": 200},
    ),
    # in each round of service each costly key takes one turn, each ordinary PER_ROUND
    (
        "64 costly hosts beside one ordinary",
        {**costly(64), "ordinary": (ORDINARY, 1)},
        round(ROUNDS * (64 + PER_ROUND)),
        {"ordinary": round(ROUNDS * PER_ROUND), "costly0": ROUNDS, "costly63": ROUNDS},
    ),
    (
        "64 costly hosts, several pages each, beside one ordinary",
        {**costly(64, waiting=4), "ordinary": (ORDINARY, 3)},
        round(ROUNDS * (64 + PER_ROUND)),
        {"ordinary": round(ROUNDS * PER_ROUND), "costly0": ROUNDS},
    ),
    (
        "64 costly hosts beside four ordinary",
        {**costly(64), **{f"ordinary{i}": (ORDINARY, 1) for i in range(4)}},
        round(ROUNDS * (64 + 4 * PER_ROUND)),
        {
            "ordinary0": round(ROUNDS * PER_ROUND),
            "ordinary3": round(ROUNDS * PER_ROUND),
            "costly5": ROUNDS,
        },
    ),
]


@pytest.mark.parametrize(
    ("keys", "takes", "expected"), [row[1:] for row in SHARES], ids=[row[0] for row in SHARES]
)
def test_keys_waiting_share_turns_by_cost(
    keys: dict[str, tuple[int, int]], takes: int, expected: dict[str, int]
) -> None:
    turns = serve(keys, takes)
    assert sum(turns.values()) == takes
    for key, want in expected.items():
        # within one turn of a costly key's worth of the ordinary's, and one turn
        assert abs(turns[key] - want) <= max(1, want // 50), (key, turns[key], want)


#: (case, costly keys, items each, takes before the ordinary item comes, its cost)
ARRIVALS = [
    ("first of all", 64, 1, 0, ORDINARY),
    ("after a few costly pages", 64, 1, 10, ORDINARY),
    ("costly hosts with backlogs", 64, 5, 100, ORDINARY),
    ("one costly host with a backlog", 1, 50, 10, ORDINARY),
    ("a page as costly as the others", 64, 3, 70, COSTLY // 2),
]


@pytest.mark.parametrize(
    ("hosts", "each", "before", "cost"),
    [row[1:] for row in ARRIVALS],
    ids=[row[0] for row in ARRIVALS],
)
def test_a_key_with_nothing_waiting_is_next(hosts: int, each: int, before: int, cost: int) -> None:
    """The next item of a key that had nothing waiting (an ordinary host's next page)
    is taken before the costlier items already waiting, not after a turn of every key."""
    queue: FairQueue[str] = FairQueue()
    for _ in range(each):
        for i in range(hosts):
            queue.put(f"costly{i}", "costly", COSTLY)
    for _ in range(before):
        queue.pop()
    queue.put("ordinary", "ordinary", cost)
    assert queue.pop() == ("ordinary", "ordinary")


def test_a_steady_cheap_key_waits_for_at_most_one_costly_item() -> None:
    """An ordinary host whose next page comes some takes after its last one was taken,
    beside 64 costly hosts that always have one waiting: while its page waits at most one
    costly item is taken (a round robin would take up to 64)."""
    queue: FairQueue[str] = FairQueue()
    for i in range(64):
        queue.put(f"costly{i}", f"costly{i}", COSTLY)
    waiting = False
    behind = worst = turns = 0
    for step in range(3000):
        if step % 3 == 0 and not waiting:
            queue.put("ordinary", "ordinary", ORDINARY)  # fetched while others were parsed
            waiting, behind = True, 0
        key, _ = queue.pop()
        if key == "ordinary":
            waiting, turns = False, turns + 1
            worst = max(worst, behind)
        else:
            behind += waiting
            queue.put(key, key, COSTLY)
    assert turns == 1000
    assert worst <= 1


def test_idle_time_is_not_credit() -> None:
    """A key that waited idle while another was served does not then take a run of
    turns: from its return the two share evenly."""
    queue: FairQueue[str] = FairQueue()
    for _ in range(200):
        queue.put("busy", "busy", 1000)
    for _ in range(100):
        queue.pop()
    for _ in range(100):
        queue.put("back", "back", 1000)
    first = Counter(queue.pop()[0] for _ in range(20))
    assert first == {"busy": 10, "back": 10}


def test_one_key_keeps_its_order() -> None:
    queue: FairQueue[int] = FairQueue()
    for i, cost in enumerate([5, 1, 900, 2, 2]):
        queue.put("a", i, cost)
    queue.put("b", 99, 10)
    assert [item for item in queue.take(10, 10**9) if item != 99] == [0, 1, 2, 3, 4]


#: (case, costs waiting for one key, max_items, max_cost, expected batch sizes)
BATCHES = [
    ("cheap pages fill a batch", [5_000] * 12, 8, 1_048_576, [8, 4]),
    ("a costly page goes alone", [COSTLY, COSTLY], 8, 1_048_576, [1, 1]),
    (
        "a costly page ends a batch of cheap ones",
        [5_000, 5_000, COSTLY, 5_000],
        8,
        1_048_576,
        [2, 1, 1],
    ),
    ("costs up to the bound", [400_000, 400_000, 400_000], 8, 800_000, [2, 1]),
]


@pytest.mark.parametrize(
    ("costs", "max_items", "max_cost", "sizes"),
    [row[1:] for row in BATCHES],
    ids=[row[0] for row in BATCHES],
)
def test_take_bounds_a_batch_by_cost(
    costs: list[int], max_items: int, max_cost: int, sizes: list[int]
) -> None:
    queue: FairQueue[int] = FairQueue()
    for i, cost in enumerate(costs):
        queue.put("a", i, cost)
    got = []
    for _ in costs:  # bounded: each take takes at least one item
        if not len(queue):
            break
        got.append(len(queue.take(max_items, max_cost)))
    assert got == sizes
    assert len(queue) == 0


def test_an_item_costlier_than_the_batch_bound_is_taken_alone() -> None:
    """The first item of a take goes whatever its cost: a page costlier than the whole
    batch bound waits its turn, never for ever."""
    queue: FairQueue[str] = FairQueue()
    queue.put("huge", "huge", 10 * 1_048_576)
    assert queue.take(8, 1_048_576) == ["huge"]
    queue.put("huge", "huge again", 10 * 1_048_576)
    queue.put("small", "small", 10)
    assert queue.take(8, 1_048_576) == ["small"]  # the cheap one first, then ...
    assert queue.take(8, 1_048_576) == ["huge again"]  # ... the costly one, alone
    assert len(queue) == 0


def test_finish_tags_of_idle_keys_are_forgotten() -> None:
    """Memory stays bounded by the keys recently served, however many keys came by."""
    queue: FairQueue[str] = FairQueue()
    for i in range(10_000):
        queue.put(f"once{i}", "x", 100)
        queue.put("steady", "y", 100)
        queue.pop()
        queue.pop()
    assert len(queue) == 0
    assert len(queue._finish) <= 2  # the bound under test


def test_a_backlogged_key_behind_the_clock_does_not_jump_a_key_that_came_back() -> None:
    """A key's items can fall behind the virtual clock while it waits (here ``a``'s
    second item, tagged 4, once the clock passed it at 4.5). Its next item starts from
    the clock like every other key's: tagged 7.5, as is ``b``'s item put just before
    it, and the tie goes to the item put first; starting from its old tag it would
    finish at 7 and take ``b``'s turn."""
    queue: FairQueue[str] = FairQueue()
    queue.put("b", "b1", 3)
    queue.put("a", "a1", 3)
    assert queue.pop() == ("b", "b1")  # the tie: put first
    queue.put("a", "a2", 1)  # behind a1, tagged 3 + 1
    assert queue.pop() == ("a", "a1")
    assert queue.vtime == 4.5 and "a" in queue  # a2 (tagged 4) is behind the clock
    queue.put("b", "b2", 3)  # b comes back: 4.5 + 3
    queue.put("a", "a3", 3)  # a, backlogged: from the clock too, not from 4
    assert queue._finish == {"a": 7.5, "b": 7.5}
    assert [queue.pop()[1] for _ in range(3)] == ["a2", "b2", "a3"]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.tuples(st.sampled_from("abcd"), st.sampled_from([1, 3, 100, 5000])),
            st.just(None),
        ),
        max_size=80,
    )
)
def test_property_no_item_is_tagged_behind_the_virtual_clock(
    ops: list[tuple[str, int] | None],
) -> None:
    """Whatever came before (keys idle, backlogged, forgotten), an item put finishes at
    least its cost past the virtual clock: no key, returning or backlogged, starts
    behind it, and items are taken in tag order (ties: put first)."""
    queue: FairQueue[int] = FairQueue()
    tags: dict[int, tuple[float, int]] = {}
    for seq, op in enumerate(ops):
        if op is None:
            if len(queue):
                _, item = queue.pop()
                first = min((tag for i, tag in tags.items() if i in waiting(queue)), default=None)
                assert first is None or tags[item] <= first
                del tags[item]
            continue
        key, cost = op
        clock = queue.vtime
        queue.put(key, seq, cost)
        finish = queue._finish[key]
        assert finish >= clock + cost
        tags[seq] = (finish, seq)


def waiting(queue: FairQueue[int]) -> set[int]:
    """The items still waiting in ``queue``."""
    return {entry.item for q in queue._queues.values() for entry in q}
