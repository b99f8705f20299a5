"""Link extraction and page-level directives of one HTML page (pure; runs in workers).

Contract of ``parse_page(url, body, ...)``:

- Decodes ``body`` (see ``headway.parse.charset``) and parses it with lexbor the way a
  browser with scripting enabled builds its tree: markup inside ``<script>``, comments and
  ``<noscript>`` is not markup, so a ``<base>``, meta robots or meta refresh hidden there
  has no effect. Links written inside ``<noscript>`` (``<a>``/``<area>`` only) are still
  collected, in place, since a crawler without JavaScript is exactly who they are for.
- ``links``: the canonical (``headway.urls.canonical``) absolute http(s) URLs of every
  ``<a href>`` and ``<area href>`` and of the meta refresh target, resolved against the
  effective base, deduplicated, in document order, at most ``max_links``; empty when the
  page says nofollow (meta robots or ``X-Robots-Tag``). Hrefs that do not canonicalize
  (``javascript:``, ``mailto:``, invalid) are dropped; so are hrefs longer than
  ``MAX_HREF_CHARS``. At most ``HREF_SCAN_FACTOR * max_links`` hrefs are examined.
- ``nofollow_skipped``: distinct canonical URLs not followed because every link to them
  has ``rel=nofollow``, or, under page-level nofollow, every URL that would have been.
- ``meta_refresh``: the canonical refresh target, reported even under page-level nofollow
  (it is then counted in ``nofollow_skipped`` rather than listed in ``links``).
- ``hrefs_seen``: ``<a>``/``<area>`` href attributes seen, before any filtering.
- ``simhash``: the 64-bit SimHash (``headway.parse.simhash``) of the visible text.
- ``documents``: feeds the page announces (``<link rel=alternate>`` of an RSS, Atom or
  RDF type), canonical, at most ``MAX_FEEDS``; empty under page-level nofollow.
- ``credentials_stripped``: followed hrefs that carried ``user:password@`` (removed by
  canonicalization; never fetched with them).
- ``text``, ``languages``, ``text_error``: only when a ``text_mode`` is given (the text
  output, ``--text``): the page's text in that mode (``headway.parse.text``, on the
  decoded document, its depth checked on the tree parsed here), the ISO 639-3 codes of
  its language (``headway.parse.language``), and why there is no text when extraction
  was refused or failed (links and directives are reported all the same).
- ``outlinks``: only when asked (the outlinks output, ``--outlinks``): every ``<a>`` and
  ``<area>`` of the tree as written (href, canonical URL, anchor text, ``rel``; nofollow
  and duplicates kept, at most ``max_links``), the canonical link, the ``hreflang``
  alternates and the meta robots values (``Outlinks``).
- Never raises: bad bytes, bad markup or an empty body give a (possibly empty) result;
  header directives and the charset are reported even then.

``parse_task(ParseTask)`` is the same call packed as one picklable value, for a process
pool.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from selectolax.lexbor import LexborHTMLParser, LexborNode

from headway.errors import HeadwayError
from headway.parse.charset import decode_body, detect_charset
from headway.parse.directives import (
    RobotsDirectives,
    refresh_url,
    robots_content,
)
from headway.parse.directives import x_robots_tag as x_robots_tag_directives
from headway.parse.language import identify
from headway.parse.simhash import simhash, visible_text
from headway.parse.text import TextMode, extract_text
from headway.urls.canonical import (
    DEFAULT_OPTIONS,
    CanonOptions,
    canonicalize,
    canonicalize_links,
)

__all__ = [
    "Outlink",
    "Outlinks",
    "ParseTask",
    "ParsedPage",
    "is_html",
    "parse_page",
    "parse_task",
    "parse_tree",
]

logger = logging.getLogger(__name__)

#: Longer hrefs are dropped: no crawler or server handles such URLs usefully.
MAX_HREF_CHARS = 8192
#: Raw hrefs examined per page, as a multiple of ``max_links`` (bounds CPU per page).
HREF_SCAN_FACTOR = 4
#: Titles are cut to this many characters.
MAX_TITLE_CHARS = 1024
#: Anchor texts are cut to this many characters (outlinks output).
MAX_ANCHOR_CHARS = 256
#: hreflang alternates and meta robots values kept per page (outlinks output).
MAX_ALTERNATES = 64
#: How much of a body ``is_html`` sniffs when there is no Content-Type.
SNIFF_BYTES = 1024

_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
_SELECTOR = "a[href], area[href], base[href], link[href], meta[content], title, noscript"
#: ``<link rel=alternate type=...>`` types read as feeds.
FEED_TYPES = frozenset({"application/rss+xml", "application/atom+xml", "application/rdf+xml"})
#: Feeds taken from one page at most.
MAX_FEEDS = 8
_LINK_SELECTOR = "a[href], area[href]"


@dataclass(frozen=True, slots=True)
class LinkHint:
    """What a sitemap or feed says about one of its links: ``lastmod`` (epoch seconds)
    and ``changefreq`` (a sitemap ``changefreq`` value), either possibly None."""

    url: str
    lastmod: float | None = None
    changefreq: str | None = None


@dataclass(frozen=True, slots=True)
class Outlink:
    """One ``<a href>`` or ``<area href>`` as written: the href, its absolute canonical
    URL (None when it does not canonicalize), its anchor text (white space collapsed, at
    most ``MAX_ANCHOR_CHARS``) and its ``rel``."""

    href: str
    url: str | None
    text: str
    rel: str | None


@dataclass(frozen=True, slots=True)
class Outlinks:
    """What Common Crawl's WAT files carry of a page for web-graph work: every link (at
    most ``max_links``, in document order, duplicates kept), ``<link rel=canonical>``,
    the ``hreflang`` alternates (language, canonical URL) and the meta robots values."""

    links: tuple[Outlink, ...]
    canonical: str | None
    hreflang: tuple[tuple[str, str], ...]
    meta_robots: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ParsedPage:
    """What the crawl needs from one document (see the module contract); every content
    handler returns one. The fields after ``hrefs_seen`` have defaults so that handlers
    of other formats fill in only what they know:

    - ``kind``: the name of the handler that produced it (``html``, ``sitemap``, ...).
    - ``simhash``: 64-bit SimHash of the visible text (HTML), None when there was none.
    - ``documents``: canonical URLs of further documents to read with a handler rather
      than as pages (child sitemaps of an index, feeds a page links to).
    - ``documents_handler``: the handler that must read ``documents`` (``sitemap`` for
      an index's children, ``feed`` for a page's feeds): each is admitted as that kind
      of document and refused when it is not one. None: the handler its media type
      selects reads it, as for a link.
    - ``hints``: ``LinkHint`` values for links that came with a date or change frequency.
    - ``refused``: why the document was not read (a bomb, over a size limit), or None.
    """

    links: tuple[str, ...]
    nofollow_skipped: int
    noindex: bool
    nofollow: bool
    meta_refresh: str | None
    base_href: str | None
    charset: str
    title: str | None
    hrefs_seen: int
    kind: str = "html"
    simhash: int | None = None
    documents: tuple[str, ...] = ()
    hints: tuple[LinkHint, ...] = ()
    documents_handler: str | None = None
    refused: str | None = None
    credentials_stripped: int = 0
    text: str | None = None  # the text output's text (--text), None when not asked
    languages: tuple[str, ...] = ()  # ISO 639-3, most likely first (--text)
    text_error: str | None = None  # why ``text`` is None although it was asked for
    # AI-use signals of the page (headway.policy.aiuse reads them): noai / noimageai in
    # meta robots or X-Robots-Tag, and <meta name="tdm-reservation">'s content
    noai: bool = False
    noimageai: bool = False
    tdm_reservation: str | None = None
    outlinks: Outlinks | None = None  # with ``outlinks`` asked (the outlinks output)


@dataclass(frozen=True, slots=True)
class ParseTask:
    """Arguments of one ``parse_page`` call (or, with ``handler`` other than ``html``,
    of one content handler's, see ``headway.parse.handlers.run_task``), picklable, for a
    process pool."""

    url: str
    body: bytes
    content_type: str | None = None
    x_robots_tag: str | None = None
    robots_token: str = "headway"
    options: CanonOptions = DEFAULT_OPTIONS
    max_links: int = 10_000
    handler: str = "html"  # the content handler that reads it (headway.parse.handlers)
    truncated: str | None = None  # why the fetch cut the body, if it did
    max_document: int = 50 * 1024 * 1024  # a document's bytes once unpacked (gzip), at most
    text_mode: TextMode | None = None  # the text output's mode, None: no text (--text)
    outlinks: bool = False  # collect the outlinks output (--outlinks)


def parse_task(args: ParseTask) -> ParsedPage:
    """``parse_page`` over a ``ParseTask``; a top-level function for process pools."""
    return parse_page(
        args.url,
        args.body,
        content_type=args.content_type,
        x_robots_tag=args.x_robots_tag,
        robots_token=args.robots_token,
        options=args.options,
        max_links=args.max_links,
        text_mode=args.text_mode,
        outlinks=args.outlinks,
    )


def is_html(content_type: str | None, body_head: bytes) -> bool:
    """True for an HTML or XHTML media type; without one, sniff the first 1 KiB."""
    if content_type and content_type.strip():
        media = content_type.split(";", 1)[0].strip().lower()
        return media in _HTML_TYPES
    head = body_head[:SNIFF_BYTES].lower()
    return b"<!doctype html" in head or b"<html" in head


def parse_tree(text: str) -> LexborHTMLParser:
    """The document tree ``parse_page`` reads: lexbor, as a browser with scripting on."""
    return LexborHTMLParser(text, scripting=True)


def _canonicalize_all(base: str, hrefs: list[str], options: CanonOptions) -> tuple[list[str], int]:
    """Canonical links, and how many of them carried credentials."""
    if base:
        return canonicalize_links(base, hrefs, options)
    # No page URL (only in tests and tools): absolute hrefs still count.
    found = (canonicalize(href, None, options) for href in hrefs)
    return list(dict.fromkeys(canon for canon in found if canon is not None)), 0


def _has_nofollow(rel: str | None) -> bool:
    return rel is not None and "nofollow" in rel.lower().split()


def _noscript_hrefs(node: LexborNode) -> list[tuple[str, bool]]:
    markup = node.text(deep=True)
    if "href" not in markup:
        return []
    fragment = LexborHTMLParser(markup, is_fragment=True, scripting=True)
    return [
        (attributes.get("href") or "", _has_nofollow(attributes.get("rel")))
        for attributes in (link.attributes for link in fragment.css(_LINK_SELECTOR))
    ]


@dataclass(slots=True)
class _Scan:
    """What one walk over the tree collected, before any URL work."""

    hrefs: list[tuple[str, bool]]
    robots: RobotsDirectives
    base: str | None = None
    refresh: str | None = None
    title: str | None = None
    feeds: list[str] | None = None
    tdm: str | None = None  # <meta name="tdm-reservation" content>
    # the outlinks output only (None: not asked)
    anchors: list[tuple[str, str, str | None]] | None = None
    canonical: str | None = None
    hreflang: list[tuple[str, str]] | None = None
    meta_robots: list[str] | None = None


def _scan(
    tree: LexborHTMLParser, robots: RobotsDirectives, token: str, outlinks: bool = False
) -> _Scan:
    scan = _Scan(hrefs=[], robots=robots)
    if outlinks:
        scan.anchors, scan.hreflang, scan.meta_robots = [], [], []
    anchors = scan.anchors
    hrefs = scan.hrefs
    for node in tree.css(_SELECTOR):
        tag = node.tag
        attrs = node.attributes  # one dict per node: cheaper than two look-ups
        if tag == "a" or tag == "area":
            hrefs.append((attrs.get("href") or "", _has_nofollow(attrs.get("rel"))))
            if anchors is not None:
                words = " ".join(node.text(deep=True).split())[:MAX_ANCHOR_CHARS]
                if tag == "area":
                    words = words or (attrs.get("alt") or "")[:MAX_ANCHOR_CHARS]
                anchors.append((attrs.get("href") or "", words, attrs.get("rel")))
        elif tag == "meta":
            content = attrs.get("content") or ""
            name = attrs.get("name")
            if name is not None:
                name = name.strip().lower()
                if name in ("robots", token):
                    scan.robots = scan.robots.merge(robots_content(content))
                    if scan.meta_robots is not None and len(scan.meta_robots) < MAX_ALTERNATES:
                        scan.meta_robots.append(content.strip()[:MAX_TITLE_CHARS])
                elif name == "tdm-reservation" and scan.tdm is None:
                    scan.tdm = content.strip()[:16]
            equiv = attrs.get("http-equiv")
            if scan.refresh is None and equiv is not None and equiv.strip().lower() == "refresh":
                scan.refresh = refresh_url(content)
                if scan.refresh is not None:
                    hrefs.append((scan.refresh, False))
        elif tag == "base":
            if scan.base is None:
                scan.base = attrs.get("href") or ""
        elif tag == "title":
            if scan.title is None:
                scan.title = " ".join(node.text(deep=True).split())[:MAX_TITLE_CHARS] or None
        elif tag == "noscript":
            hrefs.extend(_noscript_hrefs(node))
        elif tag == "link":
            _scan_link(scan, attrs)
    return scan


def _scan_link(scan: _Scan, attrs: dict[str, str | None]) -> None:
    """Collect ``<link rel=alternate type=application/rss+xml|atom+xml href>`` (and for
    the outlinks output ``rel=canonical`` and ``hreflang`` alternates)."""
    rel = (attrs.get("rel") or "").lower().split()
    if scan.hreflang is not None:
        if "canonical" in rel and scan.canonical is None:
            scan.canonical = attrs.get("href") or ""
        lang = attrs.get("hreflang")
        if "alternate" in rel and lang and len(scan.hreflang) < MAX_ALTERNATES:
            scan.hreflang.append((lang.strip()[:32], attrs.get("href") or ""))
    kind = (attrs.get("type") or "").split(";", 1)[0].strip().lower()
    if "alternate" not in rel or kind not in FEED_TYPES:
        return
    if scan.feeds is None:
        scan.feeds = []
    if len(scan.feeds) < MAX_FEEDS:
        scan.feeds.append(attrs.get("href") or "")


def _empty(charset: str, robots: RobotsDirectives) -> ParsedPage:
    return ParsedPage(
        noai=robots.noai,
        noimageai=robots.noimageai,
        links=(),
        nofollow_skipped=0,
        noindex=robots.noindex,
        nofollow=robots.nofollow,
        meta_refresh=None,
        base_href=None,
        charset=charset,
        title=None,
        hrefs_seen=0,
    )


def _parse(
    url: str,
    body: bytes,
    content_type: str | None,
    header: RobotsDirectives,
    robots_token: str,
    options: CanonOptions,
    max_links: int,
    text_mode: TextMode | None = None,
    outlinks: bool = False,
) -> ParsedPage:
    charset = detect_charset(content_type, body)
    text = decode_body(body, charset)
    if not text or text.isspace():  # isspace stops at the first visible character
        return _empty(charset, header)
    tree = parse_tree(text)
    scan = _scan(tree, header, robots_token.strip().lower(), outlinks)

    base_href = canonicalize(scan.base, url or None, options) if scan.base is not None else None
    base = base_href or url
    refresh = canonicalize(scan.refresh, base or None, options) if scan.refresh else None

    hrefs_seen = len(scan.hrefs) - (1 if scan.refresh is not None else 0)
    scanned = scan.hrefs[: max(0, max_links) * HREF_SCAN_FACTOR]
    follow = [h for h, nofollow in scanned if not nofollow and len(h) <= MAX_HREF_CHARS]
    followed, stripped = _canonicalize_all(base, follow, options)
    unfollowed = [h for h, nofollow in scanned if nofollow and len(h) <= MAX_HREF_CHARS]
    skipped = set(_canonicalize_all(base, unfollowed, options)[0]).difference(followed)
    feeds: tuple[str, ...] = ()
    if scan.robots.nofollow:
        skipped.update(followed)
        followed = []
    elif scan.feeds:
        short = [h for h in scan.feeds if len(h) <= MAX_HREF_CHARS]
        feeds = tuple(_canonicalize_all(base, short, options)[0])
    page_text, languages, text_error = (
        _text(text, tree, text_mode) if text_mode is not None else (None, (), None)
    )
    fingerprint = simhash(visible_text(tree))  # strips hidden elements off the tree
    return ParsedPage(
        links=tuple(followed[: max(0, max_links)]),
        nofollow_skipped=len(skipped),
        noindex=scan.robots.noindex,
        nofollow=scan.robots.nofollow,
        meta_refresh=refresh,
        base_href=base_href,
        charset=charset,
        title=scan.title,
        hrefs_seen=hrefs_seen,
        simhash=fingerprint,
        documents=feeds,
        documents_handler="feed" if feeds else None,
        credentials_stripped=stripped,
        text=page_text,
        languages=languages,
        text_error=text_error,
        noai=scan.robots.noai,
        noimageai=scan.robots.noimageai,
        tdm_reservation=scan.tdm,
        outlinks=_outlinks(scan, base, options, max_links) if outlinks else None,
    )


def _resolve(href: str, base: str, options: CanonOptions) -> str | None:
    if len(href) > MAX_HREF_CHARS:
        return None
    return canonicalize(href, base or None, options)


def _outlinks(scan: _Scan, base: str, options: CanonOptions, max_links: int) -> Outlinks:
    """The outlinks output of one page: its links as written, resolved (bounded as the
    followed links are)."""
    anchors = (scan.anchors or [])[: max(0, max_links)]
    return Outlinks(
        links=tuple(Outlink(h, _resolve(h, base, options), t, r) for h, t, r in anchors),
        canonical=_resolve(scan.canonical, base, options) if scan.canonical else None,
        hreflang=tuple(
            (lang, url)
            for lang, href in scan.hreflang or []
            if (url := _resolve(href, base, options)) is not None
        ),
        meta_robots=tuple(scan.meta_robots or ()),
    )


def _text(
    html: str, tree: LexborHTMLParser, mode: TextMode
) -> tuple[str | None, tuple[str, ...], str | None]:
    """(text, languages, why not) of one page for the text output; never raises."""
    try:
        page_text = extract_text(html, mode, tree)
        return page_text, identify(page_text), None
    except HeadwayError as exc:  # refused (too deep), or the mode's package is missing
        return None, (), str(exc)
    except Exception as exc:  # an extractor's bug must not cost the page its links
        logger.warning("text extraction failed", exc_info=True)
        return None, (), f"text extraction failed: {type(exc).__name__}: {exc}"


def parse_page(
    url: str,
    body: bytes,
    *,
    content_type: str | None = None,
    x_robots_tag: str | None = None,
    robots_token: str = "headway",
    options: CanonOptions = DEFAULT_OPTIONS,
    max_links: int = 10_000,
    text_mode: TextMode | None = None,
    outlinks: bool = False,
) -> ParsedPage:
    """Links and page-level directives of one HTML page (and its text, with a
    ``text_mode``; its outlinks, with ``outlinks``); never raises."""
    header = x_robots_tag_directives(x_robots_tag, robots_token)
    try:
        return _parse(
            url, body, content_type, header, robots_token, options, max_links, text_mode, outlinks
        )
    except Exception:  # the contract is "never raises": a page must not kill a worker
        logger.warning("parse failed for %s", url, exc_info=True)
        return _empty("utf-8", header)
