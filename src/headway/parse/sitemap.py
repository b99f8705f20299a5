"""Sitemaps (sitemaps.org protocol 0.9): the ``sitemap`` content handler (pure).

Contract of ``parse_sitemap(url, body, ...)``:

- ``body`` is loaded by ``headway.parse.xmldoc.load_xml`` (gzip allowed, 50 MB
  uncompressed at most, entity declarations and references refused).
- A ``<urlset>`` gives its ``<url><loc>`` values as ``links`` and, for entries with a
  ``<lastmod>`` or ``<changefreq>``, ``LinkHint`` values in ``hints``. A
  ``<sitemapindex>`` gives its ``<sitemap><loc>`` values as ``documents`` (child
  sitemaps, to be read with this handler again; the caller caps the nesting).
- Locations are canonicalized against the sitemap's URL; ones that do not canonicalize
  are dropped. Duplicates count once.
- More than ``limits.max_entries`` entries (50,000 by the protocol), another root
  element, or a document refused by ``load_xml`` gives no links and ``refused`` set to
  the reason. Never raises. The handler reads whatever media type the body came with
  (a URL admitted as a sitemap is read by it, see ``headway.parse.handlers``); an HTML
  page is refused as ``not-a-sitemap: an HTML page``.
- A body that is not markup (its first character, after a byte-order mark and white
  space, is not ``<``) is a text sitemap (the protocol's other format): one absolute
  ``http``/``https`` URL a line, UTF-8, the same limits. Other lines are skipped; a body
  without a URL line is refused as ``not-a-sitemap``.
- ``parse_w3c_datetime`` reads a W3C datetime (``YYYY``, ``YYYY-MM``, ``YYYY-MM-DD``,
  or a full date and time with a zone) to epoch seconds (UTC when no zone); None when it
  is not one.
"""

from __future__ import annotations

import dataclasses
import re
from datetime import UTC, datetime
from typing import Any

from headway.parse.handler import HEAD_BYTES, Document
from headway.parse.page import ParsedPage
from headway.parse.xmldoc import (
    EntryFields,
    XmlLimits,
    entry_links,
    gunzip_head,
    load_xml,
    local_name,
    name_html_refusal,
    unpack,
)
from headway.urls.canonical import DEFAULT_OPTIONS, CanonOptions

__all__ = [
    "CHANGEFREQS",
    "SITEMAP_HANDLER",
    "SitemapHandler",
    "parse_sitemap",
    "parse_w3c_datetime",
]

CHANGEFREQS = frozenset({"always", "hourly", "daily", "weekly", "monthly", "yearly", "never"})
REFUSED_TOO_MANY = "too-many-entries"
REFUSED_NOT_SITEMAP = "not-a-sitemap"
#: The protocol's limits: 50,000 URLs and 50 MB uncompressed per file.
SITEMAP_LIMITS = XmlLimits()

_YEAR_MONTH = re.compile(r"(\d{4})(?:-(\d{2}))?")
_ROOTS = (b"<urlset", b"<sitemapindex", b":urlset", b":sitemapindex")


def parse_w3c_datetime(text: str | None) -> float | None:
    """Epoch seconds of a W3C datetime (see the module contract), or None."""
    if not text:
        return None
    text = text.strip()
    m = _YEAR_MONTH.fullmatch(text)
    try:
        if m:
            return datetime(int(m[1]), int(m[2] or 1), 1, tzinfo=UTC).timestamp()
        value = datetime.fromisoformat(text)
    except ValueError:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.timestamp()


def _empty(reason: str | None) -> ParsedPage:
    return ParsedPage((), 0, False, False, None, None, "utf-8", None, 0, "sitemap", refused=reason)


def _child_text(entry: Any, name: str) -> str | None:
    for child in entry:
        if local_name(child.tag) == name:
            return str(child.text or "").strip() or None
    return None


def _read_entry(entry: Any) -> EntryFields:
    """``<loc>``, ``<lastmod>`` and a known ``<changefreq>`` of one sitemap entry."""
    freq = (_child_text(entry, "changefreq") or "").lower() or None
    lastmod = parse_w3c_datetime(_child_text(entry, "lastmod"))
    return _child_text(entry, "loc"), lastmod, freq if freq in CHANGEFREQS else None


def parse_sitemap(
    url: str,
    body: bytes,
    *,
    limits: XmlLimits = SITEMAP_LIMITS,
    options: CanonOptions = DEFAULT_OPTIONS,
    truncated: str | None = None,
) -> ParsedPage:
    """Links (urlset) or child sitemaps (index) of one sitemap; see the module contract."""
    text, refused = unpack(body, limits, truncated=truncated)
    if refused is None and _is_text(text):
        return _text_sitemap(url, text, limits, options)
    loaded = load_xml(body, limits, truncated=truncated)
    if loaded.refused is not None:
        return _empty(loaded.refused)
    root = loaded.root
    kind = local_name(root.tag)
    if kind not in ("urlset", "sitemapindex"):
        return _empty(f"{REFUSED_NOT_SITEMAP}: root element <{kind}>")
    entry_name = "url" if kind == "urlset" else "sitemap"
    entries = [e for e in root if local_name(e.tag) == entry_name]
    if len(entries) > limits.max_entries:
        return _empty(f"{REFUSED_TOO_MANY}: {len(entries)} entries, at most {limits.max_entries}")
    urls, hints = entry_links(entries, _read_entry, url, options)
    if kind == "sitemapindex":
        return ParsedPage(
            (), 0, False, False, None, None, "utf-8", None, len(entries), "sitemap",
            documents=urls, hints=hints, documents_handler="sitemap",
        )  # fmt: skip
    return ParsedPage(
        urls, 0, False, False, None, None, "utf-8", None, len(entries), "sitemap",
        hints=hints,
    )  # fmt: skip


def _is_text(body: bytes) -> bool:
    """Not markup: a body whose first character is not ``<`` (an empty body is left to
    the XML reader, which refuses it as empty)."""
    head = body[:4096].lstrip(b"\xef\xbb\xbf \t\r\n")
    return bool(head) and not head.startswith(b"<")


def _text_sitemap(url: str, body: bytes, limits: XmlLimits, options: CanonOptions) -> ParsedPage:
    """A text sitemap: the absolute http(s) URLs of its lines (see the module contract)."""
    lines = [
        line.strip()
        for line in body.decode("utf-8-sig", "replace").splitlines()
        if line.strip()[:8].lower().startswith(("http://", "https://"))
    ]
    if not lines:
        return _empty(f"{REFUSED_NOT_SITEMAP}: text without a URL line")
    if len(lines) > limits.max_entries:
        return _empty(f"{REFUSED_TOO_MANY}: {len(lines)} entries, at most {limits.max_entries}")
    urls, _ = entry_links(lines, lambda line: (line, None, None), url, options)
    return ParsedPage(
        urls, 0, False, False, None, None, "utf-8", None, len(lines), "sitemap"
    )  # fmt: skip


class SitemapHandler:
    """Sitemaps and sitemap indexes, plain or gzipped."""

    name = "sitemap"
    media_types = frozenset(
        {
            "application/xml",
            "text/xml",
            "application/x-gzip",
            "application/gzip",
            "application/octet-stream",
        }
    )

    def accepts(self, media_type: str | None, head: bytes) -> bool:
        text = gunzip_head(head, HEAD_BYTES)
        return any(root in text for root in _ROOTS)

    def handle(self, doc: Document) -> ParsedPage:
        try:
            limits = dataclasses.replace(SITEMAP_LIMITS, max_bytes=doc.max_bytes)
            page = parse_sitemap(
                doc.url, doc.body, limits=limits, options=doc.options, truncated=doc.truncated
            )
        except Exception as exc:  # the contract is "never raises"
            return _empty(f"error: {type(exc).__name__}")
        return name_html_refusal(page, doc.media_type, doc.body, REFUSED_NOT_SITEMAP)


SITEMAP_HANDLER = SitemapHandler()
