"""The node: one crawl process wiring every stage with bounded queues.

    slots (pull jobs from the scheduler; fetchjobs.py performs them)
      -> parse stage (bounded) -> parser processes        } pipeline.py
      -> store stage (bounded) -> WARC + CDXJ + crawl log  } (store thread)
      -> settle stage (bounded) -> frontier.complete()     } (frontier thread)

The parts are built by ``factory.py``; the node runs them in one task group, with the
lease heartbeat (``leases.py``) and a monitor (statistics, lease sweep, stop checks).

A slot starts no new fetch while the parse or store stage is full, so the slowest stage
sets the pace. A URL is settled in the frontier only after its WARC record is flushed, so a
``kill -9`` anywhere loses nothing: unsettled URLs are still leased and are put back in
the queue at the next start (fetched at most twice).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import math
import time
from collections.abc import Callable, Sequence

from headway import __version__, crashpoints
from headway.crashpoints import CrashPoint
from headway.fetch.client import Fetcher
from headway.frontier.redis import RedisFrontier
from headway.frontier.store import FrontierCounts, LeasedUrl, UrlEntry
from headway.parse.handlers import load_handlers
from headway.policy.priority import quality_gap
from headway.policy.quality import QualityBook
from headway.policy.robots import (
    product_token,
)
from headway.policy.schedule import ROBOTS_DISALLOWED
from headway.runtime.components import canon_options
from headway.runtime.factory import NodeParts, build_node_parts
from headway.runtime.factory import lease_seconds as lease_seconds_of
from headway.runtime.fetchjobs import PageFetch, RobotsFetch
from headway.runtime.metrics import Counters
from headway.runtime.monitor import Monitor
from headway.runtime.pipeline import Pipeline
from headway.runtime.recrawl import park_or_unpark
from headway.runtime.scheduler import RobotsJob
from headway.runtime.seeding import rules_for_seeds, shared_seeds
from headway.runtime.stats import NodeStats, RecrawlStats
from headway.runtime.summary import (
    CrawlSummary,
    peak_rss_mib,
    process_cpu_seconds,
)
from headway.runtime.work import FetchedPage, SkippedUrl
from headway.settings import Settings
from headway.urls.scope import OptOut

__all__ = ["CrawlSummary", "Node"]

log = logging.getLogger(__name__)

#: Seconds fetches in flight may still finish after a stop from outside (Ctrl-C,
#: SIGTERM, --max-duration, --max-bytes) before they are cancelled.
INTERRUPT_GRACE = 5.0
#: Seconds after that for what was fetched to be parsed, stored and settled. Pages still
#: waiting for a parser PARSE_GRACE seconds into it go back to the queue (recorded), so a
#: full parse stage cannot hold the stop. A stop from outside thus ends the pipeline
#: within INTERRUPT_GRACE + DRAIN_GRACE seconds.
DRAIN_GRACE = 10.0
PARSE_GRACE = 5.0
#: Seconds after that for the pages then still inside a parser to be recorded as
#: requeued (crawl log) before the node closes.
RECORD_GRACE = 2.0
#: Stops that end the crawl by itself, with nothing in flight: drained in full.
_NATURAL_STOPS = frozenset({"finished", "max-pages"})


class Node:
    def __init__(
        self,
        settings: Settings,
        seeds: Sequence[str],
        *,
        optout: OptOut | None = None,
        on_stats: Callable[[NodeStats], None] | None = None,
        clock: Callable[[], float] = time.time,
        on_started: Callable[[], None] | None = None,
        stats_interval: float | None = 0.25,
    ) -> None:
        self.clock = clock  # wall-clock seconds for politeness, leases and settling
        self.settings = settings
        self.seeds = list(seeds)
        self.optout = optout
        self.on_stats = on_stats  # called with a statistics reading every stats_interval s
        self._stats_interval = stats_interval
        self.on_started = on_started  # called once start-up is over, before the first fetch
        self.canon = canon_options(settings)
        self.quality = QualityBook()
        self.handlers = load_handlers()
        self._use_seeds(self.seeds)
        self.counters = Counters()
        self.token = product_token(settings.identity.user_agent)
        self._stop_reason: str | None = None
        self._stopped = asyncio.Event()
        self._robots_in_flight = 0
        self._page_jobs = 0
        self._started = time.monotonic()
        self._counts: FrontierCounts | None = None
        self._paused_for_quota = False
        self._monitoring = False  # the stages are built: statistics can be read
        self.requeued_at_stop = 0  # fetched pages a stop put back unparsed (summary)
        self._fetcher: Fetcher | None = None  # while the pipeline runs
        self._shared: RedisFrontier | None = None  # the shared store, in a shared crawl

    def _use_seeds(self, seeds: list[str]) -> None:
        """Scope, admission and settle rules for the crawl's seeds."""
        self.seeds = seeds
        quality = self.quality if self.settings.frontier.priority == "quality" else None
        self.scope, self.admission, self._rules = rules_for_seeds(
            seeds, self.settings, optout=self.optout, canon=self.canon, quality=quality
        )

    async def _shared_seeds(self) -> None:
        """In a shared crawl, use the crawl's stored seeds (``seeding.py``)."""
        shared = self.frontier
        if not isinstance(shared, RedisFrontier):
            return
        self._shared = shared
        seeds = await shared_seeds(
            shared,
            self.fw,
            self.settings.distributed.crawl_id or "",
            self.seeds,
            wait_limit=self.settings.distributed.store_outage_limit,
            stopped=self._stopped,
        )
        if seeds is not None and seeds != self.seeds:
            self._use_seeds(seeds)

    # -- control -----------------------------------------------------------------------
    def request_stop(self, reason: str) -> None:
        if self._stop_reason is None:
            self._stop_reason = reason
            log.info("stopping: %s", reason)
        self._stopped.set()

    def resume_quota(self) -> None:
        """Operator resume after a quota pause (SIGUSR1 or a 'resume' file)."""
        if self._paused_for_quota:
            self._paused_for_quota = False
            self.scheduler.resume()
            log.warning("resumed after quota pause")

    # -- run ---------------------------------------------------------------------------
    async def run(self) -> CrawlSummary:
        quality = self.settings.frontier.priority == "quality"
        parts = await build_node_parts(
            self.settings,
            optout=self.optout,
            on_skip=self._on_skip,
            clock=self.clock,
            extra_gap=self._quality_gap if quality else None,
        )
        try:
            return await self._run(parts)
        finally:
            parts.crawldir.close()

    async def _run(self, parts: NodeParts) -> CrawlSummary:
        resumed = parts.crawldir.resumed
        self.parts = parts
        self.node_id = parts.node_id
        self.paths = parts.paths
        self.fw = parts.fw
        self.frontier = parts.frontier
        self.store = parts.store
        self.scheduler = parts.scheduler
        self.leases = parts.leases
        self.parse_stage = parts.parse_stage
        self.store_stage = parts.store_stage
        self.settle_stage = parts.settle_stage
        self.pool = parts.pool
        self.recrawl = parts.recrawl
        self.metrics_file = parts.metrics_file
        self.exporter = parts.exporter
        self.pipeline = Pipeline(
            parts,
            self.settings,
            rules=self._rules,
            canon=self.canon,
            token=self.token,
            quality=self.quality,
            hostile=self.counters.hostile,
            clock=self.clock,
            recrawl=parts.recrawl,
        )
        self._monitoring = True
        if self.exporter is not None:
            # each scrape builds its own reading, on the event loop
            self.exporter.read_from(asyncio.get_running_loop(), self.statistics)
        try:
            released = await self.fw.call(self.frontier.release_own_leases)
            await self._shared_seeds()
            self.pipeline.use_rules(self._rules)  # the crawl's own seeds define them
        except BaseException:
            await self._shutdown()
            await self._close_frontier()
            raise
        if released:
            log.info("resuming: %d URLs in flight at the last stop were put back", released)
        crashpoints.reached(CrashPoint.LEASES_RELEASED)
        await park_or_unpark(self.fw, self.frontier, self.recrawl)
        seed_entries = self.admission.admit(self.seeds, 0, None)
        added = await self.fw.call(self.frontier.add, seed_entries, self.clock())
        self.seeds_added = added.added
        self._page_budget = parts.page_budget
        self._started = time.monotonic()
        cpu0 = process_cpu_seconds()
        try:
            fetcher = Fetcher(parts.fetch_config)  # loads the TLS authorities
            if self.on_started is not None:
                self.on_started()
            self._started = time.monotonic()
            cpu0 = process_cpu_seconds()
            async with fetcher:
                self.fetcher = self._fetcher = fetcher
                self._pages = PageFetch(
                    fetcher,
                    self.scheduler,
                    self.settings,
                    self.counters,
                    clock=self.clock,
                    handlers=self.handlers,
                    parse_stage=self.parse_stage,
                    store_stage=self.store_stage,
                    on_quota=self._pause_for_quota,
                    recrawl=self.recrawl,
                )
                self._robots = RobotsFetch(
                    fetcher,
                    self.scheduler,
                    self.settings,
                    self.counters,
                    clock=self.clock,
                    canon=self.canon,
                    admit_documents=self._admit_documents,
                    to_store=self.pipeline.to_store,
                )
                await self._pipeline_run()
        finally:
            await self._shutdown()
        counts = await self._close_frontier()
        return CrawlSummary(
            stopped_by=self._stop_reason or "finished",
            resumed=resumed,
            seconds=time.monotonic() - self._started,
            cpu_seconds=process_cpu_seconds() - cpu0 + self.pool.cpu_seconds(),
            fetches=self.counters.fetches,
            requests=self.counters.requests,
            bytes=self.counters.bytes,
            outcomes=dict(self.counters.outcomes),
            frontier=counts,
            seeds_added=self.seeds_added,
            revisits=self.store.revisits,
            warc_files=self.store.files,
            admission_rejected=dict(self.admission.rejected),
            peak_rss_mib=peak_rss_mib(),
            recrawl=self.recrawl.statistics() if self.recrawl is not None else None,
            requeued_at_stop=self.requeued_at_stop,
            robots_disallowed=self.counters.robots_disallowed,
        )

    async def _pipeline_run(self) -> None:
        s = self.settings
        async with asyncio.TaskGroup() as tg:
            slots = [tg.create_task(self._slot()) for _ in range(s.fetch.concurrency)]
            parsing = [tg.create_task(self.pipeline.parse_dispatch()) for _ in range(s.parsers * 2)]
            helpers = list(parsing)
            helpers.append(tg.create_task(self.pipeline.store_loop()))
            helpers.append(tg.create_task(self.pipeline.settle_loop()))
            self.monitor = Monitor(self, self._stats_interval)
            helpers.append(tg.create_task(self.monitor.run()))
            helpers.append(
                tg.create_task(
                    self.leases.keep_alive(
                        self.fw, self.frontier, lease_seconds_of(s), clock=self.clock
                    )
                )
            )
            helpers.append(tg.create_task(self.scheduler.run()))
            await self._stopped.wait()
            self.scheduler.stop()
            if self._stop_reason in _NATURAL_STOPS:
                await asyncio.gather(*slots, return_exceptions=True)
                deadline = math.inf
            else:
                # fetches already sent get a short grace to land (and not be fetched
                # twice); what is still out after it is cancelled and its lease released
                _done, pending = await asyncio.wait(slots, timeout=INTERRUPT_GRACE)
                for t in pending:
                    t.cancel()
                await asyncio.gather(*pending, return_exceptions=True)
                # what was fetched is parsed, stored and settled; pages still waiting for
                # a parser when PARSE_GRACE ends go back to the queue, recorded: a full
                # parse stage cannot hold the stop
                deadline = time.monotonic() + DRAIN_GRACE
                await self._wait_drained(time.monotonic() + PARSE_GRACE)
                unparsed = await self.parse_stage.drain_nowait()
                self.pipeline.leave(len(unparsed))
                await self._requeue_at_stop(unparsed, deadline)
            # drain what was fetched: parse -> store -> settle (the pipeline count covers
            # every page from its lease to its settling, and every robots.txt answer until
            # it is written)
            await self._wait_drained(deadline)
            if self.pipeline.in_flight > 0 and math.isfinite(deadline):
                # pages still inside a parser when the grace ends: recorded as requeued
                for t in parsing:
                    t.cancel()
                await asyncio.gather(*parsing, return_exceptions=True)
                deadline = time.monotonic() + RECORD_GRACE
                aside, self.pipeline.set_aside = self.pipeline.set_aside, []
                await self._requeue_at_stop(aside, deadline)
                await self._wait_drained(deadline)
            for t in helpers:
                t.cancel()

    async def _wait_drained(self, deadline: float) -> None:
        """Wait until the pipeline is drained, or until ``deadline`` (monotonic; inf)."""
        timeout = None if math.isinf(deadline) else max(0.0, deadline - time.monotonic())
        # asyncio.timeout, not wait_for, which can swallow a cancellation (3.11)
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                await self.pipeline.wait_drained()

    async def _requeue_at_stop(self, pages: list[FetchedPage], deadline: float) -> None:
        """Record in the crawl log (note ``requeued: not parsed``; the response is kept in
        the WARC file) and put back in the queue the fetched pages a stop from outside
        left unparsed, within ``deadline`` (monotonic seconds). What is not recorded by
        then is still put back, by the release of the leases at shutdown."""
        if not pages:
            return
        self.requeued_at_stop += len(pages)
        log.info("stopping: %d fetched pages not parsed go back to the queue", len(pages))
        now = self.clock()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(max(0.0, deadline - time.monotonic())):
                for page in pages:
                    requeued = dataclasses.replace(
                        page, note="requeued: not parsed", requeue_at=now
                    )
                    await self.pipeline.to_store(requeued)

    async def _shutdown(self) -> None:
        """Release this node's leases and close every part but the frontier."""
        try:
            await self.scheduler.save_waits()
            await self.fw.call(self.frontier.release_own_leases)
            self.leases.clear()
        finally:
            await asyncio.get_running_loop().run_in_executor(None, self.pool.close)
            await self.store.close()
            crashpoints.reached(CrashPoint.STORE_CLOSED)
            self.metrics_file.write(self.statistics())
            self.metrics_file.close()
            if self.exporter is not None:
                self.exporter.close()

    async def _close_frontier(self) -> FrontierCounts:
        try:
            counts: FrontierCounts = await self.fw.call(self.frontier.counts)
            await self.fw.call(self.frontier.close)
        finally:
            self.fw.shutdown()
        return counts

    # -- stages ------------------------------------------------------------------------
    async def _slot(self) -> None:
        while not self.scheduler.stopping:
            await self.parse_stage.wait_room()
            await self.store_stage.wait_room()
            job = await self.scheduler.next_job()
            if job is None:
                return
            if isinstance(job, RobotsJob):
                self._robots_in_flight += 1
                try:
                    await self._robots.run(job)
                finally:
                    self._robots_in_flight -= 1
                continue
            self._page_jobs += 1
            self.pipeline.enter()
            try:
                if not await self._pages.run(job):
                    self.pipeline.leave()  # not sent (a stale lease): nothing to settle
            except BaseException:
                self.pipeline.leave()  # cancelled before the page reached a stage
                raise

    def _admit_documents(
        self, urls: Sequence[str], depth: int, via: str, fp: int | None, handler: str | None
    ) -> list[UrlEntry]:
        return self.admission.admit_documents(urls, depth, via, fp, handler)

    def _pause_for_quota(self, url: str) -> None:
        if not self._paused_for_quota:
            self._paused_for_quota = True
            self.scheduler.pause()
            log.error(
                "quota exhausted (status %d on %s): all fetching paused; send SIGUSR1 "
                "or create %s/resume to continue",
                self.settings.fetch.quota_status,
                url,
                self.paths.root,
            )

    async def _on_skip(self, lease: LeasedUrl, note: str, requeue_at: float | None) -> None:
        if note == ROBOTS_DISALLOWED:
            self.counters.robots_disallowed += 1
        await self.pipeline.to_store(SkippedUrl(lease, note, requeue_at))

    def _quality_gap(self, host: str) -> float:
        return quality_gap(self.quality.quality(host), self.settings.frontier.quality_gap)

    @property
    def paused_for_quota(self) -> bool:
        return self._paused_for_quota

    @property
    def shared_store(self) -> RedisFrontier | None:
        """The shared store of a shared crawl (None: the embedded frontier)."""
        return self._shared

    def use_counts(self, counts: FrontierCounts) -> None:
        """The frontier's counts as just read (the monitor reads them)."""
        self._counts = counts

    def idle(self) -> bool:
        """Nothing in the pipeline, no robots.txt fetch, no lease waiting for its host."""
        return (
            self.pipeline.in_flight == 0
            and self._robots_in_flight == 0
            and self.scheduler.held() == 0
        )

    def check_end(self, mono: float) -> None:
        """Stop when a limit is reached, or when the node is idle and the last counts
        show nothing queued or leased (finished)."""
        s = self.settings.crawl
        if s.max_duration and mono - self._started >= s.max_duration:
            self.request_stop("max-duration")
        elif s.max_bytes and self.counters.bytes >= s.max_bytes:
            self.request_stop("max-bytes")
        if not self.idle() or self._counts is None:
            return
        if self._page_jobs >= self._page_budget:
            self.request_stop("max-pages")
        elif self._counts.queued == 0 and self._counts.leased == 0:
            self.request_stop("finished")

    # -- statistics --------------------------------------------------------------------
    @property
    def last_stats(self) -> NodeStats | None:
        """A statistics reading built now (None before the stages run); the frontier's
        counts in it are the monitor's last read, at most about a second old."""
        return self.statistics() if self._monitoring else None

    def statistics(self) -> NodeStats:
        """The node's statistics now: each component's own ``statistics()`` value, the
        frontier's counts as last read (docs/metrics.md)."""
        fetcher = self._fetcher
        return NodeStats(
            time=time.time(),
            elapsed=time.monotonic() - self._started,
            pipeline=self.pipeline.in_flight,
            fetch=self.counters.statistics(
                fetcher.statistics().in_flight if fetcher is not None else 0
            ),
            stages=(
                self.parse_stage.statistics(),
                self.pool.statistics(),
                self.store_stage.statistics(),
                self.settle_stage.statistics(),
            ),
            admission=self.admission.statistics(),
            frontier=self._counts,
            scheduler=self.scheduler.statistics(),
            store=self.store.statistics(),
            leases=self.leases.statistics(),
            recrawl=self.recrawl.statistics() if self.recrawl is not None else RecrawlStats(),
            software=f"headway/{__version__}",
        )
