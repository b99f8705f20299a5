"""The monitor: each periodic duty alone on fake time, and in a crawl, a statistics
reading built only when a reader is due."""

from __future__ import annotations

import json
import logging
import math
from pathlib import Path

import pytest

from headway.frontier.store import FrontierCounts
from headway.runtime.monitor import (
    COUNTS_EVERY,
    STARTUP_EVERY,
    TICK,
    CrawlLost,
    Due,
    LeaseSweep,
    MemoryTarget,
    Monitor,
    QuotaResume,
    Readings,
    Startup,
    StoreRestarts,
)
from headway.runtime.stats import NodeStats
from headway.runtime.summary import StopReason


@pytest.mark.parametrize(
    ("every", "first", "times", "expected"),
    [
        (None, None, [0.0, 1.0, 100.0], [False, False, False]),  # no reader: never due
        (1.0, None, [0.25, 0.75, 1.0, 1.25, 2.0], [False, False, True, False, True]),
        (1.0, 0.0, [0.0, 0.25, 1.0], [True, False, True]),  # due at once
        # late: due once, the next time from now, not a burst to catch up
        (1.0, None, [5.0, 5.25, 6.0], [True, False, True]),
    ],
)
def test_due(
    every: float | None, first: float | None, times: list[float], expected: list[bool]
) -> None:
    due = Due(every, 0.0, first=first)
    assert [due.check(t) for t in times] == expected


def test_absent_reader_is_never_due() -> None:
    assert math.isinf(Due(None, 5.0).at)


async def test_readings_only_for_their_readers(tmp_path: Path) -> None:
    """A crawl at a gap for about 3 s: the on_stats reader asked for one reading a
    second and metrics.jsonl for one every 2 s; the monitor wakes every TICK but builds
    only the readings these two need."""
    from headway.runtime.node import Node
    from headway.testing.simweb import HostSpec, SimWeb, SimWebSpec
    from tests.integration.helpers import crawl_settings

    spec = SimWebSpec(hosts=3, host_spec=HostSpec(pages=40, links_per_page=6), seed=5)
    readings: list[NodeStats] = []
    async with SimWeb(spec) as web:
        settings = crawl_settings(tmp_path / "c", delay=0.2, max_duration=3, metrics_interval=2.0)
        node = Node(settings, web.seeds(), on_stats=readings.append, stats_interval=1.0)
        summary = await node.run()
    assert summary.fetches > 10
    monitor = node.monitor
    ticks = summary.seconds / TICK
    # about one reading a second for on_stats (never one a tick)
    assert 2 <= len(readings) <= summary.seconds + 1, len(readings)
    lines = (tmp_path / "c" / "metrics.jsonl").read_text().splitlines()
    written = [json.loads(line) for line in lines]
    # the metrics file: at the start, every 2 s, and the final line at the stop
    assert 2 <= len(written) <= summary.seconds / 2 + 2, len(written)
    # every reading built went to a reader: on_stats or the file (the final line is
    # built by the stop, not by the monitor)
    assert monitor.readings.built <= len(readings) + len(written) - 1
    assert monitor.readings.built < ticks / 2, (monitor.readings.built, ticks)
    assert readings[-1].frontier is not None


# -- each duty alone, on fake time -----------------------------------------------------


def _counts(queued: int = 0) -> FrontierCounts:
    return FrontierCounts(queued, 0, 0, 0, queued, 0, {})


async def test_counts_are_read_when_a_reading_is_due_when_idle_and_every_second() -> None:
    reads: list[float] = []
    got: list[FrontierCounts] = []
    delivered: list[tuple[str, NodeStats]] = []
    idle = False
    mono = 0.0

    async def read_counts() -> FrontierCounts:
        reads.append(mono)
        return _counts(len(reads))

    readings = Readings(
        read_counts=read_counts,
        use_counts=got.append,
        idle=lambda: idle,
        statistics=lambda: NodeStats(time=mono),
        readers=[
            (Due(1.0, 0.0), lambda st: delivered.append(("display", st))),
            (Due(2.0, 0.0, first=0.0), lambda st: delivered.append(("file", st))),
        ],
        now=0.0,
    )

    async def tick(at: float) -> None:
        nonlocal mono
        mono = at
        await readings.tick(at)

    for at in (0.0, 0.25, 0.5):  # the file is due at once, then nothing for a while
        await tick(at)
    assert [(who, st.time) for who, st in delivered] == [("file", 0.0)]
    assert reads == [0.0] and readings.built == 1
    idle = True  # an idle node reads the counts every tick (the crawl may be over)
    await tick(0.75)
    assert reads == [0.0, 0.75] and readings.built == 1
    idle = False
    await tick(1.0)  # the display is due: one reading for it alone
    assert [(who, st.time) for who, st in delivered][1:] == [("display", 1.0)]
    await tick(1.5)  # busy, nothing due, the counts were read 0.5 s ago
    assert reads == [0.0, 0.75, 1.0]
    await tick(2.0)  # both due: one reading, delivered to both in order
    assert [(who, st.time) for who, st in delivered][2:] == [("display", 2.0), ("file", 2.0)]
    assert readings.built == 3 and reads[-1] == 2.0
    await tick(2.25)
    await tick(2.5)
    assert reads[-1] == 2.0  # busy and read less than COUNTS_EVERY ago
    await tick(2.0 + COUNTS_EVERY)
    assert reads[-1] == 2.0 + COUNTS_EVERY
    assert [c.queued for c in got] == list(range(1, len(reads) + 1))


class _Store:
    store_url = "redis://127.0.0.1:1/0"

    def __init__(self) -> None:
        self.server_restarts = 0
        self.crawl_lost: str | None = None


def _restarts(store: _Store, *, keeps_crawl: bool) -> tuple[StoreRestarts, list[str]]:
    """A StoreRestarts duty on ``store`` and the calls it made, in order."""
    calls: list[str] = []

    async def verify() -> None:
        calls.append("verify")
        if not keeps_crawl:
            store.crawl_lost = "crawl 'c1' lost"

    async def offer_again() -> None:
        calls.append(f"offer {store.server_restarts}")

    async def read_counts() -> FrontierCounts:
        calls.append("read counts")
        return _counts(5)

    duty = StoreRestarts(
        store,  # type: ignore[arg-type]
        verify=verify,
        offer_again=offer_again,
        read_counts=read_counts,
        use_counts=lambda c: calls.append(f"use {c.queued}"),
    )
    return duty, calls


async def test_a_store_restart_offers_the_seeds_again_once_then_reads_the_counts() -> None:
    store = _Store()
    duty, calls = _restarts(store, keeps_crawl=True)
    await duty.tick(0.0)
    assert calls == []
    store.server_restarts = 1
    await duty.tick(0.25)
    await duty.tick(0.5)
    # the counts are read again after the seeds are back: those read before may be the
    # restarted store's, and the end check must not take them for a finished crawl
    assert calls == ["verify", "offer 1", "read counts", "use 5"]
    store.server_restarts = 3
    await duty.tick(0.75)
    assert calls[4:] == ["verify", "offer 3", "read counts", "use 5"]


async def test_a_store_restarted_without_the_crawl_offers_nothing_and_stops_the_node() -> None:
    store = _Store()
    duty, calls = _restarts(store, keeps_crawl=False)
    stops: list[StopReason] = []
    lost = CrawlLost(store, stop=stops.append)  # type: ignore[arg-type]
    await lost.tick(0.0)
    assert stops == []
    store.server_restarts = 1
    await duty.tick(0.25)
    await lost.tick(0.25)
    assert calls == ["verify"]  # nothing is offered to a store that lost the crawl
    assert stops == [StopReason.CRAWL_LOST]


async def test_a_crawl_found_lost_by_any_call_stops_the_node() -> None:
    store = _Store()
    stops: list[StopReason] = []
    lost = CrawlLost(store, stop=stops.append)  # type: ignore[arg-type]
    await lost.tick(0.0)
    store.crawl_lost = "crawl 'c1' lost: its epoch keys are gone"
    await lost.tick(0.25)
    assert stops == [StopReason.CRAWL_LOST]


@pytest.mark.parametrize(
    ("every", "times", "expected"),
    [
        # a long interval: due at once, every STARTUP_EVERY during the first, then every
        (10.0, [0.0, 0.5, 1.0, 2.0, 2.5, 10.0, 11.0, 20.0], [1, 0, 1, 1, 0, 1, 0, 1]),
        # an interval of at most twice STARTUP_EVERY: no start-up records
        (2.0, [0.0, 1.0, 2.0, 3.0, 4.0], [1, 0, 1, 0, 1]),
    ],
)
def test_startup_metrics_are_due_every_second_in_the_first_interval(
    every: float, times: list[float], expected: list[int]
) -> None:
    assert STARTUP_EVERY == 1.0
    when = Startup(every, 0.0)
    assert [int(when.check(t)) for t in times] == expected


async def test_a_resume_file_ends_a_quota_pause_only(tmp_path: Path) -> None:
    resume_file = tmp_path / "resume"
    paused = False
    resumed: list[bool] = []
    duty = QuotaResume(resume_file, paused=lambda: paused, resume=lambda: resumed.append(True))
    resume_file.touch()
    await duty.tick(0.0)
    assert resumed == [] and resume_file.exists()  # not paused: the file is left alone
    paused = True
    await duty.tick(0.25)
    assert resumed == [True] and not resume_file.exists()
    await duty.tick(0.5)
    assert resumed == [True]


async def test_expired_leases_are_swept_every_interval_and_wake_the_scheduler() -> None:
    swept: list[float] = []
    woken: list[float] = []
    found = iter([3, 0])
    mono = 0.0

    async def reclaim(at: float) -> int:
        swept.append(at)
        return next(found)

    duty = LeaseSweep(
        2.0, reclaim=reclaim, wake=lambda: woken.append(mono), now=0.0, clock=lambda: 1e9 + mono
    )
    for mono in (0.25, 1.0, 1.75, 2.0, 3.0, 4.5):
        await duty.tick(mono)
    assert swept == [1e9 + 2.0, 1e9 + 4.5]  # with the wall-clock time
    assert woken == [2.0]  # only when leases came back


async def test_memory_over_its_target_sheds_and_warns_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    rss = iter([300.0, 300.0, 300.0, 100.0, 300.0])
    depths = iter([2, 0, 0, 1, 0])
    calls: list[bool] = []

    def shed(over: bool) -> int | None:
        calls.append(over)
        return next(depths)

    duty = MemoryTarget(200, shed=shed, rss_mib=lambda: next(rss))
    with caplog.at_level(logging.WARNING, logger="headway.runtime.monitor"):
        for mono in (0.0, 0.5, 1.0, 2.0, 3.0, 4.0):  # 0.5: less than a second later
            await duty.tick(mono)
    assert calls == [True, True, True, False, True]
    assert duty.warned
    assert len([r for r in caplog.records if "memory-target-mib 200" in r.message]) == 1


async def test_the_monitor_runs_its_duties_in_order_then_the_end_check() -> None:
    seen: list[tuple[str, float]] = []

    class Note:
        def __init__(self, name: str) -> None:
            self.name = name

        async def tick(self, mono: float) -> None:
            seen.append((self.name, mono))

    monitor = Monitor([Note("a"), Note("b")], lambda mono: seen.append(("end", mono)))
    await monitor.tick(7.0)
    assert seen == [("a", 7.0), ("b", 7.0), ("end", 7.0)]


async def test_metrics_file_has_a_record_a_second_at_the_start(tmp_path: Path) -> None:
    """During its first metrics interval (10 s) a run writes a record every second, so
    that ``headway status`` of a crawl a few seconds old shows what it fetched rather
    than the start-up record."""
    from headway.runtime.node import Node
    from headway.testing.simweb import HostSpec, SimWeb, SimWebSpec
    from tests.integration.helpers import crawl_settings

    spec = SimWebSpec(hosts=3, host_spec=HostSpec(pages=40, links_per_page=6), seed=5)
    async with SimWeb(spec) as web:
        settings = crawl_settings(
            tmp_path / "c", delay=0.2, max_duration=3.5, metrics_interval=10.0
        )
        summary = await Node(settings, web.seeds()).run()
    assert summary.fetches > 10
    lines = (tmp_path / "c" / "metrics.jsonl").read_text().splitlines()
    written = [json.loads(line) for line in lines]
    # start-up, about one a second, and the final line at the stop
    assert 4 <= len(written) <= summary.seconds + 3, len(written)
    before_stop = [w["fetches"] for w in written[1:-1]]
    assert before_stop and before_stop[-1] > 0, before_stop
