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
