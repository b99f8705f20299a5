"""The scheduler: hands the next polite job to a fetch slot that asks for one.

Hosts wait in a heap ordered by the time the politeness policy lets them start a
request (Mercator's back queues). A slot pulls; the scheduler pops the first ready host,
asks its ``HostLimiter`` (the one politeness rule), makes sure its robots.txt is known
(fetching it first, under the same politeness), leases one URL from the frontier and
hands it over. Hosts at their concurrency limit leave the heap until a fetch finishes.
Only this scheduler schedules the hosts of this crawl, so politeness needs no
coordination between slots.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import heapq
import itertools
import logging
import math
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass

from headway.frontier.store import FrontierStore, LeasedUrl
from headway.policy.outcome import Outcome
from headway.policy.politeness import HostLimiter, HostLimitParams, HostLimitStats
from headway.policy.robots import RobotsCache, RobotsKind, RobotsRules, clamp_crawl_delay
from headway.runtime.worker import ThreadWorker
from headway.urls.domain import match_host, strip_port
from headway.urls.scope import OptOut

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class HostPressure:
    known: int  # hosts with a limiter in memory
    active: int  # hosts with a request in flight
    parked: int  # hosts parked (long Crawl-delay, or health cool-down)
    top: list[tuple[str, HostLimitStats]]  # most throttled first


@dataclass(frozen=True, slots=True)
class RobotsJob:
    host: str
    url: str  # the robots.txt URL


@dataclass(frozen=True, slots=True)
class PageJob:
    lease: LeasedUrl
    retry: bool


Job = RobotsJob | PageJob
#: Called for a leased URL that is settled without a fetch: (lease, note, retry_at);
#: retry_at None means the URL is finished (e.g. robots-disallowed), else it is requeued.
SkipHook = Callable[[LeasedUrl, str, float | None], Awaitable[None]]


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
    ) -> None:
        self._clock = clock  # wall-clock seconds; every time the scheduler reads is this
        self._frontier = frontier
        self._worker = worker
        self._params = limits
        self.robots = robots
        self.robots_ttl = robots_ttl
        self._crawl_delay_max = crawl_delay_max
        self._lease_seconds = lease_seconds
        self._optout = optout
        self._on_skip = on_skip
        self._refill_batch = refill_batch
        self._robots_give_up = robots_give_up
        ceilings = host_ceilings or {}
        self._ceilings = {k: v for k, v in ceilings.items() if not k.startswith("*.")}
        self._suffix_ceilings = {k[2:]: v for k, v in ceilings.items() if k.startswith("*.")}
        self._heap: list[tuple[float, int, str]] = []
        self._seq = 0
        self._in_heap: set[str] = set()
        self._busy: set[str] = set()  # at their concurrency limit, or fetching robots.txt
        self._held: dict[str, LeasedUrl] = {}  # leased while its host's robots.txt is fetched
        # per-host limiters, least recently used first; idle ones are evicted past
        # ``max_limiters`` so memory does not grow with the number of hosts ever seen
        self._limiters: OrderedDict[str, HostLimiter] = OrderedDict()
        self.max_limiters = max_limiters
        self.parked: set[str] = set()
        # small sets kept up to date as fetches end, so pressure reports never walk every
        # limiter: hosts with a request in flight, and hosts held back (backoff, wait, park)
        self._active: set[str] = set()
        self._throttled: set[str] = set()
        self._lock = asyncio.Lock()
        self._wake = asyncio.Event()
        self._last_refill = 0.0
        self.stopping = False
        self.paused_until = 0.0  # global pause (quota exhausted)
        self.page_budget = math.inf  # page jobs still allowed (--max-pages)

    # -- state -----------------------------------------------------------------------
    def limiter(self, host: str) -> HostLimiter:
        lim = self._limiters.get(host)
        if lim is None:
            lim = self._limiters[host] = HostLimiter(self._params_for(host))
        else:
            self._limiters.move_to_end(host)
        return lim

    def _idle(self, host: str, lim: HostLimiter) -> bool:
        return (
            lim.statistics().in_flight == 0
            and host not in self._in_heap
            and host not in self._busy
            and host not in self._held
        )

    async def evict_idle_limiters(self, now: float) -> int:
        """Drop the least recently used idle limiters beyond ``max_limiters``. A host that
        must still wait (backoff, Retry-After, parking) has its ready time written to the
        frontier first, so forgetting its limiter never lets it be fetched sooner."""
        excess = len(self._limiters) - self.max_limiters
        if excess <= 0:
            return 0
        victims: list[tuple[str, float]] = []
        for host, lim in self._limiters.items():
            if len(victims) >= excess:
                break
            if self._idle(host, lim):
                victims.append((host, lim.ready_at()))
        for host, ready in victims:
            del self._limiters[host]
            self._throttled.discard(host)
            if ready > now:
                await self._worker.call(self._frontier.set_host_ready_at, host, ready)
        return len(victims)

    def _params_for(self, host: str) -> HostLimitParams:
        """The default limits, with the operator's ceiling for this host if one matches
        (exact host first, then the longest ``*.suffix``)."""
        if not self._ceilings and not self._suffix_ceilings:
            return self._params
        ceiling = self._ceilings.get(host)  # a HOST:PORT entry
        if ceiling is None:
            ceiling = match_host(strip_port(host), self._ceilings, self._suffix_ceilings)
        if ceiling is None:
            return self._params
        return dataclasses.replace(self._params, ceiling=ceiling)

    def held(self) -> int:
        return len(self._held)

    def _note(self, host: str, lim: HostLimiter, now: float) -> None:
        st = lim.statistics()
        if not st.in_flight:
            self._active.discard(host)
        held_back = st.gap > lim.base_gap() or st.not_before > now or st.parked_until > now
        if held_back:
            self._throttled.add(host)
        else:
            self._throttled.discard(host)

    def host_pressure(self, now: float, top: int = 20) -> HostPressure:
        """Hosts known, in flight and parked, and the ``top`` most throttled (filled up with
        the most recently used when fewer are throttled); costs O(active + throttled)."""
        candidates = self._active | self._throttled
        candidates.update(itertools.islice(reversed(self._limiters), top))
        stats = {h: self._limiters[h].statistics() for h in candidates if h in self._limiters}
        ranked = sorted(stats.items(), key=lambda kv: (-kv[1].gap, kv[1].limit))[:top]
        parked = self.parked | {h for h, st in stats.items() if st.parked_until > now}
        active = sum(1 for st in stats.values() if st.in_flight)
        return HostPressure(len(self._limiters), active, len(parked), ranked)

    def hosts_ready(self) -> int:
        now = self._clock()
        return sum(1 for t, _, _ in self._heap if t <= now)

    def wake(self) -> None:
        self._wake.set()

    def _push(self, host: str, ready_at: float) -> None:
        if host in self._in_heap:
            return
        if math.isinf(ready_at):
            self._busy.add(host)
            return
        self._busy.discard(host)
        self._seq += 1
        heapq.heappush(self._heap, (ready_at, self._seq, host))
        self._in_heap.add(host)

    # -- pulling ---------------------------------------------------------------------
    async def next_job(self) -> Job | None:
        """The next job for the calling slot; None once the scheduler is stopping."""
        while not self.stopping and self.page_budget > 0:
            async with self._lock:
                job = await self._next_ready(self._clock())
            if job is not None:
                return job
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self._idle_wait(self._clock()))
        return None

    def _idle_wait(self, now: float) -> float:
        wait = 0.25
        if self._heap:
            wait = min(wait, max(0.005, self._heap[0][0] - now))
        if self.paused_until > now:
            wait = max(wait, min(1.0, self.paused_until - now))
        return wait

    async def _refill(self, now: float) -> None:
        exclude = frozenset(self._in_heap | self._busy)
        hosts = await self._worker.call(
            self._frontier.ready_hosts, now, self._refill_batch, exclude
        )
        self._last_refill = now
        await self.evict_idle_limiters(now)
        for host, ready in hosts:
            self._push(host, max(ready, self.limiter(host).ready_at()))

    async def _next_ready(self, now: float) -> Job | None:
        if self.paused_until > now or self.page_budget <= 0:
            return None
        if (not self._heap or self._heap[0][0] > now) and now - self._last_refill > 0.05:
            await self._refill(now)
        while self._heap and self._heap[0][0] <= now and not self.stopping:
            _, _, host = heapq.heappop(self._heap)
            self._in_heap.discard(host)
            job = await self._job_for(host, now)
            if job is not None:
                return job
        return None

    async def _job_for(self, host: str, now: float) -> Job | None:
        lim = self.limiter(host)
        if not lim.can_start(now):
            self._push(host, lim.ready_at())
            return None
        if self._optout is not None and self._optout.blocks(host):
            dropped = await self._worker.call(self._frontier.drop_host, host, "opted-out")
            log.info("host %s is opted out: %d queued URLs dropped", host, dropped)
            return None
        known = self.robots.get(host, now)
        if known is not None and known.kind is RobotsKind.BLOCKED:
            # the address guard refused the host's address: final, its URLs fail at once
            held = self._held.pop(host, None)
            if held is not None:
                await self._on_skip(held, "blocked-address", None)
            dropped = await self._worker.call(self._frontier.drop_host, host, "blocked-address")
            if dropped:
                log.info("host %s is blocked: %d queued URLs marked failed", host, dropped)
            return None
        if known is not None and known.kind is RobotsKind.DISALLOW_ALL:
            # robots.txt unreachable or 5xx (RFC 9309 2.3.1.3): wait for its retry time.
            held = self._held.pop(host, None)
            if known.failures >= self._robots_give_up:
                # Unreachable for good: its URLs fail (recorded) instead of waiting forever.
                if held is not None:
                    await self._on_skip(held, "robots-unreachable", None)
                dropped = await self._worker.call(
                    self._frontier.drop_host, host, "robots-unreachable"
                )
                log.warning(
                    "giving up on %s: robots.txt failed %d times; %d queued URLs marked failed",
                    host,
                    known.failures,
                    dropped + (held is not None),
                )
                return None
            if held is not None:
                await self._on_skip(held, "robots-unavailable", known.expires_at)
            self._push(host, known.expires_at)
            return None
        while True:
            lease = self._held.pop(host, None)
            if lease is None:
                leased = await self._worker.call(
                    self._frontier.lease_many, [(host, 1)], now, self._lease_seconds
                )
                if not leased:
                    return None  # nothing ready; the frontier offers the host again later
                lease = leased[0]
            rules = self.robots.get(host, now)
            if rules is None:
                self._held[host] = lease
                lim.on_start(now)
                self._active.add(host)
                self._busy.add(host)
                scheme = lease.url.split(":", 1)[0]
                return RobotsJob(host, f"{scheme}://{host}/robots.txt")
            if not rules.allowed(lease.url):
                await self._on_skip(lease, "robots-disallowed", None)
                continue
            retry = lease.attempts > 0
            self.page_budget -= 1
            lim.on_start(self._clock(), retry=retry)
            self._active.add(host)
            self._push(host, lim.ready_at())
            return PageJob(lease, retry)

    # -- results ---------------------------------------------------------------------
    def on_fetch_done(
        self, host: str, now: float, outcome: Outcome, *, latency: float, retry_after: float | None
    ) -> float:
        """Feed an outcome to the host's limiter; returns the host's next ready time."""
        lim = self.limiter(host)
        lim.on_finish(now, outcome, latency=latency, retry_after=retry_after)
        self._note(host, lim, now)
        ready = lim.ready_at()
        if host in self._busy and host not in self._held:
            self._push(host, ready)
        self._wake.set()
        return ready

    def on_robots_done(
        self, host: str, rules: RobotsRules, now: float, outcome: Outcome, latency: float
    ) -> None:
        self.robots.put(host, rules)
        delay, parked = clamp_crawl_delay(rules.crawl_delay, self._crawl_delay_max)
        lim = self.limiter(host)
        # A site asking for more than crawl_delay_max between requests still gets its full
        # delay (never hammered); it is reported as parked.
        lim.crawl_delay = delay
        if parked:
            self.parked.add(host)
        else:
            self.parked.discard(host)
        lim.on_finish(now, outcome, latency=latency, retry_after=None)
        self._note(host, lim, now)
        self._busy.discard(host)
        if host in self._held:
            self._push(host, lim.ready_at())
        self._wake.set()
