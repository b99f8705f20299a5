"""The scheduler's shell: performs the decisions of ``policy/schedule.py`` (frontier calls,
skips) and hands each job to exactly one waiting fetch slot.

A slot calls ``next_job()``; it gets a future of its own, queued in arrival order. One
dispatcher task (``run()``, owned by the node's task group) asks the pure core what to do
at the current time and does it: a job resolves the oldest waiting future (so one ready
host wakes one slot, never all of them); a ``LeaseFor`` leases URLs for many ready hosts
in one frontier call; a ``Refill`` reads ready hosts (and the saved state of hosts met
for the first time); a ``Wait`` sleeps until the earliest ready time or an event
(``wake()``, a finished fetch, a new slot waiting, ``resume()``, ``stop()``), the one timer
of the scheduler. Only this scheduler schedules the hosts this node may schedule, so
politeness needs no coordination between slots.

Steering: ``pause()`` / ``resume()`` (quota, controls), ``set_overrides()`` (per-host
overrides), ``stop()`` (no job after it; every waiting
slot gets None); the page budget is given at construction. After ``stop()`` or once the
budget is spent, ``next_job()`` returns None.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections import deque
from collections.abc import Awaitable, Callable, Hashable, Mapping, Sequence

from headway.frontier.store import FrontierStore, LeasedUrl
from headway.policy import hoststate
from headway.policy.hoststate import HostState
from headway.policy.outcome import Outcome
from headway.policy.overrides import HostOverride
from headway.policy.politeness import HostLimiter, HostLimitParams
from headway.policy.robots import RobotsCache, RobotsRules, robots_state
from headway.policy.schedule import (
    DropHost,
    FetchPage,
    FetchRobots,
    HostPressure,
    Job,
    LeaseFor,
    Refill,
    SaveStates,
    ScheduleCore,
    ScheduleParams,
    SkippedUrl,
    Wait,
)
from headway.runtime.leases import LeaseBook
from headway.runtime.stats import HostRow, SchedulerStats
from headway.threads import ThreadWorker
from headway.urls.scope import OptOut

__all__ = ["HostPressure", "Job", "PageJob", "RobotsJob", "Scheduler", "SkipHook"]

log = logging.getLogger(__name__)

RobotsJob = FetchRobots
PageJob = FetchPage

#: Most URLs leased for one host in one frontier call (as many as its gap lets it fetch
#: within ``LEASE_HORIZON`` seconds): one lease call per few pages, not one per page.
LEASE_AHEAD = 4
LEASE_HORIZON = 4.0

#: Called for a leased URL that is settled without a fetch (``requeue_at`` None: it is
#: finished, e.g. robots-disallowed; else it is put back untried).
SkipHook = Callable[[SkippedUrl], Awaitable[None]]


class Scheduler:
    def __init__(
        self,
        frontier: FrontierStore,
        worker: ThreadWorker,
        *,
        limits: HostLimitParams,
        robots: RobotsCache,
        robots_ttl: float,
        crawl_delay_max: float,
        lease_seconds: float,
        optout: OptOut | None,
        on_skip: SkipHook,
        robots_give_up: int = 4,
        host_ceilings: Mapping[str, int] | None = None,
        refill_batch: int = 256,
        max_limiters: int = 50_000,
        clock: Callable[[], float] = time.time,
        user_agent: str = "",
        page_budget: float = math.inf,
        extra_gap: Callable[[str], float] | None = None,
        leases: LeaseBook | None = None,
        revisits_first: Callable[[], bool | None] = lambda: None,
        lease_ahead: int = LEASE_AHEAD,
        waits_for_parser: Callable[[str], bool] | None = None,
        inlinks: Callable[[str], int] | None = None,
        quality: Callable[[str], float] | None = None,
    ) -> None:
        self._clock = clock  # wall-clock seconds; every time the scheduler reads is this
        # seconds a host waits after a fetch on top of politeness (host quality, see
        # policy.priority.quality_gap); never shortens a wait
        self._extra_gap = extra_gap
        # recrawl: which kind a lease takes first (policy.revisit.prefer_revisits)
        self._revisits_first = revisits_first
        self._frontier = frontier
        self._worker = worker
        self._lease_seconds = lease_seconds
        self._on_skip = on_skip
        self.leases = leases if leases is not None else LeaseBook()  # held until settled
        self.robots_ttl = robots_ttl
        params = ScheduleParams(
            limits=limits,
            crawl_delay_max=crawl_delay_max,
            user_agent=user_agent,
            robots_give_up=robots_give_up,
            host_ceilings=dict(host_ceilings or {}),
            refill_batch=refill_batch,
            lease_batch=refill_batch,
            lease_ahead=lease_ahead,
            lease_horizon=LEASE_HORIZON,
            max_limiters=max_limiters,
        )
        self.core = ScheduleCore(
            params,
            robots=robots,
            optout=optout,
            page_budget=page_budget,
            waits_for_parser=waits_for_parser,
            # the importance order between ready hosts (policy/importance.py); None: by
            # ready time
            inlinks=inlinks,
            quality=quality,
        )
        self._waiters: deque[asyncio.Future[Job | None]] = deque()
        self._event = asyncio.Event()
        self._idle = asyncio.Event()  # the dispatcher waits with nothing left to look at
        self._stopping = False
        self._pause_reasons: set[str] = set()  # why fetching is paused (see pause())

    # -- views -------------------------------------------------------------------------
    @property
    def robots(self) -> RobotsCache:
        return self.core.robots

    @property
    def clock(self) -> Callable[[], float]:
        """The wall clock the scheduler reads."""
        return self._clock

    @property
    def stopping(self) -> bool:
        return self._stopping

    @property
    def paused(self) -> bool:
        """True while any reason paused for is not resumed."""
        return self.core.paused

    def limiter(self, host: str) -> HostLimiter:
        return self.core.limiter(host)

    def held(self) -> int:
        return self.core.held()

    def hosts_ready(self) -> int:
        return self.core.hosts_ready(self._clock())

    def host_pressure(self, now: float, top: int = 20) -> HostPressure:
        return self.core.host_pressure(now, top)

    def statistics(self, top: int = 20) -> SchedulerStats:
        """Hosts known, active, ready, waiting and parked, the ``top`` most throttled, and
        whether fetching is paused."""
        now = self._clock()
        p = self.core.host_pressure(now, top)
        return SchedulerStats(
            known=p.known,
            active=p.active,
            ready=self.core.hosts_ready(now),
            waiting=self.core.hosts_waiting(now),
            parked=p.parked,
            paused=self.core.paused,
            paused_for=tuple(sorted(self._pause_reasons)),
            throttled=tuple(
                HostRow(h, st.in_flight, st.limit, st.gap, st.retry_ratio, st.health)
                for h, st in p.top
            ),
        )

    # -- steering ----------------------------------------------------------------------
    def pause(self, reason: str = "") -> None:
        """Hand out no job until every reason paused for is resumed (slots keep
        waiting): an operator's pause and a quota pause are lifted each by its own
        ``resume``."""
        self._pause_reasons.add(reason)
        self.core.paused = True

    def resume(self, reason: str = "") -> None:
        self._pause_reasons.discard(reason)
        self.core.paused = bool(self._pause_reasons)
        self._poke()

    def stop(self) -> None:
        """No job after this: every waiting slot, and every later ``next_job``, gets None."""
        self._stopping = True
        self._release_waiters()
        self._poke()

    def set_overrides(self, overrides: Mapping[str, HostOverride]) -> None:
        """Put an operator's per-host overrides in force (``policy/overrides.py``)."""
        self.core.set_overrides(overrides)
        self._event.set()

    def wake(self) -> None:
        """The frontier changed (URLs added or put back): look again."""
        self.core.frontier_changed()
        self._poke()

    def parser_took(self, host: Hashable) -> None:
        """``host``'s last page left the parse queue: a next fetch waiting for that may
        go (``ScheduleCore.parser_took``)."""
        if isinstance(host, str) and self.core.parser_took(host, self._clock()):
            self._poke()

    def _poke(self) -> None:
        """Something changed: the dispatcher looks again (it is not idle until it has)."""
        self._idle.clear()
        self._event.set()

    async def wait_idle(self) -> None:
        """Return once the dispatcher has looked at everything asked of it so far and
        waits for its clock or a wake; until then it may still hand out a job. Lets a test
        show that nothing happens without sleeping for a while."""
        await self._idle.wait()

    # -- pulling -----------------------------------------------------------------------
    async def next_job(self) -> Job | None:
        """The next job for the calling slot; None once stopping or the budget is spent."""
        if self._stopping or self.core.page_budget <= 0:
            return None
        fut: asyncio.Future[Job | None] = asyncio.get_running_loop().create_future()
        self._waiters.append(fut)
        self._poke()
        try:
            return await fut
        except asyncio.CancelledError:
            # the slot was cancelled: its future leaves the queue now, so that every
            # future in it is a live waiter (counted in O(1) at each step)
            with contextlib.suppress(ValueError):
                self._waiters.remove(fut)
            raise

    def _live_waiters(self) -> int:
        return len(self._waiters)

    def _hand(self, job: Job) -> bool:
        while self._waiters:
            fut = self._waiters.popleft()
            if not fut.done():
                fut.set_result(job)
                return True
        return False

    def _release_waiters(self) -> None:
        while self._waiters:
            fut = self._waiters.popleft()
            if not fut.done():
                fut.set_result(None)

    async def run(self) -> None:
        """The dispatcher: decide, act, repeat until ``stop()``."""
        try:
            while not self._stopping:
                self._event.clear()
                await self._step(self._clock())
        except BaseException as exc:
            for fut in self._waiters:
                if not fut.done():
                    if isinstance(exc, Exception):
                        fut.set_exception(exc)
                    else:
                        fut.cancel()
            self._waiters.clear()
            raise

    async def _step(self, now: float) -> None:
        d = self.core.decide(now, self._live_waiters())
        if isinstance(d, FetchRobots | FetchPage):
            if not self._hand(d):  # pragma: no cover - decide counts live waiters first
                raise AssertionError("a job without a waiting slot")
        elif isinstance(d, SkippedUrl):
            await self._on_skip(d)
        elif isinstance(d, DropHost):
            dropped = await self._worker.call(self._frontier.drop_host, d.host, d.reason)
            log.info(
                "host %s dropped (%s): %d queued URLs marked failed", d.host, d.reason, dropped
            )
        elif isinstance(d, LeaseFor):
            first = self._revisits_first()
            leased = await self._worker.call(
                self._frontier.lease_many,
                list(d.wants),
                now,
                self._lease_seconds,
                revisits_first=first,
            )
            self.leases.hold(leased, now)
            self.core.offer_leases(d.wants, leased, now)
        elif isinstance(d, Refill):
            await self._refill(now, d)
        elif isinstance(d, SaveStates):
            await self._save_states(d.states)
        else:
            assert isinstance(d, Wait)
            if self.core.page_budget <= 0:
                self._release_waiters()  # the budget is spent: no job will come
            timeout = None if math.isinf(d.until) else max(0.0, d.until - self._clock())
            # asyncio.timeout, not wait_for, which can swallow a cancellation (3.11)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(timeout):
                    if timeout != 0 and not self._event.is_set():
                        self._idle.set()
                    await self._event.wait()
            self._idle.clear()

    async def _refill(self, now: float, d: Refill) -> None:
        forgotten = self.core.forget_idle(now)
        for host, ready, _ in forgotten:
            if ready > now and math.isfinite(ready):
                await self._worker.call(self._frontier.set_host_ready_at, host, ready)
        waits = [(h, HostState(wait=w)) for h, _, w in forgotten if w is not None]
        if waits:
            await self._save_states(waits)
        hosts, nxt = await self._worker.call(_ready, self._frontier, now, d.limit, d.exclude)
        unknown = self.core.unknown([h for h, _ in hosts])
        states: dict[str, HostState] = {}
        if unknown:
            saved = await self._worker.call(self._frontier.get_host_states, unknown)
            states = {h: hoststate.decode(v) for h, v in saved.items()}
        self.core.offer_hosts(hosts, nxt, states, now)

    async def _save_states(self, states: Sequence[tuple[str, HostState]]) -> None:
        hosts = [h for h, _ in states]
        stored = await self._worker.call(self._frontier.get_host_states, hosts)
        items = [
            (h, hoststate.encode(hoststate.merge(hoststate.decode(stored.get(h)), st)))
            for h, st in states
        ]
        await self._worker.call(self._frontier.put_host_states, items)

    async def save_waits(self) -> None:
        """Persist the wait of every host that holds one (at a clean stop), so the next
        run (or another node) does not forget a backoff."""
        waits = self.core.waits(self._clock())
        if waits:
            await self._save_states(waits)

    # -- results -----------------------------------------------------------------------
    def on_fetch_done(
        self, host: str, now: float, outcome: Outcome, *, latency: float, retry_after: float | None
    ) -> float:
        """Feed an outcome to the host's limiter; returns the host's next ready time."""
        extra = self._extra_gap(host) if self._extra_gap is not None else 0.0
        ready = self.core.on_fetch_done(
            host, now, outcome, latency=latency, retry_after=retry_after, extra_gap=extra
        )
        self._poke()
        return ready

    def may_send(self, lease: LeasedUrl, now: float) -> bool:
        """Whether the page job of ``lease`` may be sent now (``LeaseBook.may_send``)."""
        return self.leases.may_send(lease.id, now)

    def on_not_sent(self, lease: LeasedUrl, now: float) -> None:
        """A page job was not sent because its lease was stale: the host's slot is
        freed and the lease forgotten (never extended again, it runs out in the
        frontier and its URL returns to its queue there, for whichever node holds the
        shard then)."""
        self.leases.drop([lease.id])
        self.core.on_not_sent(lease.host, now)
        self._poke()

    def on_robots_done(
        self,
        host: str,
        rules: RobotsRules,
        now: float,
        outcome: Outcome,
        latency: float,
        body: bytes | None = None,
    ) -> None:
        """A robots.txt fetch ended with ``rules`` (read from ``body``): they are kept in
        memory and saved in the frontier's host state."""
        self.core.on_robots_done(
            host, rules, now, outcome, latency, saved=robots_state(rules, body)
        )
        self._poke()


def _ready(
    frontier: FrontierStore, now: float, limit: int, exclude: frozenset[str]
) -> tuple[list[tuple[str, float]], float | None]:
    """Ready hosts and the frontier's next ready time, in one trip to its thread."""
    return frontier.ready_hosts(now, limit, exclude), frontier.next_ready_time(exclude)
