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
import logging
import math
import time
from collections.abc import Callable, Mapping, Sequence

from headway import crashpoints
from headway.control.applier import ControlApplier
from headway.crashpoints import CrashPoint
from headway.fetch.client import HttpClient
from headway.fetch.clients import open_fetcher
from headway.frontier.store import FrontierCounts, UrlEntry
from headway.parse.handlers import load_handlers
from headway.policy.decisions import EXCLUDED, ROBOTS_DISALLOWED
from headway.policy.priority import quality_gap
from headway.policy.quality import QualityBook
from headway.policy.robots import product_token
from headway.runtime.components import canon_options
from headway.runtime.controls import start_controls
from headway.runtime.factory import NodeParts, build_node_parts
from headway.runtime.factory import lease_seconds as lease_seconds_of
from headway.runtime.fetchjobs import PageFetch, RobotsFetch
from headway.runtime.looplag import LoopLagProbe, short_switch_interval
from headway.runtime.metrics import Counters
from headway.runtime.monitor import Monitor, monitor_for
from headway.runtime.nodeview import HOST_PROBLEMS, crawl_summary, node_statistics, snapshot_parts
from headway.runtime.pipeline import Pipeline
from headway.runtime.reach import HostReach, nobody_answers
from headway.runtime.scheduler import RobotsJob
from headway.runtime.seeding import (
    ADMISSION_META,
    admission_record,
    offer_lost_seeds,
    offer_seeds,
    rules_for_seeds,
    shared_seeds,
)
from headway.runtime.snapshot import Snapshotter
from headway.runtime.stats import NodeStats
from headway.runtime.summary import CrawlSummary, StopReason, process_cpu_seconds
from headway.settings import Settings
from headway.urls.canonical import host_key
from headway.urls.scope import OptOut, SeedScope
from headway.work.items import FetchedPage, SkippedUrl

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
_NATURAL_STOPS = frozenset({StopReason.FINISHED, StopReason.MAX_PAGES, StopReason.UNANSWERED})


class Node:
    """One crawl process. Its parts are built by the factory when it runs and kept in
    one value, ``parts``; the monitor sees the node only through ``monitor.Watched``."""

    parts: NodeParts  # while it runs
    pipeline: Pipeline  # the stages after a fetch, while it runs
    monitor: Monitor  # while its stages run

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
        seed_scopes: Mapping[str, SeedScope] | None = None,
    ) -> None:
        self.clock = clock  # wall-clock seconds for politeness, leases and settling
        self.settings = settings
        self.seeds = list(seeds)
        #: the seeds this command gave (a shared crawl's node crawls the stored ones):
        #: exit 3 is about these only, so ``headway node`` never ends with it
        self._given_seeds = list(seeds)
        #: the seeds file's own scope options of its seeds (``urls.seeds``)
        self._seed_scopes = dict(seed_scopes or {})
        self.optout = optout if optout is not None else OptOut(())  # controls add to it
        self.on_stats = on_stats  # called with a statistics reading every stats_interval s
        self._stats_interval = stats_interval
        self.on_started = on_started  # called once start-up is over, before the first fetch
        self.canon = canon_options(settings)
        self.quality = QualityBook()
        self.handlers = load_handlers()
        self.counters = Counters()
        self.reach = HostReach()  # hosts this run reached, and the unreachable ones
        self._use_seeds(self.seeds)
        self.token = product_token(settings.identity.user_agent)
        self._stop_reason: StopReason | None = None
        self._stopped = asyncio.Event()
        self._robots_in_flight = 0
        self._page_jobs = 0
        self._started = time.monotonic()
        self._counts: FrontierCounts | None = None
        self._paused_for_quota = False
        self._monitoring = False  # the stages are built: statistics can be read
        self.requeued_at_stop = 0  # fetched pages a stop put back unparsed (summary)
        self.seeds_added = 0
        self._page_budget = math.inf
        self._fetcher: HttpClient | None = None  # while the pipeline runs
        self.loop_lag = LoopLagProbe()  # runs with the pipeline's tasks
        self._born = time.time()  # a stop control recorded before this is not for this run
        self.controls: ControlApplier | None = None

    def _use_seeds(self, seeds: list[str]) -> None:
        """Scope, admission and settle rules for the crawl's seeds."""
        self.seeds = seeds
        self.counters.book.seeds.use((url, host_key(url)) for url in seeds)
        quality = self.quality if self.settings.frontier.priority == "quality" else None
        self.scope, self.admission, self._rules = rules_for_seeds(
            seeds,
            self.settings,
            optout=self.optout,
            canon=self.canon,
            quality=quality,
            seed_scopes=self._seed_scopes,
        )

    async def _shared_seeds(self) -> None:
        """In a shared crawl, use the crawl's stored seeds (``seeding.py``)."""
        shared = self.parts.frontier.shared()
        if shared is None:
            return
        seeds = await shared_seeds(
            shared,
            self.parts.fw,
            self.settings.distributed.crawl_id or "",
            self.seeds,
            wait_limit=self.settings.distributed.store_outage_limit,
            stopped=self._stopped,
        )
        if seeds is not None and seeds != self.seeds:
            self._use_seeds(seeds)

    # -- control -----------------------------------------------------------------------
    def request_stop(self, reason: StopReason) -> None:
        if self._stop_reason is None:
            self._stop_reason = reason
            log.info("stopping: %s", reason)
        self._stopped.set()

    def resume_quota(self) -> None:
        """Operator resume after a quota pause (SIGUSR1 or a 'resume' file)."""
        if self._paused_for_quota:
            self._paused_for_quota = False
            self.parts.scheduler.resume("quota")
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
            inlinks=self.quality.inlink_hosts,
            quality=self.quality.quality if quality else None,
        )
        try:
            with short_switch_interval():  # threads yield the GIL to the loop sooner
                return await self._run(parts)
        finally:
            parts.crawldir.close()

    async def _run(self, parts: NodeParts) -> CrawlSummary:
        resumed = parts.crawldir.resumed
        self.parts = parts
        fw, frontier = parts.fw, parts.frontier
        self.pipeline = Pipeline(
            parts,
            self.settings,
            rules=self._rules,
            canon=self.canon,
            token=self.token,
            quality=self.quality,
            hostile=self.counters.hostile,
            clock=self.clock,
        )
        self.console = Snapshotter(
            snapshot_parts(parts, self.settings, self.counters.book, self.statistics)
        )
        self._monitoring = True
        if parts.exporter is not None:
            # each scrape builds its own reading, on the event loop
            parts.exporter.read_from(asyncio.get_running_loop(), self.statistics)
        try:
            released = await fw.call(frontier.release_own_leases)
            await self._shared_seeds()
            self.pipeline.use_rules(self._rules)  # the crawl's own seeds define them
            record = admission_record(self.settings)  # for headway why
            await fw.call(frontier.set_meta, ADMISSION_META, record)
        except BaseException:
            await self._shutdown()
            await self._close_frontier()
            raise
        if released:
            log.info("resuming: %d URLs in flight at the last stop were put back", released)
        crashpoints.reached(CrashPoint.LEASES_RELEASED)
        await fw.call(parts.recrawl.prepare, frontier)
        self.seeds_added = await offer_seeds(self.seeds, self.admission, frontier, fw, self.clock())
        self._page_budget = parts.page_budget
        self._started = time.monotonic()
        cpu0 = process_cpu_seconds()
        failed = True
        try:
            self.controls = await start_controls(
                parts, self.settings, self.admission, self.optout, self.request_stop, self._born
            )
            fetcher = open_fetcher(parts.fetch_config)  # loads the TLS authorities
            log.info("HTTP client: %s", fetcher.describe())
            if self.on_started is not None:
                self.on_started()
            self._started = time.monotonic()
            cpu0 = process_cpu_seconds()
            async with fetcher:
                self._fetcher = fetcher
                self._pages = PageFetch(
                    fetcher,
                    parts.scheduler,
                    self.settings,
                    self.counters,
                    clock=self.clock,
                    handlers=self.handlers,
                    parse_stage=parts.parse_stage,
                    store_stage=parts.store_stage,
                    on_quota=self._pause_for_quota,
                    recrawl=parts.recrawl,
                )
                self._robots = RobotsFetch(
                    fetcher,
                    parts.scheduler,
                    self.settings,
                    self.counters,
                    clock=self.clock,
                    canon=self.canon,
                    admit_documents=self._admit_documents,
                    to_store=self.pipeline.to_store,
                    reach=self.reach,
                )
                await self._pipeline_run()
            failed = False
        finally:
            await self._shutdown()
            if failed:  # the error goes on; the frontier is closed (thread, Bloom, Redis)
                with contextlib.suppress(Exception):
                    await self._close_frontier()
        counts = await self._close_frontier()
        return crawl_summary(
            parts,
            stopped_by=self._stop_reason or StopReason.FINISHED,
            resumed=resumed,
            seconds=time.monotonic() - self._started,
            cpu_seconds=process_cpu_seconds() - cpu0,
            counters=self.counters,
            counts=counts,
            admission=self.admission,
            reach=self.reach,
            given_hosts=(host_key(u) for u in self._given_seeds),
            controls=self.controls,
            seeds_added=self.seeds_added,
            requeued_at_stop=self.requeued_at_stop,
        )

    async def _pipeline_run(self) -> None:
        s, parts = self.settings, self.parts
        async with asyncio.TaskGroup() as tg:
            slots = [tg.create_task(self._slot()) for _ in range(s.fetch.concurrency)]
            parsing = [tg.create_task(self.pipeline.parse_dispatch()) for _ in range(s.parsers * 2)]
            helpers = list(parsing)
            helpers.append(tg.create_task(self.loop_lag.run()))
            helpers.append(tg.create_task(self.pipeline.store_loop()))
            helpers.append(tg.create_task(self.pipeline.settle_loop()))
            self.monitor = monitor_for(
                parts, self, s, on_stats=self.on_stats, stats_interval=self._stats_interval
            )
            helpers.append(tg.create_task(self.monitor.run()))
            helpers.append(tg.create_task(self.console.run()))
            helpers.append(
                tg.create_task(
                    parts.leases.keep_alive(
                        parts.fw, parts.frontier, lease_seconds_of(s), clock=self.clock
                    )
                )
            )
            helpers.append(tg.create_task(parts.scheduler.run()))
            assert self.controls is not None  # started by _run
            helpers.append(tg.create_task(self.controls.run()))
            await self._stopped.wait()
            parts.scheduler.stop()
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
                await self.pipeline.wait_drained_until(time.monotonic() + PARSE_GRACE)
                unparsed = await parts.parse_stage.drain_nowait()
                self.pipeline.leave(len(unparsed))
                await self._requeue_at_stop(unparsed, deadline)
            # drain what was fetched: parse -> store -> settle (the pipeline count covers
            # every page from its lease to its settling, and every robots.txt answer until
            # it is written)
            await self.pipeline.wait_drained_until(deadline)
            if self.pipeline.in_flight > 0 and math.isfinite(deadline):
                # pages still inside a parser when the grace ends: recorded as requeued
                for t in parsing:
                    t.cancel()
                await asyncio.gather(*parsing, return_exceptions=True)
                deadline = time.monotonic() + RECORD_GRACE
                aside, self.pipeline.set_aside = self.pipeline.set_aside, []
                await self._requeue_at_stop(aside, deadline)
                await self.pipeline.wait_drained_until(deadline)
            for t in helpers:
                t.cancel()

    async def _requeue_at_stop(self, pages: list[FetchedPage], deadline: float) -> None:
        """Count, and put back in the queue (recorded), pages a stop left unparsed."""
        if not pages:
            return
        self.requeued_at_stop += len(pages)
        log.info("stopping: %d fetched pages not parsed go back to the queue", len(pages))
        await self.pipeline.requeue_at_stop(pages, deadline)

    async def _shutdown(self) -> None:
        """Release this node's leases and close every part but the frontier."""
        parts = self.parts
        try:
            await parts.scheduler.save_waits()
            await parts.fw.call(parts.frontier.release_own_leases)
            parts.leases.clear()
        finally:
            await asyncio.get_running_loop().run_in_executor(None, parts.pool.close)
            await parts.store.close()
            crashpoints.reached(CrashPoint.STORE_CLOSED)
            parts.metrics_file.write(self.statistics())
            parts.metrics_file.close()
            await self.console.final(self._stop_reason or StopReason.FINISHED)
            if parts.exporter is not None:
                parts.exporter.close()

    async def _close_frontier(self) -> FrontierCounts:
        if self.controls is not None:
            self.controls.close()
        fw = self.parts.fw
        try:
            counts: FrontierCounts = await fw.call(self.parts.frontier.counts)
            await fw.call(self.parts.frontier.close)
        finally:
            fw.shutdown()
        return counts

    # -- stages ------------------------------------------------------------------------
    async def _slot(self) -> None:
        parts = self.parts
        scheduler = parts.scheduler
        while not scheduler.stopping:
            await parts.parse_stage.wait_room()
            await parts.store_stage.wait_room()
            job = await scheduler.next_job()
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
            self.parts.scheduler.pause("quota")
            log.error(
                "quota exhausted (status %d on %s): all fetching paused; send SIGUSR1 "
                "or create %s/resume to continue",
                self.settings.fetch.quota_status,
                url,
                self.parts.paths.root,
            )

    async def _on_skip(self, skipped: SkippedUrl) -> None:
        if skipped.note == ROBOTS_DISALLOWED:
            self.counters.robots_disallowed += 1
        elif skipped.note == EXCLUDED:
            self.counters.excluded_dropped += 1
        elif skipped.note in HOST_PROBLEMS:
            self.counters.book.on_host_problem(
                skipped.lease.host, skipped.note, HOST_PROBLEMS[skipped.note], self.clock()
            )
        await self.pipeline.to_store(skipped)

    def _quality_gap(self, host: str) -> float:
        return quality_gap(self.quality.quality(host), self.settings.frontier.quality_gap)

    @property
    def paused_for_quota(self) -> bool:
        return self._paused_for_quota

    # -- what the monitor sees (monitor.Watched) ---------------------------------------
    def use_counts(self, counts: FrontierCounts) -> None:
        """The frontier's counts as just read (the monitor reads them)."""
        self._counts = counts

    def idle(self) -> bool:
        """Nothing in the pipeline, no robots.txt fetch, no lease waiting for its host."""
        return (
            self.pipeline.in_flight == 0
            and self._robots_in_flight == 0
            and self.parts.scheduler.held() == 0
        )

    def check_end(self, mono: float) -> None:
        """Stop when a limit is reached, or when the node is idle and the last counts
        show nothing queued or leased (finished)."""
        s = self.settings.crawl
        if s.max_duration and mono - self._started >= s.max_duration:
            self.request_stop(StopReason.MAX_DURATION)
        elif s.max_bytes and self.counters.bytes >= s.max_bytes:
            self.request_stop(StopReason.MAX_BYTES)
        if not self.idle() or self._counts is None:
            return
        if self._page_jobs >= self._page_budget:
            self.request_stop(StopReason.MAX_PAGES)
        elif self._counts.queued == 0 and self._counts.leased == 0:
            self.request_stop(StopReason.FINISHED)
        elif nobody_answers(
            wait=s.unanswered_wait,
            running_for=mono - self._started,
            reach=self.reach,
            fetched=self._counts.fetched,
            queued_hosts=self._counts.hosts_queued,
            leased=self._counts.leased,
        ):
            hosts = self.reach.unreachable()
            named = "; ".join(f"{u.host}: {u.reason}" for u in hosts[:3])
            more = f" and {len(hosts) - 3} more" if len(hosts) > 3 else ""
            log.warning(
                "no host answered in %.0f s and only their URLs are queued (%s%s): the "
                "crawl ends; the same command tries them again (--unanswered-wait)",
                mono - self._started,
                named,
                more,
            )
            self.request_stop(StopReason.UNANSWERED)

    async def offer_seeds_again(self) -> None:
        """After a restart of the shared store, which may have lost its latest
        admissions: forget the recently admitted links (so they are offered again when
        found) and offer again the seeds it may have lost (``seeding.offer_lost_seeds``)."""
        self.admission.forget_recent()
        parts = self.parts
        await offer_lost_seeds(self.seeds, self.admission, parts.frontier, parts.fw, self.clock())

    def shed_for_memory(self, over_target: bool) -> int | None:
        self.admission.adjust_for_memory(over_target, self.settings.scope.max_depth)
        return self.admission.shed_depth

    # -- statistics --------------------------------------------------------------------
    @property
    def last_stats(self) -> NodeStats | None:
        """A statistics reading built now (None before the stages run); the frontier's
        counts in it are the monitor's last read, at most about a second old."""
        return self.statistics() if self._monitoring else None

    def statistics(self) -> NodeStats:
        """The node's statistics now (``nodeview.node_statistics``, docs/metrics.md)."""
        return node_statistics(
            self.parts,
            started=self._started,
            in_flight=self.pipeline.in_flight,
            counters=self.counters,
            fetcher=self._fetcher,
            admission=self.admission,
            frontier=self._counts,
            loop_lag=self.loop_lag,
            controls=self.controls,
        )
