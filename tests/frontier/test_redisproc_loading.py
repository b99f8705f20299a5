"""The test Redis servers (``tests/support/redisproc.py``) are also what the soak
restarts after its faults: a server restarted on a large AOF answers ``LOADING`` while it
reads it back, longer than a start time-out on a busy machine. Starting one waits
through that instead of killing it half-loaded (the soak lost a cluster replica so)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.support.redisproc import LOADING_TIMEOUTS, RedisServer

LOADING_REPLY = "LOADING Redis is loading the dataset in memory"


def test_a_server_still_loading_is_waited_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server answers LOADING (as redis-server does while it reads its AOF) for
    three start time-outs; starting it waits, then finds it whole. Without the wait it
    gives up after one time-out and kills the server."""
    timeout = 0.5
    loading_for = 3 * timeout
    assert loading_for < LOADING_TIMEOUTS * timeout
    real_cli = RedisServer.cli
    first_ping: list[float] = []

    def cli(self: RedisServer, *args: str) -> str:
        if args == ("PING",):
            now = time.monotonic()
            first_ping.append(now)
            if now - first_ping[0] < loading_for:
                return LOADING_REPLY
        return real_cli(self, *args)

    monkeypatch.setattr(RedisServer, "cli", cli)
    server = RedisServer(tmp_path, timeout=timeout)
    try:
        started = time.monotonic()
        server.start()
        took = time.monotonic() - started
        assert took >= loading_for  # it waited through the loading, past its time-out
        assert real_cli(server, "SET", "k", "v") == "OK"  # and the server is up
    finally:
        server.stop()


def test_a_server_loading_for_ever_is_given_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The wait is bounded: a server that never stops loading fails the start after
    ``LOADING_TIMEOUTS`` start time-outs, and is stopped."""
    timeout = 0.1
    monkeypatch.setattr(RedisServer, "cli", lambda self, *args: LOADING_REPLY)
    server = RedisServer(tmp_path, timeout=timeout)
    started = time.monotonic()
    with pytest.raises(Exception, match="did not answer in time"):
        server.start()
    took = time.monotonic() - started
    assert LOADING_TIMEOUTS * timeout - 0.1 <= took < LOADING_TIMEOUTS * timeout + 5
