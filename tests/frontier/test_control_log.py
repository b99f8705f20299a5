"""The control log's contract over every frontier backend (SQLite, Redis, Redis
Cluster): appends get increasing sequence numbers, also from writers racing each
other; ``read_after`` returns what follows a number, in order; the log outlives its
writers; a crawl is found by directory or by store and crawl id."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from headway.control.log import ControlKind, ControlLog, check_args, read_all
from headway.control.target import CrawlRef, open_control_log
from headway.errors import ControlError, StoreError
from headway.frontier.redis import RedisFrontier
from headway.frontier.sqlite import SqliteFrontier
from headway.frontier.store import FrontierStore
from tests.frontier.conftest import BACKENDS, TEST_LIMITS, TEST_SHARDS

_crawls = itertools.count()

OpenLog = Callable[[], ControlLog]


@pytest.fixture(params=BACKENDS)
def crawl(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[tuple[CrawlRef, FrontierStore]]:
    """A crawl (its frontier open, as a running node holds it) and how to name it."""
    if request.param == "sqlite":
        d = tmp_path / "crawl"
        d.mkdir()
        (d / "headway.json").write_text('{"format": 1, "node_id": "node-a"}')
        store: FrontierStore = SqliteFrontier(d / "frontier.sqlite3", TEST_LIMITS, node_id="node-a")
        ref = CrawlRef(d)
    else:
        server = request.getfixturevalue(
            "redis_server" if request.param == "redis" else "redis_cluster"
        )
        crawl_id = f"c{next(_crawls)}"
        store = RedisFrontier(
            server.url, crawl_id, "node-a", TEST_LIMITS, shards=TEST_SHARDS, handover_gap=0.0
        )
        ref = CrawlRef(None, server.url, crawl_id)
    yield ref, store
    store.close()


def test_appends_get_increasing_numbers_and_read_after_follows_them(
    crawl: tuple[CrawlRef, FrontierStore],
) -> None:
    ref, _ = crawl
    log = open_control_log(ref)
    try:
        a = log.append(ControlKind.PAUSE, {}, node=None, origin="cli a@h", at=10.0)
        args = check_args("host-override", {"host": "x.example", "delay": 2})
        b = log.append(
            ControlKind.HOST_OVERRIDE, args, node=None, origin="console 127.0.0.1", at=11.0
        )
        s = log.append(ControlKind.STOP, {}, node="n2", origin="cli a@h", at=12.0)
        assert (a.seq, b.seq, s.seq) == (1, 2, 3)
        got = log.read_after(0)
        assert got == [a, b, s]
        assert got[1].args == {"host": "x.example", "delay": 2.0}
        assert got[2].node == "n2" and got[1].origin == "console 127.0.0.1" and got[2].at == 12.0
        assert log.read_after(1) == [b, s]
        assert log.read_after(3) == []
        assert log.read_after(0, limit=2) == [a, b]
        assert read_all(log, 0, batch=2) == [a, b, s] and read_all(log, 2, batch=1) == [s]
    finally:
        log.close()


def test_the_log_outlives_its_writers_and_is_shared_by_every_reader(
    crawl: tuple[CrawlRef, FrontierStore],
) -> None:
    ref, store = crawl
    first = open_control_log(ref)
    c1 = first.append(ControlKind.OPT_OUT, {"domain": "o.example"}, node=None, origin="x", at=1.0)
    first.close()
    second = open_control_log(ref)
    try:
        assert second.read_after(0) == [c1]
        c2 = second.append(ControlKind.RESUME, {}, node=None, origin="y", at=2.0)
        assert c2.seq == 2
    finally:
        second.close()
    # the frontier the node holds open is untouched by the log's writers
    assert store.counts().queued == 0
    reader = open_control_log(ref, read_only=True)
    try:
        assert [c.seq for c in reader.read_after(0)] == [1, 2]
    finally:
        reader.close()


def test_racing_writers_each_get_their_own_number(crawl: tuple[CrawlRef, FrontierStore]) -> None:
    ref, _ = crawl
    per_writer = 15
    seqs: list[int] = []
    lock = threading.Lock()

    def writer(i: int) -> None:
        log = open_control_log(ref)
        try:
            for _ in range(per_writer):
                c = log.append(ControlKind.PAUSE, {}, node=None, origin=f"w{i}", at=0.0)
                with lock:
                    seqs.append(c.seq)
        finally:
            log.close()

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sorted(seqs) == list(range(1, 4 * per_writer + 1))
    log = open_control_log(ref)
    try:
        back = log.read_after(0)
    finally:
        log.close()
    assert [c.seq for c in back] == sorted(seqs)
    for i in range(4):
        assert sum(1 for c in back if c.origin == f"w{i}") == per_writer


def test_no_crawl_there_is_a_clear_error(tmp_path: Path, redis_server: object) -> None:
    with pytest.raises(ControlError, match="not a directory"):
        open_control_log(CrawlRef(tmp_path / "missing"))
    with pytest.raises(ControlError, match="not a headway crawl directory"):
        open_control_log(CrawlRef(tmp_path))
    (tmp_path / "headway.json").write_text("{}")
    with pytest.raises(ControlError, match="no embedded frontier"):
        open_control_log(CrawlRef(tmp_path))
    url = redis_server.url  # type: ignore[attr-defined]
    with pytest.raises(ControlError, match="no crawl 'nothing-here'"):
        open_control_log(CrawlRef(None, url, "nothing-here"))
    with pytest.raises(ControlError, match="--crawl-id"):
        open_control_log(CrawlRef(None, url, None))


def test_an_unreachable_store_names_it_with_the_password_masked() -> None:
    with pytest.raises(StoreError) as err:
        open_control_log(CrawlRef(None, "redis://:hunter2@127.0.0.1:1/0", "c"))
    assert "hunter2" not in str(err.value) and "redis://:***@127.0.0.1:1/0" in str(err.value)
