"""Recrawl in the node: one component (``Recrawl``) for conditional requests for
revisits, the next due time of each fetched page, the capacity rule between new URLs and
due revisits, and the counts. Without ``--recrawl`` the node has the do-nothing one
(``NoRecrawl``): no part of the node asks whether recrawl is on.

Contract (the policy itself is ``policy/revisit.py``):

- Only with ``--recrawl`` (``AdaptiveRecrawl``). A page that answered 200 or 304 is
  settled DONE with
  ``revisit_at`` = settle time + its interval and its ``RevisitState`` as the frontier's
  ``validators`` string, in the same transaction as the rest of its settlement; any
  other answer settles as without recrawl (a 4xx, a redirect or a failure ends the URL),
  and so does a document its content handler refused (an XML bomb, over a size limit).
- A revisit sends ``If-None-Match``/``If-Modified-Since`` from the stored state. A 304
  is unchanged (written as a server-not-modified revisit record by the store); a 200 is
  unchanged when its payload digest is the stored one, else changed.
- ``revisits_first()`` applies ``prefer_revisits`` to this node's page fetches.
- ``prepare`` at a node's start (on the frontier's thread): without ``--recrawl`` the
  pages waiting for a revisit are parked (not fetched; due times and validators kept, so
  the crawl ends by itself when the rest is done) and one warning says how many; with
  it, parked pages go back to their queues with their due times.
- ``plan`` runs on the store thread (after the record is written, before the crawl-log
  line); the settlement carries the plan (``headway.work.settle.settle``, the one
  settlement step) and ``settled`` counts it on the event loop.
"""

from __future__ import annotations

import logging
from typing import Protocol

from headway.fetch.result import FetchResult, Headers
from headway.frontier.store import FrontierStore, LeasedUrl
from headway.policy.outcome import Outcome
from headway.policy.revisit import (
    Capture,
    Change,
    RevisitBounds,
    RevisitState,
    SitemapHint,
    after_fetch,
    conditional_headers,
    decode,
    decode_hint,
    prefer_revisits,
)
from headway.runtime.stats import RecrawlStats
from headway.settings import Settings
from headway.store.warc import WrittenRecord, warc_date
from headway.work.items import FetchedPage, Revisit
from headway.work.settle import Settlement

log = logging.getLogger(__name__)

#: Answers after which a page is revisited.
REVISITED = frozenset({Outcome.OK, Outcome.NOT_MODIFIED})


class Recrawl(Protocol):
    """The node's recrawl (see the module contract)."""

    def statistics(self) -> RecrawlStats | None:
        """The counts of this run; None without ``--recrawl``."""
        ...

    def revisits_first(self) -> bool | None:
        """Which kind a lease takes first now; None: no preference."""
        ...

    def request(self, lease: LeasedUrl) -> tuple[RevisitState | None, SitemapHint | None, Headers]:
        """The stored state of a leased URL (or, before its first fetch, the sitemap hint
        it was admitted with) and the conditional headers to send."""
        ...

    def plan(self, work: FetchedPage, rec: WrittenRecord | None, now: float) -> Revisit | None:
        """The next revisit of a written page, or None when it is not revisited (store
        thread)."""
        ...

    def settled(self, settlement: Settlement, work: FetchedPage) -> None:
        """Count the revisit ``work`` was settled with (event loop)."""
        ...

    def prepare(self, frontier: FrontierStore) -> None:
        """Park or unpark the pages waiting for their revisit (frontier thread, at the
        node's start)."""
        ...


def recrawl_for(settings: Settings) -> Recrawl:
    """The node's recrawl: ``AdaptiveRecrawl`` with ``--recrawl``, else ``NoRecrawl``."""
    r = settings.recrawl
    if not r.recrawl:
        return NoRecrawl()
    return AdaptiveRecrawl(RevisitBounds(r.revisit_min, r.revisit_max), r.recrawl_share)


class NoRecrawl:
    """A crawl without ``--recrawl``: no conditional requests, no revisit planned, pages
    waiting for a revisit (an earlier ``--recrawl`` run) parked."""

    def statistics(self) -> None:
        return None

    def revisits_first(self) -> None:
        return None

    def request(self, lease: LeasedUrl) -> tuple[None, None, Headers]:
        return None, None, ()

    def plan(self, work: FetchedPage, rec: WrittenRecord | None, now: float) -> None:
        return None

    def settled(self, settlement: Settlement, work: FetchedPage) -> None:
        return None

    def prepare(self, frontier: FrontierStore) -> None:
        frontier.park_revisits()
        waiting = frontier.counts().revisits_parked
        if waiting:
            log.warning(
                "%d pages wait for their revisit (an earlier --recrawl run); they are left "
                "waiting: run with --recrawl to continue them",
                waiting,
            )


class AdaptiveRecrawl:
    """Revisit decisions of one node with ``--recrawl`` (see the module contract)."""

    def __init__(self, bounds: RevisitBounds, share: float) -> None:
        self.bounds = bounds
        self.share = share
        self._fetches = 0  # page fetches leased by this node
        self._revisit_fetches = 0
        self._changed = self._unchanged = self._not_modified = self._scheduled = 0

    def statistics(self) -> RecrawlStats:
        return RecrawlStats(
            self._revisit_fetches,
            self._changed,
            self._unchanged,
            self._not_modified,
            self._scheduled,
        )

    def revisits_first(self) -> bool:
        """The lease preference now (``policy.revisit.prefer_revisits``)."""
        return prefer_revisits(self._revisit_fetches, self._fetches, self.share)

    def request(self, lease: LeasedUrl) -> tuple[RevisitState | None, SitemapHint | None, Headers]:
        """The stored state of a leased URL (or, before its first fetch, the sitemap hint
        it was admitted with) and the conditional headers to send; counts the fetch (a
        revisit when the URL was fetched before)."""
        self._fetches += 1
        if lease.fetches == 0:
            return None, decode_hint(lease.validators), ()
        self._revisit_fetches += 1
        state = decode(lease.validators)
        return state, None, conditional_headers(state)

    def plan(self, work: FetchedPage, rec: WrittenRecord | None, now: float) -> Revisit | None:
        """The next revisit of a written page, or None when it is not revisited."""
        res = work.result
        if res.outcome not in REVISITED:
            return None
        if work.parsed is not None and work.parsed.refused is not None:
            return None  # a document its handler refused (a bomb, too large) ends here
        not_modified = res.outcome is Outcome.NOT_MODIFIED and work.previous is not None
        digest = rec.payload_digest if rec is not None and work.store_body else None
        state, change = after_fetch(
            work.previous,
            not_modified=not_modified,
            digest=digest,
            etag=res.header("ETag"),
            last_modified=res.header("Last-Modified"),
            capture=_capture_of(res, rec),
            bounds=self.bounds,
            now=now,
            hint=work.hint,
        )
        return Revisit(change, state, now + state.interval)

    def settled(self, settlement: Settlement, work: FetchedPage) -> None:
        plan = settlement.revisit
        if plan is None:
            return
        self._scheduled += 1
        if plan.change is Change.CHANGED:
            self._changed += 1
        elif plan.change is Change.UNCHANGED:
            self._unchanged += 1
            self._not_modified += int(work.result.outcome is Outcome.NOT_MODIFIED)

    def prepare(self, frontier: FrontierStore) -> None:
        back = frontier.unpark_revisits()
        if back:
            log.info("recrawl: %d pages waiting for their revisit are queued again", back)


def _capture_of(res: FetchResult, rec: WrittenRecord | None) -> Capture | None:
    """The capture holding the payload of a 200: this response record, or the earlier
    one an identical-payload revisit record refers to."""
    if rec is None or res.status == 304:
        return None
    if rec.revisit and rec.refers_to is not None:
        ref = rec.refers_to
        return Capture(ref.uri, ref.date, ref.record_id)
    return Capture(res.url, warc_date(res.started_at), rec.record_id)
