"""The Redis frontier across a Redis outage: calls wait and retry, nothing written before
a clean stop is lost (AOF), and a restarted server is noticed."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from headway.frontier.redis import RedisFrontier
from headway.urls.scope import Scope
from headway.work.admission import Admission
from tests.frontier.conftest import TEST_LIMITS, entry
from tests.support.redisproc import RedisServer


def test_calls_wait_for_a_restarted_server_and_notice_the_restart(tmp_path: Path) -> None:
    server = RedisServer(tmp_path, appendonly=True)
    server.start()
    store = RedisFrontier(server.url, "outage", "n1", TEST_LIMITS, shards=4, handover_gap=0.0)
    try:
        store.add([entry(f"http://a.test/{i}") for i in range(10)], now=0)
        assert store.server_restarts == 0
        server.stop()  # a clean stop: the AOF has every write
        restart = threading.Timer(1.0, server.start)
        restart.start()
        t0 = time.monotonic()
        counts = store.counts()  # waits and retries while the server is down
        restart.join()
        assert time.monotonic() - t0 >= 0.9
        assert (counts.queued, counts.seen) == (10, 10)
        assert store.server_restarts == 1
        again = store.add([entry(f"http://a.test/{i}") for i in range(12)], now=1)
        assert (again.added, again.duplicates) == (2, 10)
    finally:
        store.close()
        server.stop()


def test_admission_forgets_recent_urls_on_request() -> None:
    admission = Admission(Scope.for_seeds(["http://a.test/"]), recent_urls=100)
    assert len(admission.admit(["http://a.test/x"], 1, None)) == 1
    assert admission.admit(["http://a.test/x"], 1, None) == []  # recently admitted
    admission.forget_recent()
    assert len(admission.admit(["http://a.test/x"], 1, None)) == 1
