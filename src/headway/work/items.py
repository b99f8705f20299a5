"""What travels between the fetch, parse, store and settle stages of one node.

An item of the store stage is one of three kinds, each its own frozen type:

- ``FetchedPage``: a leased URL that was fetched (parsed on the way when a content
  handler reads it);
- ``SkippedUrl``: a leased URL settled without a fetch (robots.txt disallows it, its host
  was dropped, or it waits for its host's robots.txt: ``requeue_at``); the scheduler's
  own decision value (``headway.policy.schedule``), carried on as it is;
- ``RobotsAnswer``: one robots.txt response (no lease: nothing to settle in the
  frontier, but the sitemaps it names are admitted).

Stages do not change an item: the parse stage returns the page with its parse filled in
(``dataclasses.replace``); how an item is settled is a separate value (``settle.decide``).
"""

from __future__ import annotations

from dataclasses import dataclass

from headway.fetch.result import FetchResult
from headway.frontier.store import Completion, LeasedUrl, UrlEntry
from headway.parse.page import ParsedPage
from headway.policy.aiuse import AiSignals
from headway.policy.decisions import SkippedUrl
from headway.policy.revisit import Change, RevisitState, SitemapHint

__all__ = ["FetchedPage", "Pacing", "Revisit", "RobotsAnswer", "SettleItem", "SkippedUrl", "Work"]


@dataclass(frozen=True, slots=True)
class Pacing:
    """The per-host rule a request was sent under, for the crawl log: the host's gap
    (``delay``, seconds between two request starts) and the robots.txt Crawl-delay in
    force (None: none asked)."""

    delay: float
    crawl_delay: float | None = None


@dataclass(frozen=True, slots=True)
class FetchedPage:
    """A leased URL and its response. ``handler``: the content handler that parses the
    body (None: not parsed); after parsing, ``parsed`` or ``parse_error``.
    ``store_body`` False: the exchange is not written to the WARC (a skipped type);
    ``note``: what the crawl log says before settling decides; ``near_dup_of``: an
    earlier page of the host with nearly the same text; ``previous``: the URL's recrawl
    state at its lease (None: first fetch, or recrawl off)."""

    lease: LeasedUrl
    result: FetchResult
    retry_after: float | None = None
    handler: str | None = None
    store_body: bool = True
    note: str | None = None
    parsed: ParsedPage | None = None
    parse_error: str | None = None
    near_dup_of: str | None = None
    previous: RevisitState | None = None  # recrawl: the URL's state at its lease
    hint: SitemapHint | None = None  # recrawl: what a sitemap said before its first fetch
    requeue_at: float | None = None  # put back untried (a stop left it unparsed)
    signals: AiSignals | None = None  # AI-use signals of an HTML capture (with --text)
    pacing: Pacing | None = None  # the per-host rule it was sent under

    @property
    def url(self) -> str:
        return self.lease.url

    @property
    def depth(self) -> int:
        return self.lease.depth


@dataclass(frozen=True, slots=True)
class RobotsAnswer:
    """One robots.txt response (a hop of its redirects, or the last one); ``sitemaps``:
    the sitemaps it names, admitted (the last hop only)."""

    url: str
    result: FetchResult
    note: str
    sitemaps: tuple[UrlEntry, ...] = ()
    pacing: Pacing | None = None  # the per-host rule it was sent under

    @property
    def depth(self) -> int:
        return 0


#: An item of the store stage.
Work = FetchedPage | SkippedUrl | RobotsAnswer


@dataclass(frozen=True, slots=True)
class Revisit:
    """A fetched URL's next revisit: what this fetch found, the state to store and the
    time it is due again."""

    change: Change
    state: RevisitState
    due_at: float


@dataclass(frozen=True, slots=True)
class SettleItem:
    """An item of the settle stage: a completion (None for a robots.txt answer) and the
    links it admits."""

    completion: Completion | None
    discovered: tuple[UrlEntry, ...]
