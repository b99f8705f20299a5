"""The scheduler's heap of hosts by ready time, with hosts moved up in place."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from headway.policy.readyheap import ReadyHeap


def test_hosts_come_out_by_ready_time_and_an_advanced_host_once() -> None:
    h = ReadyHeap()
    h.push("a", 3.0)
    h.push("b", 2.0)
    h.push("c", 5.0)
    h.advance("c", 1.0)  # moved up: its entry at 5.0 is stale
    h.advance("b", 4.0)  # never later than it was
    assert h.top() == 1.0 and len(h) == 3
    assert h.count(2.0, ready=True) == 2 and h.count(2.0, ready=False) == 1
    assert [h.pop(), h.pop(), h.pop()] == ["c", "b", "a"]
    assert h.top() == math.inf and len(h) == 0 and "c" not in h  # the stale entry dropped


def test_a_host_pushed_again_after_its_pop_is_not_mistaken_for_its_stale_entry() -> None:
    h = ReadyHeap()
    h.push("a", 5.0)
    h.advance("a", 1.0)
    assert h.pop() == "a"
    h.push("a", 7.0)  # back, later than its stale entry at 5.0
    assert h.top() == 7.0 and h.count(6.0, ready=True) == 0
    assert h.pop() == "a" and h.top() == math.inf


@given(
    st.lists(st.tuples(st.sampled_from("abcdef"), st.floats(0, 100), st.booleans()), max_size=40)
)
def test_the_heap_agrees_with_a_dict_of_ready_times(ops: list[tuple[str, float, bool]]) -> None:
    h = ReadyHeap()
    want: dict[str, float] = {}
    for host, t, pop in ops:
        if pop and want:
            first = min(want.values())
            got = h.pop()
            assert want.pop(got) == first
        elif host in want:
            h.advance(host, t)
            want[host] = min(want[host], t)
        else:
            h.push(host, t)
            want[host] = t
        assert h.top() == min(want.values(), default=math.inf)
        assert set(h.hosts()) == set(want)
        assert h.count(50.0, ready=True) == sum(v <= 50.0 for v in want.values())


def test_with_a_rank_the_most_important_ready_host_comes_first() -> None:
    rank = {"a": 1.0, "b": 5.0, "c": 9.0, "d": 3.0}
    h = ReadyHeap(rank.__getitem__)
    h.push("a", 1.0)
    h.push("b", 2.0)
    h.push("c", 8.0)  # the most important, not ready at 3.0
    h.push("d", 3.0)
    assert h.pop(3.0) == "b" and h.pop(3.0) == "d" and h.pop(3.0) == "a"
    assert h.top() == 8.0  # nothing ready: the earliest is next
    assert h.pop(3.0) == "c" and len(h) == 0 and h.top() == math.inf


def test_a_ranked_host_advanced_after_it_was_found_ready_comes_out_once() -> None:
    h = ReadyHeap({"a": 1.0, "b": 2.0}.__getitem__)
    h.push("a", 1.0)
    h.push("b", 5.0)
    assert h.pop(2.0) == "a"
    h.push("a", 4.0)
    h.advance("a", 0.5)
    assert h.top() == 0.5 and h.count(1.0, ready=True) == 1
    assert h.pop(6.0) == "b" and h.pop(6.0) == "a" and len(h) == 0


@given(
    st.lists(
        st.tuples(st.sampled_from("abcdef"), st.floats(-3, 3), st.integers(0, 2), st.floats(0, 1)),
        max_size=60,
    ),
    st.dictionaries(st.sampled_from("abcdef"), st.floats(0, 10), min_size=6),
)
def test_a_ranked_pop_takes_the_best_ready_host_never_a_waiting_one(
    ops: list[tuple[str, float, int, float]], rank: dict[str, float]
) -> None:
    """Against a dict of ready times: a pop at ``now`` takes a host ready at ``now`` of
    the highest rank when one is ready (never one still waiting), else the earliest.
    Ready times fall within a few seconds of a clock that only moves forward."""
    h = ReadyHeap(rank.__getitem__)
    want: dict[str, float] = {}
    now = 0.0
    for host, offset, op, step in ops:
        now += step
        t = now + offset
        if op == 0 and want:
            ready = [x for x, at in want.items() if at <= now]
            got = h.pop(now)
            if ready:
                assert want[got] <= now
                assert rank[got] == max(rank[x] for x in ready)
            else:
                assert want[got] == min(want.values())
            del want[got]
        elif host in want:
            h.advance(host, t)
            want[host] = min(want[host], t)
        else:
            h.push(host, t)
            want[host] = t
        assert set(h.hosts()) == set(want)
        assert h.count(now, ready=True) == sum(v <= now for v in want.values())
        assert (h.top() <= now) == any(v <= now for v in want.values())
