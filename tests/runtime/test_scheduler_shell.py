"""The scheduler's shell: one job per waiting slot, leases in batches, host state saved
in the frontier and found again by the next scheduler (a restart)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from headway.frontier.sqlite import SqliteFrontier
from headway.frontier.store import LeasedUrl, UrlEntry
from headway.policy.outcome import Outcome
from headway.policy.politeness import HostLimitParams
from headway.policy.robots import RobotsCache, RobotsKind, RobotsRules, robots_from_response
from headway.runtime.scheduler import PageJob, RobotsJob, Scheduler
from headway.threads import ThreadWorker
from headway.urls.fingerprint import fingerprint

UA = "testbot/1.0 (+https://example.org/bot)"
T0 = 1_000_000.0


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        return self.now


class CountingFrontier(SqliteFrontier):
    """Counts ``lease_many`` calls and the hosts in them."""

    calls: list[int]

    def lease_many(
        self,
        wants: Sequence[tuple[str, int]],
        now: float,
        lease_seconds: float,
        *,
        revisits_first: bool | None = None,
    ) -> list[LeasedUrl]:
        self.calls.append(len(wants))
        return super().lease_many(wants, now, lease_seconds, revisits_first=revisits_first)


def _frontier(path: Path, hosts: int, per_host: int = 3) -> CountingFrontier:
    f = CountingFrontier(path, node_id="n")
    f.calls = []
    urls = [f"http://h{h}.test/p{i}" for h in range(hosts) for i in range(per_host)]
    f.add([UrlEntry(u, u.split("/")[2], 0, 0, fingerprint(u)) for u in urls], T0)
    return f


async def _skip(*_: Any) -> None:
    return None


@asynccontextmanager
async def running(
    frontier: SqliteFrontier, clock: Clock, robots: RobotsCache | None = None
) -> AsyncIterator[Scheduler]:
    s = Scheduler(
        frontier,
        ThreadWorker("test"),
        limits=HostLimitParams(min_gap=1.0, ceiling=1),
        robots=robots if robots is not None else RobotsCache(),
        robots_ttl=3600,
        crawl_delay_max=30,
        lease_seconds=60,
        optout=None,
        on_skip=_skip,
        clock=clock,
        user_agent=UA,
    )
    task = asyncio.create_task(s.run())
    try:
        yield s
    finally:
        s.stop()
        await asyncio.wait_for(task, 5)


def _allow(hosts: int) -> RobotsCache:
    robots = RobotsCache()
    for h in range(hosts):
        robots.put(f"h{h}.test", RobotsRules(RobotsKind.ALLOW_ALL, T0, T0 + 10**6))
    return robots


async def test_one_ready_host_wakes_exactly_one_of_many_waiting_slots(tmp_path: Path) -> None:
    clock = Clock()
    async with running(_frontier(tmp_path / "f.db", 1), clock, _allow(1)) as s:
        slots = [asyncio.create_task(s.next_job()) for _ in range(5)]
        await asyncio.wait(slots, timeout=5, return_when=asyncio.FIRST_COMPLETED)
        await asyncio.wait_for(s.wait_idle(), 5)  # it looked again: nothing more is due
        done = {t for t in slots if t.done()}
        pending = [t for t in slots if not t.done()]
        assert len(done) == 1 and len(pending) == 4
        assert isinstance(next(iter(done)).result(), PageJob)
        s.stop()
        rest = await asyncio.gather(*pending)
        assert rest == [None] * 4
    assert await s.next_job() is None


async def test_ready_hosts_are_leased_in_batches_not_one_call_per_page(tmp_path: Path) -> None:
    clock = Clock()
    frontier = _frontier(tmp_path / "f.db", 40)
    async with running(frontier, clock, _allow(40)) as s:
        jobs = await asyncio.wait_for(asyncio.gather(*(s.next_job() for _ in range(40))), 5)
    assert all(isinstance(j, PageJob) for j in jobs)
    assert len({j.lease.host for j in jobs if isinstance(j, PageJob)}) == 40
    assert sum(frontier.calls) == 40
    assert len(frontier.calls) <= 4, frontier.calls  # a handful of calls, not 40


async def test_restart_keeps_robots_verdicts_and_backoff(tmp_path: Path) -> None:
    clock = Clock()
    db = tmp_path / "f.db"
    frontier = _frontier(db, 1)
    async with running(frontier, clock) as s:
        job = await asyncio.wait_for(s.next_job(), 5)
        assert isinstance(job, RobotsJob)
        body = b"User-agent: *\nDisallow: /private\n"
        rules = robots_from_response(status=200, body=body, user_agent=UA, now=clock.now)
        s.on_robots_done(job.host, rules, clock.now, Outcome.OK, 0.1, body=body)
        clock.now += 1.0
        page = await asyncio.wait_for(s.next_job(), 5)
        assert isinstance(page, PageJob)
        s.on_fetch_done(job.host, clock.now, Outcome.THROTTLED, latency=0.1, retry_after=120.0)
        await s.save_waits()
    frontier.release_own_leases()
    frontier.close()

    restarted = _frontier(db, 0)
    async with running(restarted, clock) as s2:
        waiting = asyncio.create_task(s2.next_job())
        await asyncio.sleep(0)  # the slot starts waiting
        await asyncio.wait_for(s2.wait_idle(), 5)  # the dispatcher looked and waits
        assert not waiting.done()  # the 120 s Retry-After wait survived the restart
        clock.now += 121.0
        s2.wake()
        job = await asyncio.wait_for(waiting, 5)
        assert isinstance(job, PageJob)  # not a robots.txt fetch: the verdict was saved
        rules2 = s2.robots.get("h0.test", clock.now)
        assert rules2 is not None and not rules2.allowed("http://h0.test/private/x")
    restarted.close()


async def test_a_cancelled_slot_is_not_counted_as_waiting(tmp_path: Path) -> None:
    """A slot cancelled while it waits leaves the queue: the next ready host goes to a
    slot that is still waiting, and the dispatcher never holds a job for nobody."""
    clock = Clock()
    frontier = _frontier(tmp_path / "f.db", 0)
    async with running(frontier, clock, _allow(1)) as s:
        gone = asyncio.create_task(s.next_job())
        await asyncio.sleep(0)  # the slot starts waiting
        await asyncio.wait_for(s.wait_idle(), 5)  # the dispatcher saw it, found nothing
        gone.cancel()
        await asyncio.gather(gone, return_exceptions=True)
        url = "http://h0.test/p0"
        frontier.add([UrlEntry(url, "h0.test", 0, 0, fingerprint(url))], clock.now)
        s.wake()
        await asyncio.wait_for(s.wait_idle(), 5)  # the dispatcher looks while nobody waits
        job = await asyncio.wait_for(s.next_job(), 5)
        assert isinstance(job, PageJob) and job.lease.url == url


async def test_an_operators_resume_does_not_lift_a_quota_pause(tmp_path: Path) -> None:
    """A pause is lifted only by a resume for the same reason: an operator's resume
    during a quota pause (or the quota's resume during an operator's pause) hands out
    nothing, so neither can unpause what the other paused."""
    clock = Clock()
    async with running(_frontier(tmp_path / "f.db", 1), clock, _allow(1)) as s:
        s.pause("quota")
        s.pause("control")
        s.resume("control")
        slot = asyncio.create_task(s.next_job())
        await asyncio.wait_for(s.wait_idle(), 5)
        assert s.paused and not slot.done()  # still paused for the quota
        s.pause("control")
        s.resume("quota")
        await asyncio.wait_for(s.wait_idle(), 5)
        assert s.paused and not slot.done()  # still paused by the operator
        s.resume("control")
        assert not s.paused
        assert isinstance(await asyncio.wait_for(slot, 5), PageJob)
