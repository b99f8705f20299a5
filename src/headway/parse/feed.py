"""RSS and Atom feeds: the ``feed`` content handler (pure).

Contract of ``parse_feed(url, body, ...)``:

- ``body`` is loaded by ``headway.parse.xmldoc.load_xml`` (size capped, entity
  declarations and references refused).
- RSS 2.0 / 0.9x (``<rss><channel><item><link>``), RSS 1.0 (``<rdf:RDF><item><link>``)
  and Atom (``<feed><entry><link href>``, the link whose ``rel`` is ``alternate`` or
  absent) give the entries' links as ``links``, canonicalized against the feed's URL
  (relative Atom links included), deduplicated, in document order. An entry's date
  (RSS ``pubDate``, Atom ``updated`` or ``published``, ``dc:date``) becomes a
  ``LinkHint`` with ``lastmod``.
- More than ``limits.max_entries`` entries: only the first ``max_entries`` are read. A
  refused document or another root element gives no links and ``refused`` set. Never
  raises. An HTML page is refused as ``not-a-feed: an HTML page``.
"""

from __future__ import annotations

import dataclasses
from email.utils import parsedate_to_datetime
from typing import Any

from headway.parse.handler import HEAD_BYTES, Document
from headway.parse.page import ParsedPage
from headway.parse.sitemap import parse_w3c_datetime
from headway.parse.xmldoc import (
    EntryFields,
    XmlLimits,
    entry_links,
    load_xml,
    local_name,
    name_html_refusal,
)
from headway.urls.canonical import DEFAULT_OPTIONS, CanonOptions

__all__ = ["FEED_HANDLER", "FeedHandler", "parse_feed", "parse_feed_date"]

#: Entries read from one feed at most.
MAX_FEED_ENTRIES = 10_000
REFUSED_NOT_FEED = "not-a-feed"
FEED_LIMITS = XmlLimits(max_entries=MAX_FEED_ENTRIES)
_ROOTS = (b"<rss", b"<feed", b"<rdf:RDF", b":RDF")


def parse_feed_date(text: str | None) -> float | None:
    """Epoch seconds of an RFC 822 (RSS) or W3C (Atom) date, or None."""
    if not text:
        return None
    text = text.strip()
    try:
        return parsedate_to_datetime(text).timestamp()
    except (TypeError, ValueError, IndexError):
        return parse_w3c_datetime(text)


def _empty(reason: str | None) -> ParsedPage:
    return ParsedPage((), 0, False, False, None, None, "utf-8", None, 0, "feed", refused=reason)


def _entry_link(entry: Any, atom: bool) -> tuple[str | None, float | None]:
    link: str | None = None
    date: float | None = None
    for child in entry:
        name = local_name(child.tag)
        if name == "link":
            if atom:
                rel = (child.get("rel") or "alternate").strip().lower()
                if rel == "alternate" and link is None:
                    link = (child.get("href") or "").strip() or None
            elif link is None:
                link = str(child.text or "").strip() or None
        elif name in ("pubDate", "updated", "published", "date") and date is None:
            date = parse_feed_date(child.text)
    return link, date


def _entries(root: Any) -> tuple[list[Any], bool] | None:
    kind = local_name(root.tag)
    if kind == "feed":
        return [e for e in root if local_name(e.tag) == "entry"], True
    if kind == "rss":
        channels = [c for c in root if local_name(c.tag) == "channel"]
        return [i for c in channels for i in c if local_name(i.tag) == "item"], False
    if kind == "RDF":
        return [i for i in root if local_name(i.tag) == "item"], False
    return None


def parse_feed(
    url: str,
    body: bytes,
    *,
    limits: XmlLimits = FEED_LIMITS,
    options: CanonOptions = DEFAULT_OPTIONS,
    truncated: str | None = None,
) -> ParsedPage:
    """Entry links of one RSS or Atom feed; see the module contract."""
    loaded = load_xml(body, limits, truncated=truncated)
    if loaded.refused is not None:
        return _empty(loaded.refused)
    found_entries = _entries(loaded.root)
    if found_entries is None:
        return _empty(f"{REFUSED_NOT_FEED}: root element <{local_name(loaded.root.tag)}>")
    entries, atom = found_entries

    def read(entry: Any) -> EntryFields:
        return (*_entry_link(entry, atom), None)

    links, hints = entry_links(entries[: limits.max_entries], read, url, options)
    return ParsedPage(
        links, 0, False, False, None, None, "utf-8", None, len(entries), "feed", hints=hints
    )  # fmt: skip


class FeedHandler:
    """RSS 0.9x/1.0/2.0 and Atom 1.0 feeds."""

    name = "feed"
    media_types = frozenset(
        {
            "application/rss+xml",
            "application/atom+xml",
            "application/rdf+xml",
            "application/xml",
            "text/xml",
        }
    )

    def accepts(self, media_type: str | None, head: bytes) -> bool:
        if media_type in ("application/rss+xml", "application/atom+xml"):
            return True
        return any(root in head[:HEAD_BYTES] for root in _ROOTS)

    def handle(self, doc: Document) -> ParsedPage:
        try:
            limits = dataclasses.replace(FEED_LIMITS, max_bytes=doc.max_bytes)
            page = parse_feed(
                doc.url, doc.body, limits=limits, options=doc.options, truncated=doc.truncated
            )
        except Exception as exc:  # the contract is "never raises"
            return _empty(f"error: {type(exc).__name__}")
        return name_html_refusal(page, doc.media_type, doc.body, REFUSED_NOT_FEED)


FEED_HANDLER = FeedHandler()
