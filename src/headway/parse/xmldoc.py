"""Safe loading of XML documents from the web (sitemaps, feeds): pure, runs in workers.

Contract of ``load_xml(body, limits)``:

- A body that starts with the gzip magic is decompressed first (whatever the media type
  says: sitemaps are often served as ``application/x-gzip`` or ``octet-stream``), never
  past ``limits.max_bytes``; a body or a decompressed document over ``max_bytes`` is
  refused, not cut (half a sitemap reads as a different sitemap).
- The parser is lxml (libxml2) with entity substitution, DTD loading and network access
  off, and without libxml2's huge-tree mode. A document that declares entities in its
  DOCTYPE (the "billion laughs" family) or refers to any entity other than the five
  predefined ones (external entities, XXE) is refused, even though nothing was expanded.
- Returns ``XmlLoad(root, None)`` or ``XmlLoad(None, reason)``; ``reason`` is a short,
  stable text for the crawl log (``REFUSED_*`` prefixes). Never raises.
"""

from __future__ import annotations

import dataclasses
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from lxml import etree

from headway.parse.page import LinkHint, ParsedPage, is_html
from headway.urls.canonical import CanonOptions, canonicalize

__all__ = [
    "MAX_XML_BYTES",
    "REFUSED_ENTITIES",
    "REFUSED_MALFORMED",
    "REFUSED_TOO_LARGE",
    "XmlLimits",
    "XmlLoad",
    "gunzip_head",
    "load_xml",
    "local_name",
    "unpack",
]

#: The sitemap protocol's size limit per file (uncompressed), used for feeds too.
MAX_XML_BYTES = 50 * 1024 * 1024
GZIP_MAGIC = b"\x1f\x8b"
#: Media types of HTML pages (``name_html_refusal``).
HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})

REFUSED_ENTITIES = "xml-entities"
REFUSED_MALFORMED = "xml-malformed"
REFUSED_TOO_LARGE = "too-large"
REFUSED_TRUNCATED = "truncated"


@dataclass(frozen=True, slots=True)
class XmlLimits:
    """Caps for one XML document: uncompressed bytes, and entries (URLs, items) kept."""

    max_bytes: int = MAX_XML_BYTES
    max_entries: int = 50_000


@dataclass(frozen=True, slots=True)
class XmlLoad:
    root: Any  # lxml.etree._Element, or None when refused
    refused: str | None


def _parser() -> Any:
    return etree.XMLParser(
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        dtd_validation=False,
        huge_tree=False,
        remove_comments=True,
        remove_pis=True,
    )


def gunzip_head(head: bytes, limit: int = 4096) -> bytes:
    """The first ``limit`` decompressed bytes of a gzip ``head`` (what is there of it),
    or ``head`` itself when it is not gzip; for sniffing."""
    if not head.startswith(GZIP_MAGIC):
        return head
    try:
        return zlib.decompressobj(zlib.MAX_WBITS | 16).decompress(head, limit)
    except zlib.error:
        return b""


def _gunzip(body: bytes, max_bytes: int) -> bytes | None:
    """``body`` decompressed, or None when it would exceed ``max_bytes``; a corrupt
    stream raises ``zlib.error``."""
    inflater = zlib.decompressobj(zlib.MAX_WBITS | 16)
    out = inflater.decompress(body, max_bytes + 1)
    if len(out) > max_bytes or inflater.unconsumed_tail:
        return None
    return out


def local_name(tag: object) -> str:
    """The element name without its namespace (``{ns}loc`` -> ``loc``); '' for
    comments and other non-element nodes."""
    if not isinstance(tag, str):
        return ""
    return tag.rpartition("}")[2]


def _declares_entities(root: Any) -> bool:
    dtd = root.getroottree().docinfo.internalDTD
    return dtd is not None and any(True for _ in dtd.iterentities())


def unpack(
    body: bytes, limits: XmlLimits, *, truncated: str | None = None
) -> tuple[bytes, str | None]:
    """A document's bytes, decompressed when gzipped, and None; or the reason it is
    refused (cut by the fetch, over ``limits.max_bytes`` before or after decompression,
    a corrupt gzip stream) with ``b""``. The first step of ``load_xml``, also for
    documents that are not XML (text sitemaps)."""
    if truncated:
        return b"", f"{REFUSED_TRUNCATED}: body cut by the fetch ({truncated})"
    if len(body) > limits.max_bytes:
        return b"", f"{REFUSED_TOO_LARGE}: over {limits.max_bytes} bytes"
    if body.startswith(GZIP_MAGIC):
        try:
            inflated = _gunzip(body, limits.max_bytes)
        except zlib.error as exc:
            return b"", f"{REFUSED_MALFORMED}: bad gzip ({exc})"
        if inflated is None:
            return b"", (
                f"{REFUSED_TOO_LARGE}: over {limits.max_bytes} bytes uncompressed "
                "(--max-document-bytes)"
            )
        body = inflated
    return body, None


def load_xml(
    body: bytes, limits: XmlLimits = XmlLimits(), *, truncated: str | None = None
) -> XmlLoad:
    """Parse ``body`` safely (see the module contract). ``truncated``: the fetch cut the
    body (it is refused: a partial document is not the document)."""
    body, refused = unpack(body, limits, truncated=truncated)
    if refused is not None:
        return XmlLoad(None, refused)
    if not body.strip():
        return XmlLoad(None, f"{REFUSED_MALFORMED}: empty document")
    try:
        root = etree.fromstring(body, _parser())
    except etree.XMLSyntaxError as exc:
        # libxml2 stops some entity bombs itself ("amplification factor exceeded")
        kind = REFUSED_ENTITIES if "entit" in str(exc).lower() else REFUSED_MALFORMED
        return XmlLoad(None, f"{kind}: {str(exc)[:200]}")
    except (ValueError, MemoryError) as exc:
        return XmlLoad(None, f"{REFUSED_MALFORMED}: {type(exc).__name__}")
    if root is None:
        return XmlLoad(None, f"{REFUSED_MALFORMED}: no root element")
    if _declares_entities(root):
        return XmlLoad(None, f"{REFUSED_ENTITIES}: the document declares entities")
    for node in root.iter(etree.Entity):
        return XmlLoad(None, f"{REFUSED_ENTITIES}: reference to entity {node.name!r}")
    return XmlLoad(root, None)


def name_html_refusal(
    page: ParsedPage, media_type: str | None, body: bytes, refused_as: str
) -> ParsedPage:
    """``page``, with the reason of a refused body that is an HTML page (by its media
    type or its first bytes) replaced by ``<refused_as>: an HTML page (<media type>)``:
    what a reader of the crawl log needs, where libxml2's complaint about an unclosed
    tag would not say it."""
    reason = page.refused
    if reason is None or not reason.startswith((REFUSED_MALFORMED, refused_as)):
        return page  # read, or refused for what it holds (entities, size, a cut)
    if media_type not in HTML_TYPES and not is_html(None, body[:1024].lstrip()):
        return page
    served = media_type or "no Content-Type"
    return dataclasses.replace(page, refused=f"{refused_as}: an HTML page ({served})")


#: What a content handler reads from one entry of a document: its link (as written),
#: its date (epoch seconds) and its change frequency, each possibly None.
EntryFields = tuple[str | None, float | None, str | None]


def entry_links(
    entries: Iterable[Any],
    read: Callable[[Any], EntryFields],
    base: str,
    options: CanonOptions,
) -> tuple[tuple[str, ...], tuple[LinkHint, ...]]:
    """The links of a document's entries (sitemap ``<url>``, feed ``<item>``), each read
    by ``read``, canonicalized against ``base``, deduplicated in document order (the
    first entry of a link wins), and a ``LinkHint`` for each link whose entry has a date
    or a change frequency. Entries without a usable link are skipped."""
    found: dict[str, None] = {}
    hints: list[LinkHint] = []
    for entry in entries:
        link, date, freq = read(entry)
        target = canonicalize(link, base or None, options) if link else None
        if target is None or target in found:
            continue
        found[target] = None
        if date is not None or freq is not None:
            hints.append(LinkHint(target, date, freq))
    return tuple(found), tuple(hints)
