"""What travels between the fetch, parse, store and settle stages of one node."""

from __future__ import annotations

from dataclasses import dataclass

from headway.fetch.result import FetchResult
from headway.frontier.store import Completion, LeasedUrl, UrlEntry
from headway.parse.page import ParsedPage
from headway.policy.revisit import Change, RevisitState
from headway.store.warc import WrittenRecord


@dataclass(slots=True)
class PageWork:
    """One leased URL (or one robots.txt fetch, ``lease`` None) on its way through the
    pipeline. Mutable on purpose: the fetch and parse stages fill in their part; how it
    is settled is a separate value (``settle.decide``)."""

    url: str
    depth: int
    lease: LeasedUrl | None
    result: FetchResult | None  # None: settled without a fetch (see ``note``)
    retry_after: float | None = None
    parsed: ParsedPage | None = None
    parse_error: str | None = None
    note: str | None = None
    requeue_at: float | None = None  # for a skip that puts the URL back (robots unavailable)
    store_body: bool = True
    handler: str = "html"  # the content handler that reads the body
    near_dup_of: str | None = None  # an earlier page of the host with nearly the same text
    documents: tuple[UrlEntry, ...] = ()  # sitemaps a robots.txt answer names, admitted
    previous: RevisitState | None = None  # recrawl: the URL's state at its lease
    written: WrittenRecord | None = None  # where the store wrote its record
    revisit: Revisit | None = None  # recrawl: when the URL is due again


@dataclass(frozen=True, slots=True)
class Revisit:
    """A fetched URL's next revisit: what this fetch found, the state to store and the
    time it is due again."""

    change: Change
    state: RevisitState
    due_at: float


@dataclass(frozen=True, slots=True)
class SettleItem:
    completion: Completion | None
    discovered: tuple[UrlEntry, ...]
