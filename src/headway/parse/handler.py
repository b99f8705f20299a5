"""What a content handler is: the one interface every format the crawl reads implements
(see ``handlers`` for the built-in ones and the registry, docs/handlers.md for a minimal
handler of another package).

Contract:

- ``ContentHandler.media_types`` lists the media types (lower case, no parameters) the
  handler is offered; ``accepts(media_type, head)`` has the final say from the first
  ``HEAD_BYTES`` bytes of the body (``media_type`` None: the response had no
  Content-Type), so generic types such as ``application/xml`` can be shared by several
  handlers.
- ``handle(doc)`` runs in a parser process: it must be pure (no IO), bounded in time and
  memory by the document's size, picklable by reference (a module-level object), and
  must never raise for bad input: it returns a ``ParsedPage`` with ``refused`` set
  instead. Its result's ``kind`` should be the handler's ``name``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from headway.parse.page import ParsedPage
from headway.urls.canonical import DEFAULT_OPTIONS, CanonOptions

__all__ = ["HEAD_BYTES", "ContentHandler", "Document", "media_type_of"]

#: Bytes of a body a handler's ``accepts`` sees.
HEAD_BYTES = 2048


@dataclass(frozen=True, slots=True)
class Document:
    """One fetched document, as a handler receives it. ``body`` is the decoded body
    (Content-Encoding removed); ``truncated`` says why the fetch cut it, if it did."""

    url: str
    body: bytes
    content_type: str | None = None
    truncated: str | None = None
    x_robots_tag: str | None = None
    robots_token: str = "headway"
    options: CanonOptions = DEFAULT_OPTIONS
    max_links: int = 10_000
    #: bytes a document may unpack to (a gzipped sitemap), the ``max_document_bytes``
    #: setting; handlers of compressed formats refuse what would inflate past it
    max_bytes: int = 50 * 1024 * 1024

    @property
    def media_type(self) -> str | None:
        return media_type_of(self.content_type)


@runtime_checkable
class ContentHandler(Protocol):
    """Reads one format (see the module contract)."""

    name: str
    media_types: frozenset[str]

    def accepts(self, media_type: str | None, head: bytes) -> bool:
        """Whether this handler reads a body with this media type and first bytes."""
        ...

    def handle(self, doc: Document) -> ParsedPage:
        """Links, documents and hints of ``doc``; never raises."""
        ...


def media_type_of(content_type: str | None) -> str | None:
    """``text/html; charset=x`` -> ``text/html``; None for a missing or blank header."""
    if content_type is None:
        return None
    media = content_type.split(";", 1)[0].strip().lower()
    return media or None
