"""The one factory: the ``store`` setting picks the frontier backend; ``headway status``
reads the frontier through that backend."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from headway.cli.status import read_status
from headway.errors import ConfigError
from headway.frontier import backends
from headway.frontier.backends import StoreTarget, backend_for, store_scheme
from headway.frontier.sqlite import SqliteFrontier
from headway.policy.robots import RobotsKind, RobotsRules
from headway.runtime import factory as factory_module
from headway.runtime.crawldir import CrawlDir
from headway.runtime.factory import build_node_parts, open_frontier
from headway.runtime.scheduler import PageJob
from headway.settings import build_settings
from headway.threads import ThreadWorker
from tests.frontier.conftest import entry

UA = "testbot/1.0 (+https://example.org/bot)"


def test_store_setting_names_a_backend_scheme() -> None:
    assert store_scheme("") == "sqlite"
    assert store_scheme("redis://10.0.0.5:6379/0") == "redis"
    assert store_scheme("REDISS://h:1") == "rediss"
    assert store_scheme("redis+cluster://h1:7000,h2:7001") == "redis+cluster"
    for bad in ("mysql://h", "redis", "/tmp/x.db"):
        with pytest.raises(ConfigError, match=r"frontier\.store"):
            store_scheme(bad)


def test_bad_store_value_is_refused_without_echoing_it() -> None:
    with pytest.raises(ConfigError, match=r"frontier\.store") as err:
        build_settings({"user_agent": UA, "store": "postgres://u:secret@h/db"})
    assert "secret" not in str(err.value)


def test_missing_backend_module_is_a_clear_not_available_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(backends.BACKEND_MODULES, "redis", "headway.frontier.no_such_backend")
    with pytest.raises(ConfigError, match=r"redis:// stores are not available"):
        backend_for("redis://127.0.0.1:1/0")


async def test_default_store_opens_the_crawl_directory_sqlite_file(tmp_path: Path) -> None:
    settings = build_settings({"user_agent": UA, "out": tmp_path / "c"})
    crawldir = CrawlDir(settings.crawl.out)
    paths = crawldir.open()
    fw = ThreadWorker("test")
    frontier = await open_frontier(settings, paths.root, crawldir.node_id, fw)
    try:
        assert isinstance(frontier, SqliteFrontier)
        assert frontier.node_id == crawldir.node_id
        frontier.add([entry("http://a.test/1"), entry("http://b.test/2")], now=0)
        frontier.lease_many([("a.test", 1)], now=0, lease_seconds=60)
    finally:
        await fw.call(frontier.close)
        fw.shutdown()
        crawldir.close()
    status = read_status(paths.root)
    assert status["node_id"] == crawldir.node_id
    counts = status["frontier"]
    assert isinstance(counts, dict)
    assert (counts["queued"], counts["leased"], counts["seen"], counts["hosts_queued"]) == (
        1,
        1,
        2,
        1,
    )
    backend = backend_for("")
    target = StoreTarget("", tmp_path / "elsewhere", "")
    assert backend.read_counts(target) is None


async def test_failed_build_closes_what_it_opened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = build_settings(
        {"user_agent": UA, "out": tmp_path / "c", "store": "redis://127.0.0.1:1/0"}
    )
    # the backend goes missing after the settings were checked
    monkeypatch.setitem(backends.BACKEND_MODULES, "redis", "headway.frontier.no_such_backend")

    async def no_skip(*_: object) -> None:
        return None

    with pytest.raises(ConfigError, match="not available") as err:
        await build_node_parts(settings, optout=None, on_skip=no_skip, clock=lambda: 0.0)
    assert not settings.crawl.out.exists()  # made by the failed start: removed again
    again = CrawlDir(settings.crawl.out)  # the lock was let go (not merely garbage)
    again.open()
    again.close()
    assert err.traceback  # kept alive until here: nothing was freed by collection


async def test_failed_start_never_removes_an_existing_crawl_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "c"
    settings = build_settings(
        {"user_agent": UA, "out": out, "store": "redis://127.0.0.1:1/0", "crawl_id": "c1"}
    )
    first = CrawlDir(out, factory_module.crawl_identity(settings))
    first.open()
    first.close()
    (out / "crawl.log.jsonl").write_text("{}\n")
    before = sorted(p.name for p in out.iterdir())

    def unreachable(*_: object) -> None:
        raise ConfigError("frontier.store", "cannot reach Redis")

    monkeypatch.setattr(factory_module, "open_frontier", unreachable)

    async def no_skip(*_: object) -> None:
        return None

    with pytest.raises(ConfigError, match="cannot reach"):
        await build_node_parts(settings, optout=None, on_skip=no_skip, clock=lambda: 0.0)
    assert sorted(p.name for p in out.iterdir()) == before
    assert (out / "crawl.log.jsonl").read_text() == "{}\n"


async def test_the_node_sends_no_url_in_the_last_part_of_its_lease(tmp_path: Path) -> None:
    """The lease book the factory gives the node: a lease lasts the fetch's total time-out
    plus the lease margin, and its URL is not sent in the last half margin of it (that
    part is the guard against clocks apart and a late heartbeat): a page job leased at
    T0 may be sent until T0 + 10 + 4 - 2 s, not from then on."""
    t0 = 1_000_000.0
    now = [t0]
    settings = build_settings(
        {
            "user_agent": UA,
            "out": tmp_path / "c",
            "total_timeout": 10.0,
            "connect_timeout": 5.0,
            "read_timeout": 5.0,
            "lease_margin": 4.0,
            "parsers": 1,
        }
    )

    async def no_skip(*_: object) -> None:
        return None

    parts = await build_node_parts(settings, optout=None, on_skip=no_skip, clock=lambda: now[0])
    dispatcher: asyncio.Task[None] | None = None
    try:
        assert parts.leases is parts.scheduler.leases  # the heartbeat's book is the scheduler's
        await parts.fw.call(parts.frontier.add, [entry("http://a.test/1")], t0)
        robots = RobotsRules(RobotsKind.ALLOW_ALL, t0, t0 + 86400)
        parts.scheduler.robots.put("a.test", robots)
        dispatcher = asyncio.create_task(parts.scheduler.run())
        job = await asyncio.wait_for(parts.scheduler.next_job(), 5)
        assert isinstance(job, PageJob)
        assert len(parts.leases) == 1  # held from the lease call at t0
        assert parts.scheduler.may_send(job.lease, t0 + 11.99)
        assert not parts.scheduler.may_send(job.lease, t0 + 12.0)  # 2 s of 14 left: not sent
        assert not parts.scheduler.may_send(job.lease, t0 + 13.9)
    finally:
        parts.scheduler.stop()
        if dispatcher is not None:
            await dispatcher
        await asyncio.get_running_loop().run_in_executor(None, parts.pool.close)
        await parts.store.close()
        parts.metrics_file.close()
        await parts.fw.call(parts.frontier.close)
        parts.fw.shutdown()
        parts.crawldir.close()
