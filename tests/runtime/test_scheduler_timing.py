"""Scheduler timing on a fake clock: exact, and no sleeping for politeness gaps.

The scheduler reads time only through its ``clock``; these tests move that clock by hand
and ask for the next job. When no job may start, ``next_job`` keeps waiting (for an event
or the earliest ready time) while fake time stands still, so "no job" shows as a bounded
real-time wait that ends without one.
"""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path
from typing import Any

from headway.frontier.sqlite import SqliteFrontier
from headway.frontier.store import UrlEntry
from headway.parse.handlers import HandlerRegistry
from headway.policy.outcome import Outcome
from headway.policy.politeness import HostLimitParams
from headway.policy.robots import RobotsCache, RobotsKind, RobotsRules
from headway.runtime.fetchjobs import PageFetch
from headway.runtime.leases import LeaseBook
from headway.runtime.metrics import Counters
from headway.runtime.recrawl import NoRecrawl
from headway.runtime.scheduler import Job, PageJob, Scheduler
from headway.runtime.stage import Stage
from headway.settings import build_settings
from headway.threads import ThreadWorker
from headway.urls.fingerprint import fingerprint

HOST = "a.example"
T0 = 1_000_000.0


class FakeClock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


async def _noop(*_: Any) -> None:
    return None


def _scheduler(
    tmp_path: Path, clock: FakeClock, *, gap: float, ceiling: int, leases: LeaseBook | None = None
) -> Scheduler:
    frontier = SqliteFrontier(tmp_path / "f.sqlite3", node_id="n")
    urls = [f"http://{HOST}/p{i}" for i in range(40)]
    frontier.add([UrlEntry(u, HOST, 0, 0, fingerprint(u)) for u in urls], clock.now)
    robots = RobotsCache()
    robots.put(HOST, RobotsRules(RobotsKind.ALLOW_ALL, clock.now, clock.now + 10**6))
    return Scheduler(
        frontier,
        ThreadWorker("test"),
        limits=HostLimitParams(min_gap=gap, ceiling=ceiling),
        robots=robots,
        robots_ttl=3600,
        crawl_delay_max=30,
        lease_seconds=60,
        optout=None,
        on_skip=_noop,
        clock=clock,
        leases=leases,
    )


async def _job(s: Scheduler, real_wait: float = 0.05) -> Job | None:
    """The job the scheduler hands out at the current fake time, or None."""
    if not hasattr(s, "dispatcher"):
        s.dispatcher = asyncio.create_task(s.run())  # type: ignore[attr-defined]
    try:
        return await asyncio.wait_for(s.next_job(), real_wait)
    except TimeoutError:
        return None


async def _page(s: Scheduler) -> PageJob:
    job = await _job(s, real_wait=2.0)
    assert isinstance(job, PageJob), job
    return job


async def test_gap_runs_from_when_the_request_was_sent(tmp_path: Path) -> None:
    clock = FakeClock(T0)
    s = _scheduler(tmp_path, clock, gap=1.0, ceiling=1)
    await _page(s)
    # connection set-up took 0.4 s: the request headers left at T0 + 0.4 (the node
    # reports the fetcher's send time to the host's limiter)
    s.limiter(HOST).mark_sent(T0 + 0.4)
    clock.now = T0 + 0.5
    s.on_fetch_done(HOST, clock.now, Outcome.OK, latency=0.1, retry_after=None)
    clock.now = T0 + 1.0  # one gap after scheduling, but only 0.6 s after sending
    assert await _job(s) is None
    clock.now = T0 + 1.39
    assert await _job(s) is None
    clock.now = T0 + 1.4
    assert isinstance(await _job(s), PageJob)


async def test_starts_are_never_closer_than_the_gap(tmp_path: Path) -> None:
    clock = FakeClock(T0)
    s = _scheduler(tmp_path, clock, gap=1.0, ceiling=1)
    starts: list[float] = []
    for _ in range(200):  # bounded: 50 s of fake time
        if len(starts) == 6:
            break
        job = await _job(s)
        if job is not None:
            assert isinstance(job, PageJob)
            starts.append(clock.now)
            clock.now += 0.3  # the fetch takes 0.3 s of fake time
            s.on_fetch_done(HOST, clock.now, Outcome.OK, latency=0.3, retry_after=None)
        clock.now += 0.25
    assert len(starts) == 6, starts
    gaps = [b - a for a, b in itertools.pairwise(starts)]
    assert all(g >= 1.0 for g in gaps), gaps
    assert all(g < 1.0 + 0.25 + 1e-9 for g in gaps), gaps  # and no slower than a step


async def test_retry_after_holds_a_host_below_its_ceiling(tmp_path: Path) -> None:
    """With a ceiling above 1, a host with one request in flight stays in the heap (it
    could take a second one); a 429 with Retry-After on that request must still stop the
    next start until the Retry-After time, through ``can_start``."""
    clock = FakeClock(T0)
    s = _scheduler(tmp_path, clock, gap=1.0, ceiling=2)
    await _page(s)
    clock.now = T0 + 0.1
    s.on_fetch_done(HOST, clock.now, Outcome.OK, latency=0.1, retry_after=None)
    assert s.limiter(HOST).statistics().limit >= 2  # one success: room for two at once
    clock.now = T0 + 1.0
    await _page(s)  # one in flight, below the limit: the host is back in the heap
    clock.now = T0 + 1.5
    s.on_fetch_done(HOST, clock.now, Outcome.THROTTLED, latency=0.5, retry_after=60.0)
    for t in (2.0, 10.0, 61.4):
        clock.now = T0 + t
        assert await _job(s) is None, f"a job started {t - 1.5:.1f}s into a 60 s Retry-After"
    clock.now = T0 + 61.5
    assert isinstance(await _job(s, real_wait=2.0), PageJob)


async def test_scheduler_reads_only_its_clock(tmp_path: Path) -> None:
    clock = FakeClock(T0 + 10**7)  # far from the real time
    s = _scheduler(tmp_path, clock, gap=5.0, ceiling=1)
    await _page(s)
    s.on_fetch_done(HOST, clock.now, Outcome.OK, latency=0.1, retry_after=None)
    assert s.limiter(HOST).ready_at() == clock.now + 5.0
    assert s.hosts_ready() == 0
    stats = s.statistics()
    assert (stats.active, stats.ready, stats.waiting) == (0, 0, 1)  # waiting for its gap
    clock.now += 5.0
    assert s.hosts_ready() == 1
    stats = s.statistics()
    assert (stats.ready, stats.waiting) == (1, 0)


async def test_a_page_not_sent_frees_its_hosts_slot_at_once(tmp_path: Path) -> None:
    """A page job whose lease went stale before it was sent (the node stalled) is not
    sent: the host's one in-flight slot is free again and its next page is handed out
    at once (its gap from the last start has passed), not never."""
    clock = FakeClock(T0)
    s = _scheduler(tmp_path, clock, gap=1.0, ceiling=1, leases=LeaseBook(10.0, guard=2.0))
    job = await _page(s)
    assert s.limiter(HOST).statistics().in_flight == 1
    assert await _job(s) is None  # ceiling 1: nothing more while it is out
    clock.now = T0 + 9.0  # stalled: the lease is past its 8 fresh seconds
    assert not s.may_send(job.lease, clock.now)
    s.on_not_sent(job.lease, clock.now)
    assert s.limiter(HOST).statistics().in_flight == 0
    assert job.lease.id not in s.leases.ids()  # never extended again
    nxt = await _job(s, real_wait=1.0)
    assert isinstance(nxt, PageJob) and nxt.lease.host == HOST, nxt
    assert s.limiter(HOST).statistics().in_flight == 1


class _NoFetcher:
    """A fetcher that records what it was asked to fetch (nothing, here)."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def fetch(self, url: str, *_: Any) -> Any:
        self.asked.append(url)
        raise AssertionError(f"{url} was sent on a stale lease")

    fetch_document = fetch


async def test_the_fetch_stage_sends_no_stale_page_and_frees_its_hosts_slot(
    tmp_path: Path,
) -> None:
    """The same through the node's fetch stage (``PageFetch``): a page job whose lease
    went stale is not sent (the fetcher is never called), counted, and its host's slot
    is free at once for the next page."""
    clock = FakeClock(T0)
    s = _scheduler(tmp_path, clock, gap=1.0, ceiling=1, leases=LeaseBook(10.0, guard=2.0))
    fetcher = _NoFetcher()
    counters = Counters()
    pages = PageFetch(
        fetcher,  # type: ignore[arg-type]
        s,
        build_settings({"user_agent": "testbot/1.0 (+https://example.org/bot)"}),
        counters,
        clock=clock,
        handlers=HandlerRegistry([]),
        parse_stage=Stage("parse", 10),
        store_stage=Stage("store", 10),
        on_quota=lambda url: None,
        recrawl=NoRecrawl(),
    )
    job = await _page(s)
    clock.now = T0 + 9.0  # stalled past the lease's fresh part
    assert await asyncio.wait_for(pages.run(job), 2) is False
    assert fetcher.asked == [] and counters.stale_leases == 1
    assert s.limiter(HOST).statistics().in_flight == 0
    nxt = await _job(s, real_wait=1.0)
    assert isinstance(nxt, PageJob) and nxt.lease.host == HOST, nxt
