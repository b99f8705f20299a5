"""The politeness property on the scheduler's real path: the async shell over a real
frontier, leasing several URLs per host at once, with fetch slots that come and go, and
the node's fetch stage (``PageFetch``) running each job: its fetcher reports a request
sent some time after the job was handed out (connection set-up) and an answer at any
time after, some a 429 with a Retry-After. Whatever the timing, a host's next job is
never handed out sooner than one gap after its last request went out, nor before its
Retry-After time, nor while its one request is in flight.

The clock is fake: the dispatcher is asked to settle (``wait_idle``) after each move of
it, so no test sleeps for a politeness gap. The pure core's own property is in
``tests/policy/test_schedule.py``; this one also covers what the shell and the fetch
stage add (leases held, refills, waking slots, the send time and the Retry-After fed
back to the host's limiter)."""

from __future__ import annotations

import asyncio
import math
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from headway.fetch.result import FetchResult
from headway.frontier.sqlite import SqliteFrontier
from headway.frontier.store import UrlEntry
from headway.parse.handlers import HandlerRegistry
from headway.policy.outcome import Outcome
from headway.policy.politeness import HostLimitParams
from headway.policy.robots import RobotsCache, RobotsKind, RobotsRules
from headway.runtime.fetchjobs import PageFetch
from headway.runtime.metrics import Counters
from headway.runtime.recrawl import NoRecrawl
from headway.runtime.scheduler import Job, PageJob, Scheduler
from headway.runtime.stage import Stage
from headway.settings import build_settings
from headway.threads import ThreadWorker
from headway.urls.fingerprint import fingerprint

T0 = 1_000_000.0
HOSTS = ("a.example", "b.example", "c.example")
UA = "testbot/1.0 (+https://example.org/bot)"
EPS = 1e-9


class FakeClock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


async def _noop(*_: Any) -> None:
    return None


@dataclass
class Fetch:
    """One request out: handed out at ``start``, sent at ``sent``, answered at ``end``
    (429 with ``retry_after`` when that is set, else 200); ``answer`` is resolved then."""

    url: str
    start: float
    sent: float
    end: float
    retry_after: int | None
    answer: asyncio.Future[FetchResult]


@dataclass(frozen=True)
class Step:
    dt: float  # fake seconds to the next look
    setup: float  # connection set-up of a job handed out now
    duration: float  # from its send to its answer
    retry_after: int | None  # the answer's Retry-After (a 429), or None (a 200)


steps = st.lists(
    st.builds(
        Step,
        dt=st.floats(0.0, 2.5),
        setup=st.floats(0.0, 1.2),
        duration=st.floats(0.0, 1.5),
        retry_after=st.one_of(st.none(), st.none(), st.integers(0, 4)),
    ),
    min_size=5,
    max_size=40,
)


class FakeFetcher:
    """The fetch stage's fetcher: each fetch waits for the harness to answer it."""

    def __init__(self) -> None:
        self.asked: dict[str, asyncio.Future[FetchResult]] = {}

    async def fetch(self, url: str, *_: Any) -> FetchResult:
        answer: asyncio.Future[FetchResult] = asyncio.get_running_loop().create_future()
        self.asked[url] = answer
        return await answer

    fetch_document = fetch


def _answer(fetch: Fetch) -> FetchResult:
    """What the fetcher reports: when the request started and went out, and the answer."""
    if fetch.retry_after is None:
        return FetchResult(
            fetch.url, fetch.start, fetch.end - fetch.start, Outcome.OK, 200, sent_at=fetch.sent
        )
    return FetchResult(
        fetch.url,
        fetch.start,
        fetch.end - fetch.start,
        Outcome.THROTTLED,
        429,
        response_headers=(("Retry-After", str(fetch.retry_after)),),
        sent_at=fetch.sent,
    )


async def _settle(s: Scheduler) -> None:
    """Let the dispatcher look at everything it was told, then the slots it woke run."""
    await asyncio.wait_for(s.wait_idle(), 5)
    for _ in range(3):
        await asyncio.sleep(0)


async def _crawl(root: Path, plan: list[Step], gap: float, slots: int) -> int:
    """Run ``plan``; returns the number of jobs handed out (asserting at each one)."""
    clock = FakeClock(T0)
    frontier = SqliteFrontier(root / "f.sqlite3", node_id="n")
    urls = [(h, f"http://{h}/p{i}") for h in HOSTS for i in range(30)]
    frontier.add([UrlEntry(u, h, 0, 0, fingerprint(u)) for h, u in urls], T0)
    robots = RobotsCache()
    for h in HOSTS:
        robots.put(h, RobotsRules(RobotsKind.ALLOW_ALL, T0, T0 + 10**6))
    worker = ThreadWorker("test")
    s = Scheduler(
        frontier,
        worker,
        limits=HostLimitParams(min_gap=gap, ceiling=1),
        robots=robots,
        robots_ttl=3600,
        crawl_delay_max=30,
        lease_seconds=600,
        optout=None,
        on_skip=_noop,
        clock=clock,
    )
    fetcher = FakeFetcher()
    pages = PageFetch(  # the node's fetch stage: it reports send times and outcomes
        fetcher,  # type: ignore[arg-type]
        s,
        build_settings({"user_agent": UA}),
        Counters(),
        clock=clock,
        handlers=HandlerRegistry([]),
        parse_stage=Stage("parse", 10_000),
        store_stage=Stage("store", 10_000),
        on_quota=lambda url: None,
        recrawl=NoRecrawl(),
    )
    dispatcher = asyncio.create_task(s.run())
    waiting: list[asyncio.Task[Job | None]] = [
        asyncio.create_task(s.next_job()) for _ in range(slots)
    ]
    out: dict[str, tuple[Fetch, asyncio.Task[bool]]] = {}  # the request in flight per host
    last_sent: dict[str, float] = {}
    not_before: dict[str, float] = {}  # Retry-After: no start before this
    handed = 0
    try:
        for step in plan:
            await _settle(s)
            for i, task in enumerate(waiting):
                if not task.done():
                    continue
                job = task.result()
                assert isinstance(job, PageJob), job
                h, now = job.lease.host, clock.now
                assert h not in out, f"{h}: a second request while one is in flight"
                assert now >= last_sent.get(h, -math.inf) + gap - EPS, (
                    f"{h}: handed out {now - last_sent[h]:.3f} s after its last send, gap {gap:.3f}"
                )
                assert now >= not_before.get(h, -math.inf) - EPS, f"{h}: before Retry-After"
                running = asyncio.create_task(pages.run(job))
                await asyncio.sleep(0)  # the fetch stage asks the fetcher
                sent = now + step.setup
                answer = fetcher.asked.pop(job.lease.url)
                fetch = Fetch(
                    job.lease.url, now, sent, sent + step.duration, step.retry_after, answer
                )
                out[h] = (fetch, running)
                handed += 1
                waiting[i] = asyncio.create_task(s.next_job())
            clock.now += step.dt
            for h, (fetch, running) in list(out.items()):  # answers that came by now
                if fetch.end <= clock.now:
                    fetch.answer.set_result(_answer(fetch))
                    assert await asyncio.wait_for(running, 5) is True
                    last_sent[h] = fetch.sent
                    if fetch.retry_after is not None:
                        not_before[h] = clock.now + fetch.retry_after
                    del out[h]
            s.wake()
        return handed
    finally:
        s.stop()
        await dispatcher
        for fetch, running in out.values():
            if not fetch.answer.done():
                fetch.answer.cancel()
            running.cancel()
        for task in waiting:
            task.cancel()
        await asyncio.gather(*waiting, *(r for _, r in out.values()), return_exceptions=True)
        worker.shutdown()
        frontier.close()


#: No shrinking: a failing plan is reported as found, within seconds (shrinking one
#: through the async shell takes minutes; the message names the host and the times).
@settings(max_examples=25, deadline=None, phases=(Phase.explicit, Phase.reuse, Phase.generate))
@given(plan=steps, gap=st.floats(0.2, 2.0), slots=st.integers(1, 4))
def test_property_the_scheduler_never_hands_a_host_out_early(
    plan: list[Step], gap: float, slots: int
) -> None:
    with tempfile.TemporaryDirectory() as root:
        asyncio.run(_crawl(Path(root), plan, gap, slots))


def test_the_property_run_hands_out_jobs() -> None:
    """The property's harness does crawl: a steady plan hands out a job per host per
    gap, so a run that handed out nothing cannot pass as polite."""
    plan = [Step(dt=0.5, setup=0.1, duration=0.1, retry_after=None)] * 20
    with tempfile.TemporaryDirectory() as root:
        handed = asyncio.run(_crawl(Path(root), plan, gap=1.0, slots=3))
    # a look every 0.5 s for 10 s; a host's next start is at the first look one gap
    # (1 s) after its last send (0.1 s after its start): at 0, 1.5, 3, ... 9 s
    assert handed == 3 * 7
