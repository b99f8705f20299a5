"""The stop signals' rule (``cli/stopping.py``) across the end of the event loop: a stop
signal repeated after the node has finished, while it closes its files and prints its
summary, is the same request and never the default action (which kills the process)."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Iterator

import pytest
import uvloop

from headway.cli.stopping import STOP_SIGNALS, StopSignals


@pytest.fixture
def saved_handlers() -> Iterator[None]:
    old = {sig: signal.getsignal(sig) for sig in STOP_SIGNALS}
    yield
    for sig, handler in old.items():
        signal.signal(sig, handler)


def _signal_self(sig: int) -> None:
    os.kill(os.getpid(), sig)
    time.sleep(0.01)  # a plain handler runs at the next bytecode of the main thread


async def _run_and_stop(stop: StopSignals, requests: list[str]) -> None:
    loop = asyncio.get_running_loop()
    stop.request = lambda: requests.append("stop")
    stop.attach(loop)
    try:
        os.kill(os.getpid(), signal.SIGTERM)  # what ``timeout`` sends the process
        for _ in range(100):
            if requests:
                break
            await asyncio.sleep(0.01)
    finally:
        stop.detach(loop)


@pytest.mark.parametrize("new_loop", [uvloop.new_event_loop, asyncio.new_event_loop])
def test_a_stop_repeated_after_the_loop_has_ended_is_the_same_request(
    saved_handlers: None, new_loop: object
) -> None:
    requests: list[str] = []
    stop = StopSignals()
    with stop.held():
        with asyncio.Runner(loop_factory=new_loop) as runner:  # type: ignore[arg-type]
            runner.run(_run_and_stop(stop, requests))
        # the loop is closed (closing resets the signals it had to their defaults)
        assert requests == ["stop"]
        for sig in STOP_SIGNALS:
            assert signal.getsignal(sig) not in (signal.SIG_DFL, signal.SIG_IGN, None), sig
        _signal_self(signal.SIGTERM)  # the group's copy, moments later: nothing happens
        _signal_self(signal.SIGINT)
    # a stop was requested and the summary is out: ignored until the process has exited
    # (the interpreter resets a Python handler to the default as it tears itself down)
    assert all(signal.getsignal(sig) == signal.SIG_IGN for sig in STOP_SIGNALS)
    _signal_self(signal.SIGTERM)
    assert requests == ["stop"]


def test_without_a_stop_the_previous_handlers_come_back(saved_handlers: None) -> None:
    before = {sig: signal.getsignal(sig) for sig in STOP_SIGNALS}
    stop = StopSignals()

    async def run() -> None:
        loop = asyncio.get_running_loop()
        stop.attach(loop)
        await asyncio.sleep(0)
        stop.detach(loop)

    with stop.held():
        uvloop.run(run())
    assert {sig: signal.getsignal(sig) for sig in STOP_SIGNALS} == before
    assert stop.first is None


def test_a_signal_sent_before_the_loop_starts_is_a_stop(saved_handlers: None) -> None:
    """From ``held`` on, even before the node's loop runs, SIGTERM is a clean stop; one
    that came before there was a node to stop is passed on when there is."""
    requests: list[str] = []
    stop = StopSignals(lambda: requests.append("stop"))
    with stop.held():
        _signal_self(signal.SIGTERM)
        _signal_self(signal.SIGTERM)
    assert requests == ["stop"]
    assert stop.first is not None
    early = StopSignals()
    with early.held():
        _signal_self(signal.SIGTERM)  # the crawl is starting: no node yet
        early.set_request(lambda: requests.append("late"))
    assert requests == ["stop", "late"]
