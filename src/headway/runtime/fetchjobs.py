"""Performing the scheduler's jobs in a fetch slot: a page fetch (``PageFetch``) or a
host's robots.txt fetch (``RobotsFetch``).

A page is fetched once (no silent resend); its outcome goes to the scheduler (the host's
limiter, Retry-After) before the page goes on, to the parse stage when a content handler
reads it (only the head of a large HTML page is parsed), else to the store stage.

A robots.txt fetch follows redirects one hop at a time, each hop waiting for its host's
gap and counted against ``MAX_ROBOTS_REDIRECTS``; every response is recorded (a
``RobotsAnswer`` to the store stage), the rules read from the last one go to the
scheduler (which saves them as host state), and the sitemaps they name are admitted
with the answer. A host whose own address the guard refuses is blocked for good.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections.abc import Awaitable, Callable, Sequence

from headway import crashpoints
from headway.crashpoints import CrashPoint
from headway.fetch.client import MAX_ROBOTS_REDIRECTS, HttpClient, robots_redirect_target
from headway.fetch.result import FetchResult
from headway.frontier.store import LeasedUrl, UrlEntry
from headway.parse.handler import HEAD_BYTES
from headway.parse.handlers import HandlerRegistry
from headway.policy.outcome import Outcome
from headway.policy.retry_after import parse_retry_after
from headway.policy.robots import RobotsKind, RobotsRules, blocked_rules, robots_from_response
from headway.runtime.metrics import Counters, Hostile
from headway.runtime.reach import (
    UNREACHABLE_WARNINGS,
    HostReach,
    answered_before,
    name_unknown,
)
from headway.runtime.recrawl import Recrawl
from headway.runtime.scheduler import PageJob, RobotsJob, Scheduler
from headway.runtime.stage import Stage
from headway.settings import Settings
from headway.urls.canonical import CanonOptions, canonicalize, host_key
from headway.work.items import FetchedPage, Pacing, RobotsAnswer, Work

log = logging.getLogger(__name__)


#: Admits documents (sitemaps): (urls, depth, via, parent fingerprint, handler) -> entries.
AdmitDocuments = Callable[[Sequence[str], int, str, int | None, str | None], list[UrlEntry]]
#: The handler of the sitemaps a robots.txt names.
SITEMAP = "sitemap"
#: Documents (sitemaps, feeds) fetched at once by a node: each may hold
#: ``--max-document-bytes`` raw and as many decoded, far more than a page, so their
#: number in flight is bounded on its own (a fetch slot waits for its turn).
DOCUMENT_FETCHES = 2


class RobotsFetch:
    """Runs robots jobs with ``fetcher``; results go to ``scheduler`` and ``to_store``."""

    def __init__(
        self,
        fetcher: HttpClient,
        scheduler: Scheduler,
        settings: Settings,
        counters: Counters,
        *,
        clock: Callable[[], float],
        canon: CanonOptions,
        admit_documents: AdmitDocuments,
        to_store: Callable[[Work], Awaitable[None]],
        reach: HostReach,
    ) -> None:
        self._fetcher = fetcher
        self._scheduler = scheduler
        self._settings = settings
        self._counters = counters
        self._clock = clock
        self._canon = canon
        self._admit_documents = admit_documents
        self._to_store = to_store
        self._reach = reach
        self._unreachable_warned = 0
        self._parsing = asyncio.Semaphore(1)  # one robots.txt parsed off the loop at a time

    async def run(self, job: RobotsJob) -> None:
        """Fetch a host's robots.txt, following redirects one hop at a time: each hop
        waits for its host's gap, counts against ``MAX_ROBOTS_REDIRECTS`` and is
        recorded. A host whose own address is refused by the guard is blocked for good."""
        url = job.url
        hops = 0
        recorded = False  # the last result is already in the store (its next hop never left)
        res, pacing = await self._hop(url, job.host)
        while hops < MAX_ROBOTS_REDIRECTS:
            target = robots_redirect_target(url, res)
            if target is None:
                break
            note = f"robots.txt redirect -> {target}"
            await self._to_store(RobotsAnswer(url, res, note, pacing=pacing))
            hops += 1
            url = target
            if not await self._wait_hop_turn(host_key(url), job.host):
                res = dataclasses.replace(res, status=None, outcome=Outcome.TIMEOUT)
                recorded = True
                break
            res, pacing = await self._hop(url, job.host)
        now = self._clock()
        answered = hops > 0 or res.status is not None
        if answered:
            self._reach.on_answer(job.host)
        if res.outcome is Outcome.BLOCKED_ADDRESS and hops == 0:
            self._reach.on_no_answer(job.host, res, waits="", warn=False)
            rules = blocked_rules(now, self._settings.politeness.robots_ttl)
            self._counters.hostile[Hostile.BLOCKED_HOST] += 1
            self._counters.book.on_host_problem(
                job.host, "blocked-address", f"refused by the address guard: {res.error}", now
            )
            hint = " (--allow-loopback or --allow-private to crawl a local test server)"
            local = any(word in str(res.error) for word in ("loopback", "private"))
            log.warning(
                "host %s refused by the address guard: %s%s",
                job.host,
                res.error,
                hint if local else "",
            )
        else:
            previous = self._scheduler.robots.previous(job.host)
            # parsing costs in proportion to the file (up to 500 KiB: over a second of
            # CPU for one of many rules): off the event loop, one file at a time
            async with self._parsing:
                rules = await asyncio.to_thread(
                    robots_from_response,
                    status=res.status,
                    body=res.body if res.status is not None else None,
                    user_agent=self._settings.identity.user_agent,
                    now=now,
                    ttl=self._settings.politeness.robots_ttl,
                    retry_base=self._settings.politeness.robots_retry_base,
                    previous=previous,
                )
            before = answered_before(previous)
            if not answered:
                self._reach.note_history(job.host, answered_before=before)
            if not answered and not before and name_unknown(res):
                # a name that does not exist is final (a host that answered before keeps
                # its retries: its name may be back after a DNS outage)
                give_up = self._settings.politeness.robots_give_up
                rules = dataclasses.replace(rules, failures=max(rules.failures, give_up))
        self._scheduler.on_robots_done(
            job.host,
            rules,
            now,
            res.outcome,
            res.duration,
            body=res.body if res.status is not None else None,
        )
        if rules.kind is RobotsKind.DISALLOW_ALL:
            self._warn_unreachable(job.host, res, rules, now, answered=answered)
            self._counters.book.on_host_problem(
                job.host,
                "robots-unreachable",
                f"robots.txt unreachable ({res.outcome.value}"
                + (f", HTTP {res.status}" if res.status is not None else "")
                + "): nothing fetched until its retry",
                now,
            )
        if recorded:
            return
        note = (
            "robots.txt unreachable: disallow-all until its retry"
            if rules.kind is RobotsKind.DISALLOW_ALL
            else f"robots.txt {rules.kind.value}"
        )
        sitemaps = tuple(self._sitemaps(job, rules))
        await self._to_store(RobotsAnswer(url, res, note, sitemaps, pacing))

    def _warn_unreachable(
        self, host: str, res: FetchResult, rules: RobotsRules, now: float, *, answered: bool
    ) -> None:
        """A warning for a host whose robots.txt could not be read (no answer or a 5xx):
        its URLs wait, or fail once ``robots_give_up`` tries failed. Without it a crawl
        whose hosts all fail (no DNS, no network) would sit idle showing "errors 0". A
        host that gave no answer at all is counted as an error and named, with why, by
        ``HostReach`` the first time."""
        give_up = self._settings.politeness.robots_give_up
        final = rules.failures >= give_up
        if not answered:
            self._counters.robots_errors += 1
            if final:
                self._reach.on_given_up(host)
            else:
                self._reach.on_no_answer(host, res, waits=self._waits(rules, now))
                return
            # given up at its first try (a name that does not exist): the one warning
            # names it, with why, and says that this is final
            waits = "final: its URLs fail as robots-unreachable, not retried"
            if self._reach.on_no_answer(host, res, waits=waits):
                return
        if rules.failures > 1 and not final:
            return  # named at its first failure; retries only in the crawl log
        if self._unreachable_warned > UNREACHABLE_WARNINGS:
            return
        self._unreachable_warned += 1
        if self._unreachable_warned > UNREACHABLE_WARNINGS:
            log.warning(
                "robots.txt unreachable on more hosts: not named from here on "
                "(the crawl log has a line for each robots.txt request)"
            )
            return
        why = f"HTTP {res.status}" if res.status is not None else str(res.error or res.outcome)
        if final:
            then = f"tried {rules.failures} times, its URLs fail as robots-unreachable"
        else:
            then = self._waits(rules, now)
        log.warning("robots.txt of %s unreachable (%s): %s", host, why, then)

    def _waits(self, rules: RobotsRules, now: float) -> str:
        """What happens to the URLs of a host whose robots.txt failed (not for good)."""
        return (
            f"its URLs wait, robots.txt retried up to "
            f"{self._settings.politeness.robots_give_up - 1} times from "
            f"{max(0.0, rules.expires_at - now):.0f} s on (--robots-retry-base, "
            "--robots-give-up)"
        )

    def _sitemaps(self, job: RobotsJob, rules: RobotsRules) -> list[UrlEntry]:
        """Sitemaps a host's robots.txt lists (and its /sitemap.xml when
        ``sitemap_guess`` asks and it lists none), admitted like links (scope, opt-out,
        budgets; robots.txt is checked before they are fetched)."""
        found = [canonicalize(u, job.url, self._canon) for u in rules.sitemaps()]
        urls = [u for u in found if u is not None]
        if not urls and self._settings.scope.sitemap_guess:
            scheme = job.url.split(":", 1)[0]
            urls = [f"{scheme}://{job.host}/sitemap.xml"]
        if not urls:
            return []
        return self._admit_documents(urls, 1, job.url, None, SITEMAP)

    async def _hop(self, url: str, job_host: str) -> tuple[FetchResult, Pacing]:
        """One request of a robots.txt fetch, counted against the limiter of its host,
        and the rule it was sent under."""
        host = host_key(url)
        lim = self._scheduler.limiter(host)
        pacing = Pacing(lim.gap(), lim.crawl_delay)
        res = await self._fetcher.fetch_robots(url)
        if res.sent_at is not None:
            lim.mark_sent(res.sent_at)
        if host != job_host:  # a hop to another host: started in _wait_hop_turn
            lim.on_finish(self._clock(), res.outcome, latency=res.duration, retry_after=None)
        self._counters.requests += int(res.sent_at is not None)  # it left (guard, DNS)
        self._counters.robots_fetches += 1
        self._counters.bytes += len(res.raw_body)
        return res, pacing

    async def _wait_hop_turn(self, host: str, job_host: str) -> bool:
        """Wait until ``host`` may take the next hop of a robots.txt redirect: the job's
        own host (busy with this fetch) after its gap; another host when its limiter lets
        a request start. False when the crawl stops or the wait passes the total
        timeout (the hop is then not sent)."""
        lim = self._scheduler.limiter(host)
        deadline = time.monotonic() + self._settings.fetch.total_timeout
        while not self._scheduler.stopping:
            now = self._clock()
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


class PageFetch:
    """Runs page jobs with ``fetcher``; outcomes go to ``scheduler``, pages on to
    ``parse_stage`` or ``store_stage``; ``on_quota(url)`` when the quota status answers."""

    def __init__(
        self,
        fetcher: HttpClient,
        scheduler: Scheduler,
        settings: Settings,
        counters: Counters,
        *,
        clock: Callable[[], float],
        handlers: HandlerRegistry,
        parse_stage: Stage[FetchedPage],
        store_stage: Stage[Work],
        on_quota: Callable[[str], None],
        recrawl: Recrawl,
    ) -> None:
        self._fetcher = fetcher
        self._scheduler = scheduler
        self._settings = settings
        self._counters = counters
        self._clock = clock
        self._handlers = handlers
        self._parse_stage = parse_stage
        self._store_stage = store_stage
        self._on_quota = on_quota
        self._recrawl = recrawl
        self._documents = asyncio.Semaphore(DOCUMENT_FETCHES)

    async def run(self, job: PageJob) -> bool:
        """Fetch the job's URL once, feed the outcome to the scheduler, and hand the
        page to the parse stage (a content handler reads it) or the store stage; False
        when the URL was not sent because its lease went stale (``_not_sent``), the page
        then going nowhere.

        A URL admitted as a document (``lease.handler``: a sitemap, a feed) is fetched
        under the document size limit, at most ``DOCUMENT_FETCHES`` at a time, and an
        OK answer is read by that handler whatever its media type says (the handler
        refuses what is not that kind of document). Any other URL is fetched under the
        page limits and read by the handler its media type selects."""
        lease = job.lease
        crashpoints.reached(CrashPoint.LEASED)
        if not self._scheduler.may_send(lease, self._clock()):
            self._not_sent(lease)
            return False
        # a revisit asks with the stored validators
        previous, hint, conditional = self._recrawl.request(lease)
        lim = self._scheduler.limiter(lease.host)
        pacing = Pacing(lim.gap(), lim.crawl_delay)
        if lease.handler is not None:
            async with self._documents:  # each may hold --max-document-bytes twice
                res = await self._fetcher.fetch_document(lease.url, conditional)
        else:
            res = await self._fetcher.fetch(lease.url, conditional)
        crashpoints.reached(CrashPoint.FETCHED)
        now = self._clock()
        if res.sent_at is not None:  # connection set-up delayed the request: gap from here
            self._scheduler.limiter(lease.host).mark_sent(res.sent_at)
        retry_after = None
        if res.status in (429, 503):
            retry_after = parse_retry_after(res.header("Retry-After"), now)
        self._scheduler.on_fetch_done(
            lease.host, now, res.outcome, latency=res.duration, retry_after=retry_after
        )
        if res.outcome is Outcome.BLOCKED_ADDRESS:  # the host's address changed to one refused
            self._scheduler.robots.put(
                lease.host, blocked_rules(now, self._settings.politeness.robots_ttl)
            )
        c = self._counters
        c.fetches += 1
        c.requests += int(res.sent_at is not None)  # not when refused before sending
        c.retries += int(job.retry)
        c.bytes += len(res.raw_body)
        c.outcomes[res.outcome.value] += 1
        c.book.on_page(
            lease.url,
            lease.host,
            res.outcome.value,
            res.status,
            len(res.raw_body),
            res.error,
            now,
        )
        quota = self._settings.fetch.quota_status
        if quota and res.status == quota:
            self._on_quota(lease.url)
        handler = self._handler_for(lease, res) if res.outcome is Outcome.OK else None
        if handler is not None:
            keep = self._settings.fetch.max_parsed
            # parse cost is bounded: only the head of a page is parsed (other formats are
            # bounded by their handlers' own size limits)
            if handler == "html" and len(res.body) > keep:
                res = dataclasses.replace(res, body=res.body[:keep])
                c.hostile[Hostile.PARSE_CUT] += 1
            page = FetchedPage(
                lease,
                res,
                retry_after,
                handler=handler,
                previous=previous,
                hint=hint,
                pacing=pacing,
            )
            await self._parse_stage.put(page)
            return True
        else:
            skip_body = res.outcome is Outcome.OK and self._settings.fetch.non_html == "skip"
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
                pacing=pacing,
            )
            await self._store_stage.put(page)
            return True

    def _not_sent(self, lease: LeasedUrl) -> None:
        """A URL whose lease went stale while the node stalled is not sent: the lease may
        have run out and its URL be with another node, which may be fetching from the
        host now (the per-host rule) or have fetched it already."""
        self._scheduler.on_not_sent(lease, self._clock())
        self._counters.stale_leases += 1
        if self._counters.stale_leases == 1 or self._counters.stale_leases % 1000 == 0:
            log.warning(
                "%d leased URL(s) not sent: their leases ran out while this node stalled "
                "(they return to their queues when the frontier reclaims them)",
                self._counters.stale_leases,
            )

    def _handler_for(self, lease: LeasedUrl, res: FetchResult) -> str | None:
        """The content handler that reads an OK answer: the one the URL was admitted
        as a document for, else the one its media type and first bytes select (None:
        not parsed)."""
        if lease.handler is not None:
            return lease.handler
        handler = self._handlers.select(res.header("Content-Type"), res.body[:HEAD_BYTES])
        return handler.name if handler is not None else None
