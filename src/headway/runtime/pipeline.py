"""The stages after a fetch: parse dispatch, the store loop and the settle loop, and
the count of items between their lease (or robots.txt answer) and their end.

Contract: every item that enters (``enter``: a fetch slot's page, ``to_store``: a skip or
a robots.txt answer) leaves exactly once: when its settlement commits in the frontier,
or once written for a robots.txt answer that admits nothing, or when it is taken back
at a stop (``leave``). ``wait_drained`` returns when nothing is left. A URL is settled
only after its records are written (store loop, then settle loop), and its lease is
given up only once its settlement committed.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import math
import random
import time
from collections import Counter
from collections.abc import Callable
from typing import cast

from headway import crashpoints
from headway.crashpoints import CrashPoint
from headway.parse.page import ParseTask
from headway.parse.text import TextMode
from headway.policy.aiuse import page_signals
from headway.policy.outcome import PUSHBACK, Outcome
from headway.policy.quality import QualityBook
from headway.runtime.factory import PARSE_BATCH, PARSE_BATCH_COST, NodeParts
from headway.runtime.metrics import Hostile
from headway.settings import Settings
from headway.urls.canonical import CanonOptions
from headway.work.items import FetchedPage, SettleItem, Work
from headway.work.settle import SettleRules, end_of, settle

#: Seconds the store and settle stages wait for a batch to fill (one write and flush, one
#: frontier transaction per batch). Longer lingers (50 ms) bought no measurable CPU per
#: page at the politeness gap (docs/performance.md) and delay what reaches the files.
STORE_LINGER = 0.01
SETTLE_LINGER = 0.005


class Pipeline:
    """The stages after a fetch of one node, built on its parts."""

    def __init__(
        self,
        parts: NodeParts,
        settings: Settings,
        *,
        rules: SettleRules,
        canon: CanonOptions,
        token: str,
        quality: QualityBook,
        hostile: Counter[Hostile],
        clock: Callable[[], float],
    ) -> None:
        self._parts = parts
        self._settings = settings
        self.rules = rules
        self._canon = canon
        self._token = token
        self._quality = quality
        self._hostile = hostile
        self._clock = clock
        self._recrawl = parts.recrawl
        self.in_flight = 0  # items entered and not yet left
        self._drained = asyncio.Event()
        self._drained.set()
        self.set_aside: list[FetchedPage] = []  # in a parser when a stop cancelled it

    def use_rules(self, rules: SettleRules) -> None:
        """Settle by ``rules`` from now on (a shared crawl's stored seeds define them)."""
        self.rules = rules

    # -- the count ---------------------------------------------------------------------
    def enter(self) -> None:
        self.in_flight += 1
        self._drained.clear()

    def leave(self, n: int = 1) -> None:
        self.in_flight -= n
        if self.in_flight <= 0:
            self._drained.set()

    async def wait_drained(self) -> None:
        """Return once every item that entered has left."""
        while self.in_flight > 0:
            await self._drained.wait()

    async def wait_drained_until(self, deadline: float) -> None:
        """``wait_drained``, or until ``deadline`` (monotonic seconds; inf)."""
        timeout = None if math.isinf(deadline) else max(0.0, deadline - time.monotonic())
        # asyncio.timeout, not wait_for, which can swallow a cancellation (3.11)
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                await self.wait_drained()

    async def requeue_at_stop(self, pages: list[FetchedPage], deadline: float) -> None:
        """Record in the crawl log (note ``requeued: not parsed``; the response is kept in
        the WARC file) and put back in the queue the fetched pages a stop from outside
        left unparsed, within ``deadline`` (monotonic seconds). What is not recorded by
        then is still put back, by the release of the leases at shutdown."""
        now = self._clock()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(max(0.0, deadline - time.monotonic())):
                for page in pages:
                    requeued = dataclasses.replace(
                        page, note="requeued: not parsed", requeue_at=now
                    )
                    await self.to_store(requeued)

    async def to_store(self, work: Work) -> None:
        """Queue an item that did not come through a fetch slot's own count (a skip, a
        robots.txt answer): it holds one unit of the pipeline count until it is done."""
        self.enter()
        try:
            await self._parts.store_stage.put(work)
        except BaseException:
            self.leave()
            raise

    # -- stages -----------------------------------------------------------------------
    async def parse_dispatch(self) -> None:
        s = self._settings
        # the text output's mode (--text), for HTML pages; None: no text is extracted
        text_mode = cast("TextMode", s.text.text_mode) if s.text.text else None
        while True:
            # several pages per round trip to a parser process when they are waiting;
            # the stage hands them out shared by host and cost (runtime/stage.py)
            batch = await self._parts.parse_stage.get_batch(PARSE_BATCH, max_cost=PARSE_BATCH_COST)
            tasks = []
            for work in batch:
                res = work.result
                tasks.append(
                    ParseTask(
                        url=res.url,
                        body=res.body,
                        content_type=res.header("Content-Type"),
                        x_robots_tag=res.joined_header("X-Robots-Tag"),
                        robots_token=self._token,
                        options=self._canon,
                        max_links=s.scope.max_links,
                        handler=work.handler or "html",  # set for every page parsed
                        truncated=res.truncated,
                        max_document=s.fetch.max_document_bytes,
                        text_mode=text_mode if work.handler in (None, "html") else None,
                        outlinks=s.text.outlinks and work.handler in (None, "html"),
                    )
                )
            del res
            try:
                results = await self._parts.pool.parse_many(tasks)
            except asyncio.CancelledError:
                self.leave(len(batch))  # recorded as requeued by the stop (node)
                self.set_aside.extend(batch)
                raise
            del tasks
            hostile = self._hostile
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
                        hostile[Hostile.CREDENTIALS_STRIPPED] += out.credentials_stripped
                    if out.hrefs_seen > s.scope.max_links:
                        hostile[Hostile.LINKS_CUT] += 1
                del work, res
                await self._parts.store_stage.put(done)

    async def store_loop(self) -> None:
        while True:
            # a short linger fills batches: one write + flush per batch, not per page
            batch = await self._parts.store_stage.get_batch(64, linger=STORE_LINGER)
            now = self._clock()
            batch = [self._judge(work) for work in batch]
            paused = self._parts.scheduler.paused
            endings = [
                end_of(work, now, self.rules, quota_paused=paused, rand=random.random())
                for work in batch
            ]
            # the crawl log says how each item ends; the writer plans revisits (recrawl)
            plans = await self._parts.store.write(batch, [e.note for e in endings])
            for work, ending, plan in zip(batch, endings, plans, strict=True):
                # one settlement: a page answered 200 or 304 is due again after its
                # interval (recrawl), its links are admitted
                settlement = settle(work, ending, self.rules, now=now, revisit=plan)
                if isinstance(work, FetchedPage):
                    self._recrawl.settled(settlement, work)
                if settlement.completion is None and settlement.discovered:
                    # a robots.txt answer naming sitemaps: they are admitted by settling
                    await self._parts.settle_stage.put(SettleItem(None, settlement.discovered))
                elif settlement.completion is None:
                    self.leave()  # a robots.txt answer: done once written
                else:
                    await self._parts.settle_stage.put(
                        SettleItem(settlement.completion, settlement.discovered)
                    )

    def _judge(self, work: Work) -> Work:
        """Near-duplicate check and host quality evidence for one fetched page: the page
        with ``near_dup_of`` filled in (other items as they are)."""
        if not isinstance(work, FetchedPage):
            return work
        res, lease, parsed = work.result, work.lease, work.parsed
        if parsed is not None and parsed.simhash:
            near = self._quality.near_duplicate(lease.host, lease.url, parsed.simhash)
            work = dataclasses.replace(work, near_dup_of=near)
        if self._settings.text.text and parsed is not None and parsed.kind == "html":
            # what the site says about the page's use, recorded and honoured by the text
            # output (fetching and archiving never look at it)
            robots = self._parts.scheduler.robots.previous(lease.host)
            signals = page_signals(
                parsed,
                tdm_header=res.header("tdm-reservation"),
                content_signal=robots.content_signal if robots is not None else None,
            )
            work = dataclasses.replace(work, signals=signals)
        if res.outcome in (Outcome.REDIRECT, Outcome.NOT_MODIFIED) or res.outcome in PUSHBACK:
            return work  # no content, or pushback (the politeness limiter's business)
        ok_html = parsed is not None and parsed.kind == "html" and res.outcome is Outcome.OK
        error = res.outcome is not Outcome.OK
        self._quality.observe(
            lease.host, ok_html=ok_html, error=error, near_dup=work.near_dup_of is not None
        )
        return work

    async def settle_loop(self) -> None:
        size = self._settings.runtime.settle_batch
        while True:
            items = await self._parts.settle_stage.get_batch(size, linger=SETTLE_LINGER)
            completions = [i.completion for i in items if i.completion is not None]
            discovered = [e for i in items for e in i.discovered]
            result = await self._parts.fw.call(
                self._parts.frontier.complete, completions, discovered, self._clock()
            )
            crashpoints.reached(CrashPoint.SETTLED)
            self._parts.leases.drop(c.id for c in completions)
            self.leave(len(items))
            if result.added or any(c.revisit_at is not None for c in completions):
                # a revisit settled may be due before the scheduler's current wait ends
                self._parts.scheduler.wake()
