"""The node: one crawl process wiring every stage with bounded queues.

    slots (fetch, pull jobs from the scheduler)
      -> parse stage (bounded) -> parser processes
      -> store stage (bounded) -> WARC + CDXJ + crawl log (store thread)
      -> settle stage (bounded) -> frontier.complete() batches (frontier thread)

A slot starts no new fetch while the parse or store stage is full, so the slowest stage
sets the pace. A URL is settled in the frontier only after its WARC record is flushed, so a
``kill -9`` anywhere loses nothing: unsettled URLs are still leased and are put back in
the queue at the next start (fetched at most twice).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
import math
import random
import time
from collections.abc import Callable, Sequence

from headway import __version__, crashpoints
from headway.crashpoints import CrashPoint
from headway.errors import ConfigError
from headway.fetch.client import MAX_ROBOTS_REDIRECTS, Fetcher, robots_redirect_target
from headway.fetch.result import FetchResult, Headers
from headway.frontier.redis import RedisFrontier
from headway.frontier.store import FrontierCounts, LeasedUrl, UrlEntry
from headway.parse.handlers import HEAD_BYTES, load_handlers
from headway.parse.page import ParseTask
from headway.policy.outcome import PUSHBACK, Outcome
from headway.policy.priority import quality_gap
from headway.policy.quality import QualityBook
from headway.policy.retry_after import parse_retry_after
from headway.policy.revisit import RevisitState, SitemapHint
from headway.policy.robots import (
    RobotsRules,
    blocked_rules,
    product_token,
    robots_from_response,
)
from headway.runtime.admission import Admission
from headway.runtime.components import canon_options, retry_params
from headway.runtime.factory import PARSE_BATCH, NodeParts, build_node_parts
from headway.runtime.factory import lease_seconds as lease_seconds_of
from headway.runtime.metrics import Counters
from headway.runtime.scheduler import PageJob, RobotsJob
from headway.runtime.settle import SettleRules, decide
from headway.runtime.stats import NodeStats, RecrawlStats
from headway.runtime.summary import (
    CrawlSummary,
    current_rss_mib,
    peak_rss_mib,
    process_cpu_seconds,
)
from headway.runtime.work import FetchedPage, RobotsAnswer, SettleItem, SkippedUrl, Work
from headway.settings import Settings
from headway.urls.canonical import canonicalize, host_key
from headway.urls.scope import OptOut, Scope, ScopeMode

__all__ = ["CrawlSummary", "Node"]

log = logging.getLogger(__name__)

#: Seconds fetches in flight may still finish after a stop from outside (Ctrl-C,
#: SIGTERM, --max-duration, --max-bytes) before they are cancelled.
INTERRUPT_GRACE = 5.0
#: Seconds after that for what was parsed to be stored and settled; pages still waiting
#: for a parser then go back to the queue. A stop from outside thus ends the pipeline
#: within INTERRUPT_GRACE + DRAIN_GRACE seconds.
DRAIN_GRACE = 10.0
#: Stops that end the crawl by itself, with nothing in flight: drained in full.
_NATURAL_STOPS = frozenset({"finished", "max-pages"})

#: Seconds the store and settle stages wait for a batch to fill (one write and flush, one
#: frontier transaction per batch). Longer lingers (50 ms) bought no measurable CPU per
#: page at the politeness gap (docs/performance.md) and delay what reaches the files.
STORE_LINGER = 0.01
SETTLE_LINGER = 0.005


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
    ) -> None:
        self.clock = clock  # wall-clock seconds for politeness, leases and settling
        self.settings = settings
        self.seeds = list(seeds)
        self.optout = optout
        self.on_stats = on_stats  # called with every statistics reading
        self.on_started = on_started  # called once start-up is over, before the first fetch
        self.canon = canon_options(settings)
        self.quality = QualityBook()
        self.handlers = load_handlers()
        self._use_seeds(self.seeds)
        self.counters = Counters()
        self.token = product_token(settings.identity.user_agent)
        self._stop_reason: str | None = None
        self._stopped = asyncio.Event()
        self._pipeline = 0  # page jobs leased and not yet settled in the frontier
        self._robots_in_flight = 0
        self._page_jobs = 0
        self._started = time.monotonic()
        self._counts: FrontierCounts | None = None
        self._paused_for_quota = False
        self.last_stats: NodeStats | None = None
        self._fetcher: Fetcher | None = None  # while the pipeline runs
        self._shared: RedisFrontier | None = None  # the shared store, in a shared crawl

    def _use_seeds(self, seeds: list[str]) -> None:
        """Scope, admission and settle rules for the crawl's seeds."""
        self.seeds = seeds
        sc = self.settings.scope
        self.scope = Scope.for_seeds(
            seeds,
            mode=ScopeMode(sc.scope),
            include=sc.include,
            exclude=sc.exclude,
            max_depth=sc.max_depth,
            max_url_length=sc.max_url_length,
            optout=self.optout,
        )
        self.admission = Admission(
            self.scope,
            trap_check=sc.trap_check,
            recent_urls=sc.recent_urls,
            current_year=time.gmtime().tm_year,
            quality=self.quality if self.settings.frontier.priority == "quality" else None,
        )
        self._rules = SettleRules(
            admission=self.admission,
            canon=self.canon,
            retry=retry_params(self.settings),
            quota_status=self.settings.fetch.quota_status,
        )

    async def _shared_seeds(self) -> None:
        """A shared crawl's seeds are stored once, by the first ``headway crawl``; every
        node takes them from the store (they define the scope) and offers them to the
        frontier, whose seen set admits each once whoever runs it."""
        shared = self.frontier
        if not isinstance(shared, RedisFrontier):
            return
        self._shared = shared
        crawl = self.settings.distributed.crawl_id
        mine = json.dumps(self.seeds)
        if self.seeds:
            first: bool = await self.fw.call(shared.set_meta_once, "seeds", mine)
            if first:
                log.info("crawl %s seeded with %d seeds", crawl, len(self.seeds))
                return
        stored = await self.fw.call(shared.get_meta, "seeds")
        if stored is None:
            log.warning("crawl %s has no seeds yet: waiting for headway crawl SEEDS", crawl)
            limit = time.monotonic() + self.settings.distributed.store_outage_limit
            while stored is None and not self._stopped.is_set():
                if time.monotonic() > limit:
                    raise ConfigError(
                        "distributed.crawl_id",
                        f"crawl {crawl!r} got no seeds: start it with headway crawl SEEDS",
                    )
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stopped.wait(), 0.5)
                stored = await self.fw.call(shared.get_meta, "seeds")
            if stored is None:
                return  # stopped while waiting
        if self.seeds and stored != mine:
            log.warning("crawl %s was seeded before: its own seeds are used, not these", crawl)
        self._use_seeds(list(json.loads(stored)))

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
        try:
            released = await self.fw.call(self.frontier.release_own_leases)
            await self._shared_seeds()
        except BaseException:
            await self._shutdown()
            await self._close_frontier()
            raise
        if released:
            log.info("resuming: %d URLs in flight at the last stop were put back", released)
        crashpoints.reached(CrashPoint.LEASES_RELEASED)
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
        )

    async def _pipeline_run(self) -> None:
        s = self.settings
        async with asyncio.TaskGroup() as tg:
            slots = [tg.create_task(self._slot()) for _ in range(s.fetch.concurrency)]
            helpers = [tg.create_task(self._parse_dispatch()) for _ in range(s.parsers * 2)]
            helpers.append(tg.create_task(self._store_loop()))
            helpers.append(tg.create_task(self._settle_loop()))
            helpers.append(tg.create_task(self._monitor()))
            helpers.append(tg.create_task(self._extend_leases()))
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
                # pages still waiting for a parser go back to the queue (their leases are
                # released at shutdown): a full parse stage cannot hold the stop
                unparsed = len(await self.parse_stage.drain_nowait())
                self._pipeline -= unparsed
                if unparsed:
                    log.info("stopping: %d fetched pages not parsed go back to the queue", unparsed)
                deadline = time.monotonic() + DRAIN_GRACE
            # drain what was fetched: parse -> store -> settle (the pipeline count covers
            # every page from its lease to its settling, and every robots.txt answer until
            # it is written)
            while self._pipeline > 0 and time.monotonic() < deadline:
                await asyncio.sleep(0.02)
            for t in helpers:
                t.cancel()

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
                    await self._run_robots(job)
                finally:
                    self._robots_in_flight -= 1
                continue
            self._page_jobs += 1
            self._pipeline += 1
            try:
                await self._run_page(job)
            except BaseException:
                self._pipeline -= 1  # cancelled before the page reached a stage
                raise

    async def _run_robots(self, job: RobotsJob) -> None:
        """Fetch a host's robots.txt, following redirects one hop at a time: each hop
        waits for its host's gap, counts against ``MAX_ROBOTS_REDIRECTS`` and is
        recorded. A host whose own address is refused by the guard is blocked for good."""
        url = job.url
        hops = 0
        recorded = False  # the last result is already in the store (its next hop never left)
        res = await self._robots_hop(url, job.host)
        while hops < MAX_ROBOTS_REDIRECTS:
            target = robots_redirect_target(url, res)
            if target is None:
                break
            note = f"robots.txt redirect -> {target}"
            await self._to_store(RobotsAnswer(url, res, note))
            hops += 1
            url = target
            if not await self._wait_hop_turn(host_key(url), job.host):
                res = dataclasses.replace(res, status=None, outcome=Outcome.TIMEOUT)
                recorded = True
                break
            res = await self._robots_hop(url, job.host)
        now = self.clock()
        if res.outcome is Outcome.BLOCKED_ADDRESS and hops == 0:
            rules = blocked_rules(now, self.settings.politeness.robots_ttl)
            self.counters.hostile["blocked-host"] += 1
            log.warning("host %s refused by the address guard: %s", job.host, res.error)
        else:
            rules = robots_from_response(
                status=res.status,
                body=res.body if res.status is not None else None,
                user_agent=self.settings.identity.user_agent,
                now=now,
                ttl=self.settings.politeness.robots_ttl,
                retry_base=self.settings.politeness.robots_retry_base,
                previous=self.scheduler.robots.previous(job.host),
            )
        self.scheduler.on_robots_done(
            job.host,
            rules,
            now,
            res.outcome,
            res.duration,
            body=res.body if res.status is not None else None,
        )
        if recorded:
            return
        note = f"robots.txt {rules.kind.value}"
        sitemaps = tuple(self._robots_sitemaps(job, rules))
        await self._to_store(RobotsAnswer(url, res, note, sitemaps))

    def _robots_sitemaps(self, job: RobotsJob, rules: RobotsRules) -> list[UrlEntry]:
        """Sitemaps a host's robots.txt lists (and its /sitemap.xml when
        ``sitemap_guess`` asks and it lists none), admitted like links (scope, opt-out,
        budgets; robots.txt is checked before they are fetched)."""
        found = [canonicalize(u, job.url, self.canon) for u in rules.sitemaps()]
        urls = [u for u in found if u is not None]
        if not urls and self.settings.scope.sitemap_guess:
            scheme = job.url.split(":", 1)[0]
            urls = [f"{scheme}://{job.host}/sitemap.xml"]
        if not urls:
            return []
        return self.admission.admit_documents(urls, 1, job.url, None)

    async def _robots_hop(self, url: str, job_host: str) -> FetchResult:
        """One request of a robots.txt fetch, counted against the limiter of its host."""
        host = host_key(url)
        res = await self.fetcher.fetch_robots(url)
        lim = self.scheduler.limiter(host)
        if res.sent_at is not None:
            lim.mark_sent(res.sent_at)
        if host != job_host:  # a hop to another host: started in _wait_hop_turn
            lim.on_finish(self.clock(), res.outcome, latency=res.duration, retry_after=None)
        self.counters.requests += int(res.sent_at is not None)  # it left (guard, DNS)
        self.counters.robots_fetches += 1
        self.counters.bytes += len(res.raw_body)
        return res

    async def _wait_hop_turn(self, host: str, job_host: str) -> bool:
        """Wait until ``host`` may take the next hop of a robots.txt redirect: the job's
        own host (busy with this fetch) after its gap; another host when its limiter lets
        a request start. False when the crawl stops or the wait passes the total
        timeout (the hop is then not sent)."""
        lim = self.scheduler.limiter(host)
        deadline = time.monotonic() + self.settings.fetch.total_timeout
        while not self.scheduler.stopping:
            now = self.clock()
            if host == job_host:
                ready = lim.gap_ready_at()
                if now >= ready:
                    lim.mark_sent(now)
                    return True
            else:
                if lim.can_start(now):
                    lim.on_start(now)
                    return True
                ready = lim.ready_at()
            if time.monotonic() >= deadline:
                return False
            await asyncio.sleep(min(max(ready - now, 0.005), 0.25))
        return False

    async def _run_page(self, job: PageJob) -> None:
        lease = job.lease
        crashpoints.reached(CrashPoint.LEASED)
        previous: RevisitState | None = None
        hint: SitemapHint | None = None
        conditional: Headers = ()
        if self.recrawl is not None:  # a revisit asks with the stored validators
            previous, hint, conditional = self.recrawl.request(lease)
        res = await self.fetcher.fetch(lease.url, conditional)
        crashpoints.reached(CrashPoint.FETCHED)
        now = self.clock()
        if res.sent_at is not None:  # connection set-up delayed the request: gap from here
            self.scheduler.limiter(lease.host).mark_sent(res.sent_at)
        retry_after = None
        if res.status in (429, 503):
            retry_after = parse_retry_after(res.header("Retry-After"), now)
        self.scheduler.on_fetch_done(
            lease.host, now, res.outcome, latency=res.duration, retry_after=retry_after
        )
        if res.outcome is Outcome.BLOCKED_ADDRESS:  # the host's address changed to one refused
            self.scheduler.robots.put(
                lease.host, blocked_rules(now, self.settings.politeness.robots_ttl)
            )
        c = self.counters
        c.fetches += 1
        c.requests += int(res.sent_at is not None)  # not when refused before sending
        c.retries += int(job.retry)
        c.bytes += len(res.raw_body)
        c.outcomes[res.outcome.value] += 1
        quota = self.settings.fetch.quota_status
        if quota and res.status == quota:
            self._pause_for_quota(lease.url)
        ctype = res.header("Content-Type")
        handler = None
        if res.outcome is Outcome.OK:
            handler = self.handlers.select(ctype, res.body[:HEAD_BYTES])
        if handler is not None:
            keep = self.settings.fetch.max_parsed
            # parse cost is bounded: only the head of a page is parsed (other formats are
            # bounded by their handlers' own size limits)
            if handler.name == "html" and len(res.body) > keep:
                res = dataclasses.replace(res, body=res.body[:keep])
                c.hostile["parse-cut"] += 1
            page = FetchedPage(
                lease, res, retry_after, handler=handler.name, previous=previous, hint=hint
            )
            await self.parse_stage.put(page)
        else:
            skip_body = res.outcome is Outcome.OK and self.settings.fetch.non_html == "skip"
            if res.body is not res.raw_body:  # the store keeps the body as received
                res = dataclasses.replace(res, body=b"")
            page = FetchedPage(
                lease,
                res,
                retry_after,
                store_body=not skip_body,
                note="non-html-skipped" if skip_body else None,
                previous=previous,
                hint=hint,
            )
            await self.store_stage.put(page)

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
        await self._to_store(SkippedUrl(lease, note, requeue_at))

    async def _to_store(self, work: Work) -> None:
        """Queue an item that did not come through a fetch slot's own count (a skip, a
        robots.txt answer): it holds one unit of the pipeline count until it is done."""
        self._pipeline += 1
        try:
            await self.store_stage.put(work)
        except BaseException:
            self._pipeline -= 1
            raise

    async def _parse_dispatch(self) -> None:
        s = self.settings
        while True:
            # several pages per round trip to a parser process when they are waiting
            batch = await self.parse_stage.get_batch(PARSE_BATCH)
            tasks = []
            for work in batch:
                res = work.result
                tasks.append(
                    ParseTask(
                        url=res.url,
                        body=res.body,
                        content_type=res.header("Content-Type"),
                        x_robots_tag=res.joined_header("X-Robots-Tag"),
                        robots_token=self.token,
                        options=self.canon,
                        max_links=s.scope.max_links,
                        sleep_seconds=s.runtime.parse_sleep,
                        handler=work.handler or "html",  # set for every page parsed
                        truncated=res.truncated,
                    )
                )
            del res
            results = await self.pool.parse_many(tasks)
            del tasks
            hostile = self.counters.hostile
            for work, out in zip(batch, results, strict=True):
                res = work.result
                if res.body is not res.raw_body:
                    # parsed: only the body as received is stored
                    res = dataclasses.replace(res, body=b"")
                if isinstance(out, str):
                    done = dataclasses.replace(work, result=res, parse_error=out)
                else:
                    done = dataclasses.replace(work, result=res, parsed=out)
                    if out.credentials_stripped:
                        hostile["credentials-stripped"] += out.credentials_stripped
                    if out.hrefs_seen > s.scope.max_links:
                        hostile["links-cut"] += 1
                del work, res
                await self.store_stage.put(done)

    async def _store_loop(self) -> None:
        while True:
            # a short linger fills batches: one write + flush per batch, not per page
            batch = await self.store_stage.get_batch(64, linger=STORE_LINGER)
            now = self.clock()
            batch = [self._judge(work) for work in batch]
            settlements = [
                decide(
                    work,
                    now,
                    self._rules,
                    quota_paused=self._paused_for_quota,
                    rand=random.random(),
                )
                for work in batch
            ]
            # the crawl log says what the settlement says; the writer plans revisits
            plans = await self.store.write(batch, [st.note for st in settlements])
            for work, settlement, plan in zip(batch, settlements, plans, strict=True):
                if (
                    settlement.completion is not None
                    and self.recrawl is not None
                    and isinstance(work, FetchedPage)
                ):
                    # a page answered 200 or 304 is due again after its interval
                    settlement = self.recrawl.settle(settlement, work, plan)
                if settlement.completion is None and settlement.discovered:
                    # a robots.txt answer naming sitemaps: they are admitted by settling
                    await self.settle_stage.put(SettleItem(None, settlement.discovered))
                elif settlement.completion is None:
                    self._pipeline -= 1  # a robots.txt answer: done once written
                else:
                    await self.settle_stage.put(
                        SettleItem(settlement.completion, settlement.discovered)
                    )

    def _quality_gap(self, host: str) -> float:
        return quality_gap(self.quality.quality(host), self.settings.frontier.quality_gap)

    def _judge(self, work: Work) -> Work:
        """Near-duplicate check and host quality evidence for one fetched page: the page
        with ``near_dup_of`` filled in (other items as they are)."""
        if not isinstance(work, FetchedPage):
            return work
        res, lease, parsed = work.result, work.lease, work.parsed
        if parsed is not None and parsed.simhash:
            near = self.quality.near_duplicate(lease.host, lease.url, parsed.simhash)
            work = dataclasses.replace(work, near_dup_of=near)
        if res.outcome in (Outcome.REDIRECT, Outcome.NOT_MODIFIED) or res.outcome in PUSHBACK:
            return work  # no content, or pushback (the politeness limiter's business)
        ok_html = parsed is not None and parsed.kind == "html" and res.outcome is Outcome.OK
        error = res.outcome is not Outcome.OK
        self.quality.observe(
            lease.host, ok_html=ok_html, error=error, near_dup=work.near_dup_of is not None
        )
        return work

    async def _settle_loop(self) -> None:
        size = self.settings.runtime.settle_batch
        while True:
            items = await self.settle_stage.get_batch(size, linger=SETTLE_LINGER)
            completions = [i.completion for i in items if i.completion is not None]
            discovered = [e for i in items for e in i.discovered]
            result = await self.fw.call(
                self.frontier.complete, completions, discovered, self.clock()
            )
            crashpoints.reached(CrashPoint.SETTLED)
            self.leases.drop(c.id for c in completions)
            self._pipeline -= len(items)
            if result.added or any(c.revisit_at is not None for c in completions):
                # a revisit settled may be due before the scheduler's current wait ends
                self.scheduler.wake()

    async def _extend_leases(self) -> None:
        """The lease heartbeat: every quarter of a lease, the leases of every URL this
        node still holds (waiting for a slot, a parser, the store or settling) are
        extended by a whole lease, in one frontier call."""
        lease_seconds = lease_seconds_of(self.settings)
        while True:
            await asyncio.sleep(lease_seconds / 4)
            ids = self.leases.ids()
            if ids:
                extended = await self.fw.call(
                    self.frontier.extend_leases, ids, self.clock(), lease_seconds
                )
                self.leases.record_beat(extended)

    async def _monitor(self) -> None:
        s = self.settings
        last_metrics = 0.0
        last_memory_check = 0.0
        last_sweep = time.monotonic()
        lease_seconds = lease_seconds_of(s)
        resume_file = self.paths.root / "resume"
        restarts = 0
        while True:
            await asyncio.sleep(0.25)
            self._counts = await self.fw.call(self.frontier.counts)
            stats = self.statistics()
            self.last_stats = stats
            if self.on_stats is not None:
                self.on_stats(stats)
            if self.exporter is not None:
                self.exporter.update(stats)
            mono = time.monotonic()
            if self._shared is not None and self._shared.server_restarts != restarts:
                # the store may have lost its last second of admissions: offer links
                # and seeds to it again instead of skipping them as recently admitted
                restarts = self._shared.server_restarts
                self.admission.forget_recent()
                entries = self.admission.admit(self.seeds, 0, None)
                await self.fw.call(self.frontier.add, entries, self.clock())
                log.warning("the store restarted: recently admitted links are offered again")
            if self._shared is not None:
                self._shared.publish(stats.to_json())
            if mono - last_metrics >= s.runtime.metrics_interval:
                last_metrics = mono
                self.metrics_file.write(stats)
            if self._paused_for_quota and resume_file.exists():
                resume_file.unlink(missing_ok=True)
                self.resume_quota()
            if mono - last_sweep >= lease_seconds / 4:
                # leases of a node that died (here: an earlier run cut short without its
                # own start-up recovery) come back once they expire
                last_sweep = mono
                reclaimed = await self.fw.call(self.frontier.reclaim_expired, time.time())
                if reclaimed:
                    log.info("%d expired leases returned to the queue", reclaimed)
                    self.scheduler.wake()
            if s.frontier.memory_target_mib and mono - last_memory_check >= 1.0:
                last_memory_check = mono
                self.admission.adjust_for_memory(
                    current_rss_mib() > s.frontier.memory_target_mib, s.scope.max_depth
                )
            self._check_end(mono)

    def _check_end(self, mono: float) -> None:
        s = self.settings.crawl
        if s.max_duration and mono - self._started >= s.max_duration:
            self.request_stop("max-duration")
        elif s.max_bytes and self.counters.bytes >= s.max_bytes:
            self.request_stop("max-bytes")
        idle = self._pipeline == 0 and self._robots_in_flight == 0 and self.scheduler.held() == 0
        if not idle or self._counts is None:
            return
        if self._page_jobs >= self._page_budget:
            self.request_stop("max-pages")
        elif self._counts.queued == 0 and self._counts.leased == 0:
            self.request_stop("finished")

    # -- statistics --------------------------------------------------------------------
    def statistics(self) -> NodeStats:
        """The node's statistics now: each component's own ``statistics()`` value, the
        frontier's counts as last read (docs/metrics.md)."""
        fetcher = self._fetcher
        return NodeStats(
            time=time.time(),
            elapsed=time.monotonic() - self._started,
            pipeline=self._pipeline,
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
