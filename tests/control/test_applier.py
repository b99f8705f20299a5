"""The node's control task against a log in memory and hooks that record: what is
applied at start, what a poll applies, and that each control is applied once."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from headway.control.applier import STOPPED_BY_CONTROL, ControlApplier
from headway.control.log import Control, ControlKind
from headway.errors import StoreError
from headway.policy.overrides import HostOverride

START = 1_000.0


class MemoryLog:
    def __init__(self) -> None:
        self.rows: list[Control] = []
        self.fail = False

    def append(
        self,
        kind: ControlKind,
        args: Mapping[str, Any],
        *,
        node: str | None,
        origin: str,
        at: float,
    ) -> Control:
        c = Control(len(self.rows) + 1, kind, node, dict(args), origin, at)
        self.rows.append(c)
        return c

    def read_after(self, seq: int, limit: int = 1000) -> list[Control]:
        if self.fail:
            raise StoreError("store down")
        return self.rows[seq : seq + limit]

    def close(self) -> None:
        pass


class Hooks:
    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def pause(self) -> None:
        self.calls.append(("pause", None))

    def resume(self) -> None:
        self.calls.append(("resume", None))

    def request_stop(self, reason: str) -> None:
        self.calls.append(("stop", reason))

    async def add_seeds(self, urls: Sequence[str]) -> int:
        self.calls.append(("seeds", tuple(urls)))
        return len(urls)

    async def opt_out(self, domains: Sequence[str]) -> int:
        self.calls.append(("opt-out", tuple(domains)))
        return 7

    def set_host_overrides(self, overrides: Mapping[str, HostOverride]) -> None:
        self.calls.append(("hosts", dict(overrides)))


def add(log: MemoryLog, kind: str, at: float, node: str | None = None, **args: Any) -> None:
    log.append(ControlKind(kind), args, node=node, origin="test", at=at)


async def test_start_applies_the_state_of_the_log_but_not_an_old_stop() -> None:
    log, hooks = MemoryLog(), Hooks()
    add(log, "pause", START - 50)
    add(log, "add-seeds", START - 40, urls=["https://a.example/"])
    add(log, "opt-out", START - 30, domain="o.example")
    add(log, "host-override", START - 20, host="h.example", delay=4.0)
    add(log, "stop", START - 10)
    applier = ControlApplier(log, hooks, node="n1", started_at=START)
    await applier.start()
    assert hooks.calls == [
        ("hosts", {"h.example": HostOverride(delay=4.0)}),
        ("opt-out", ("o.example",)),
        ("seeds", ("https://a.example/",)),
        ("pause", None),
    ]
    st = applier.statistics()
    assert (st.seq, st.paused, st.seeds_added, st.optout_dropped) == (5, True, 1, 7)


async def test_a_poll_applies_new_controls_once_each() -> None:
    log, hooks = MemoryLog(), Hooks()
    applier = ControlApplier(log, hooks, node="n1", started_at=START)
    await applier.start()
    assert hooks.calls == []
    add(log, "pause", START + 1)
    add(log, "pause", START + 2, node="n2")  # another node's
    await applier.poll()
    await applier.poll()
    assert hooks.calls == [("pause", None)]
    add(log, "resume", START + 3, node="n1")
    add(log, "add-seeds", START + 4, urls=["https://b.example/", "https://c.example/"])
    add(log, "add-seeds", START + 5, urls=["https://c.example/"])  # known: not again
    add(log, "stop", START + 6, node="n2")
    await applier.poll()
    assert hooks.calls[1:] == [
        ("seeds", ("https://b.example/", "https://c.example/")),
        ("resume", None),
    ]
    add(log, "host-exclude", START + 7, host="x.example")
    add(log, "stop", START + 8)
    await applier.poll()
    assert hooks.calls[3:] == [
        ("hosts", {"x.example": HostOverride(exclude=True)}),
        ("stop", STOPPED_BY_CONTROL),
    ]


async def test_a_stop_recorded_after_the_start_but_before_the_first_read_counts() -> None:
    log, hooks = MemoryLog(), Hooks()
    add(log, "stop", START + 0.5)
    applier = ControlApplier(log, hooks, node="n1", started_at=START)
    await applier.start()
    assert hooks.calls == [("stop", STOPPED_BY_CONTROL)]


async def test_an_unreadable_log_is_retried_at_the_next_poll() -> None:
    log, hooks = MemoryLog(), Hooks()
    applier = ControlApplier(log, hooks, node="n1", started_at=START)
    await applier.start()
    add(log, "pause", START + 1)
    log.fail = True
    await applier.poll()
    assert hooks.calls == []
    log.fail = False
    await applier.poll()
    assert hooks.calls == [("pause", None)]
