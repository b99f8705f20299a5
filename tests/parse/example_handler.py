"""The minimal content handler shown in docs/handlers.md: ``text/uri-list`` (RFC 2483),
one URL a line, ``#`` lines are comments."""

from __future__ import annotations

from headway.parse.handler import Document
from headway.parse.page import ParsedPage
from headway.urls.canonical import canonicalize


class UriListHandler:
    name = "uri-list"
    media_types = frozenset({"text/uri-list"})

    def accepts(self, media_type: str | None, head: bytes) -> bool:
        return media_type == "text/uri-list"

    def handle(self, doc: Document) -> ParsedPage:
        lines = doc.body.decode("utf-8", "replace").splitlines()
        found = (canonicalize(x.strip(), doc.url, doc.options) for x in lines if x[:1] != "#")
        links = tuple(dict.fromkeys(u for u in found if u is not None))[: doc.max_links]
        return ParsedPage(links, 0, False, False, None, None, "utf-8", None, len(lines), self.name)


URI_LIST_HANDLER = UriListHandler()
