"""The event-loop lag probe: its figures from given wake-ups, its rate-limited warning,
and a loop held on purpose seen by the running probe."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
import time

import pytest

from headway.runtime.looplag import LoopLagProbe, LoopLagStats, short_switch_interval


def test_figures_from_wakeups() -> None:
    probe = LoopLagProbe(window=10.0, clock=lambda: 0.0)
    assert probe.statistics() == LoopLagStats()
    probe.note(0.002, 1.0)
    probe.note(0.3, 2.0)
    probe.note(0.001, 3.0)
    assert probe.statistics() == LoopLagStats(
        worst=0.3, recent=0.3, last=0.001, samples=3, over_bound=0
    )


def test_recent_forgets_a_lag_after_two_windows_but_worst_keeps_it() -> None:
    probe = LoopLagProbe(window=10.0, clock=lambda: 0.0)
    probe.note(0.4, 1.0)
    probe.note(0.01, 12.0)  # a new window: the one before still counts
    assert probe.statistics().recent == 0.4
    probe.note(0.02, 23.0)  # two windows on: the 0.4 s lag is no longer recent
    stats = probe.statistics()
    assert (stats.recent, stats.worst) == (0.02, 0.4)
    probe.note(0.0, 60.0)  # after windows without samples nothing old is recent
    assert probe.statistics().recent == 0.0


def test_a_lag_over_the_bound_is_warned_of_once_a_minute(
    caplog: pytest.LogCaptureFixture,
) -> None:
    probe = LoopLagProbe(warn_after=1.0, warn_every=60.0, clock=lambda: 0.0)
    with caplog.at_level(logging.WARNING, logger="headway.runtime.looplag"):
        probe.note(0.9, 1.0)  # under the bound: no warning
        probe.note(1.5, 2.0)
        probe.note(2.5, 3.0)  # within the minute: counted, not logged
        probe.note(1.2, 4.0)
        probe.note(3.0, 70.0)  # a minute on: logged, naming the ones in between
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 2, warnings
    assert "held for 1.5 s" in warnings[0]
    assert "held for 3.0 s (3 time(s) over 1 s" in warnings[1]
    assert "worst so far is 3.0 s" in warnings[1]
    assert probe.statistics().over_bound == 4


async def test_the_running_probe_sees_a_held_loop() -> None:
    probe = LoopLagProbe(interval=0.02)
    task = asyncio.create_task(probe.run())
    try:
        await asyncio.sleep(0.1)
        time.sleep(0.4)  # holds the loop, as a CPU-bound callback would
        await asyncio.sleep(0.1)
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    stats = probe.statistics()
    assert stats.samples >= 3
    assert stats.worst >= 0.3
    assert stats.last < stats.worst  # later wake-ups were on time again


def test_switch_interval_is_restored() -> None:
    before = sys.getswitchinterval()
    with short_switch_interval(0.0005):
        assert sys.getswitchinterval() == pytest.approx(0.0005)
    assert sys.getswitchinterval() == before
