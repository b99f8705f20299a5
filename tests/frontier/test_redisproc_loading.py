"""The test Redis servers (``tests/support/redisproc.py``) are also what the soak
restarts after its faults: a server restarted on a large AOF answers ``LOADING`` while it
reads it back, longer than a start time-out on a busy machine. Starting one waits
through that instead of killing it half-loaded (the soak lost a cluster replica so)."""

from __future__ import annotations

import time
from pathlib import Path

from tests.support.redisproc import RedisServer

KEYS = 1_500_000
STEP = 250_000  # keys a script call writes (each well within redis-cli's 5 s)
FILL = """for i = tonumber(ARGV[1]), tonumber(ARGV[2]) do
  redis.call('SET', 'key:' .. i, 'a value of some forty bytes, like a record')
end
return redis.call('DBSIZE')"""


def test_a_server_still_loading_its_aof_is_waited_for(tmp_path: Path) -> None:
    first_run = RedisServer(tmp_path, appendonly=True)
    first_run.start()
    try:
        for first in range(1, KEYS, STEP):
            last = first + STEP - 1
            assert first_run.cli("EVAL", FILL, "0", str(first), str(last)) == str(last)
    finally:
        first_run.stop()  # a clean stop: the AOF holds every write
    timeout = 0.2
    server = RedisServer(tmp_path, port=first_run.port, appendonly=True, timeout=timeout)
    try:
        started = time.monotonic()
        server.start()  # the same directory: the same AOF
        took = time.monotonic() - started
        # it was loading for longer than the start time-out (which alone gave up) ...
        assert took > timeout, f"loading {KEYS:,} keys took only {took:.2f} s"
        # ... and is the whole server once it answers
        assert server.cli("DBSIZE") == str(KEYS)
    finally:
        server.stop()
