"""The content handler registry: selection by media type and head, entry points."""

from __future__ import annotations

import gzip
from importlib.metadata import EntryPoint
from typing import Any

import pytest

from headway.parse import handlers
from headway.parse.handlers import (
    ENTRY_POINT_GROUP,
    ContentHandler,
    HandlerRegistry,
    load_handlers,
    run_task,
)
from headway.parse.page import ParseTask
from tests.parse.example_handler import URI_LIST_HANDLER

NS = b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'


@pytest.mark.parametrize(
    ("content_type", "head", "expected"),
    [
        ("text/html; charset=utf-8", b"", "html"),
        ("application/xhtml+xml", b"<html>", "html"),
        (None, b"<!DOCTYPE html><html>", "html"),
        ("application/xml", b'<?xml version="1.0"?>' + NS, "sitemap"),
        ("text/xml; charset=utf-8", b"<sitemapindex>", "sitemap"),
        ("application/rss+xml", b"<rss>", "feed"),
        ("application/atom+xml", b"", "feed"),
        ("application/xml", b"<rss version='2.0'>", "feed"),
        (None, b"<?xml version='1.0'?><feed xmlns='http://www.w3.org/2005/Atom'>", "feed"),
        ("application/pdf", b"%PDF-1.4", None),
        ("application/xml", b"<svg/>", None),
        ("text/plain", NS, None),
        ("", b"plain text", None),
    ],
)
def test_builtin_selection(content_type: str | None, head: bytes, expected: str | None) -> None:
    handler = load_handlers().select(content_type, head)
    assert (handler.name if handler is not None else None) == expected


def test_builtins_are_registered_as_entry_points() -> None:
    # the package's own metadata (pyproject.toml) lists the built-in handlers
    from importlib.metadata import entry_points

    names = {ep.name: ep.load() for ep in entry_points(group=ENTRY_POINT_GROUP)}
    registry = load_handlers()
    for name in ("html", "sitemap", "feed"):
        assert names[name] is registry.get(name)
        assert isinstance(names[name], ContentHandler)


def _fake_entry_points(extra: list[EntryPoint]) -> Any:
    def entry_points(group: str) -> list[EntryPoint]:
        assert group == ENTRY_POINT_GROUP
        return extra

    return entry_points


def test_a_package_adds_a_handler_through_the_entry_point_group(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    good = EntryPoint("uri-list", "tests.parse.example_handler:URI_LIST_HANDLER", ENTRY_POINT_GROUP)
    broken = EntryPoint("broken", "tests.parse.no_such_module:X", ENTRY_POINT_GROUP)
    not_handler = EntryPoint(
        "odd", "tests.parse.example_handler:UriListHandler.name", ENTRY_POINT_GROUP
    )
    monkeypatch.setattr(handlers, "entry_points", _fake_entry_points([good, broken, not_handler]))
    load_handlers.cache_clear()
    try:
        registry = load_handlers()
        assert registry.names() == ("uri-list", "html", "sitemap", "feed")
        assert registry.select("text/uri-list", b"") is URI_LIST_HANDLER
        task = ParseTask(
            url="http://a.test/list",
            body=b"# c\nhttp://a.test/1\n/2\nhttp://a.test/1\n",
            handler="uri-list",
        )
        page = run_task(task)
        assert page.kind == "uri-list" and page.links == ("http://a.test/1", "http://a.test/2")
    finally:
        load_handlers.cache_clear()


class _Raising:
    name = "raising"
    media_types = frozenset({"application/x-raise"})

    def accepts(self, media_type: str | None, head: bytes) -> bool:
        raise RuntimeError("boom")

    def handle(self, doc: object) -> object:
        raise RuntimeError("boom")


def test_a_raising_handler_is_skipped_or_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    registry = HandlerRegistry([_Raising(), URI_LIST_HANDLER])  # type: ignore[list-item]
    assert registry.select("application/x-raise", b"") is None
    monkeypatch.setattr(handlers, "load_handlers", lambda: registry)
    page = run_task(ParseTask(url="http://a.test/", body=b"x", handler="raising"))
    assert page.links == () and (page.refused or "").startswith("handler error")
    page = run_task(ParseTask(url="http://a.test/", body=b"x", handler="missing"))
    assert (page.refused or "").startswith("no content handler")


def test_run_task_reads_a_sitemap() -> None:
    body = NS + b"<url><loc>http://a.test/x</loc></url></urlset>"
    page = run_task(ParseTask(url="http://a.test/sitemap.xml", body=body, handler="sitemap"))
    assert page.kind == "sitemap" and page.links == ("http://a.test/x",)
    cut = run_task(
        ParseTask(url="http://a.test/s.xml", body=body, handler="sitemap", truncated="length")
    )
    assert cut.links == () and (cut.refused or "").startswith("truncated")


@pytest.mark.parametrize(
    "content_type",
    ["application/xml", "text/xml", "application/octet-stream", "text/plain", None],
)
def test_a_sitemap_is_read_whatever_media_type_it_came_with(content_type: str | None) -> None:
    body = NS + b"<url><loc>http://a.test/x</loc></url></urlset>"
    for sent in (body, gzip.compress(body)):
        task = ParseTask(
            url="http://a.test/s.xml", body=sent, content_type=content_type, handler="sitemap"
        )
        page = run_task(task)
        assert (page.links, page.refused) == (("http://a.test/x",), None), content_type


def test_a_text_sitemap_gives_the_urls_of_its_lines() -> None:
    body = b"\xef\xbb\xbfhttp://a.test/x\r\n\n  https://b.test/y?q=1  \nnot a url\nftp://c.test/\n"
    for sent in (body, gzip.compress(body)):
        task = ParseTask(
            url="http://a.test/s.txt", body=sent, content_type="text/plain", handler="sitemap"
        )
        page = run_task(task)
        assert (page.links, page.refused) == (("http://a.test/x", "https://b.test/y?q=1"), None)
    many = b"".join(b"http://a.test/%d\n" % i for i in range(50_001))
    task = ParseTask(
        url="http://a.test/s.txt", body=many, content_type="text/plain", handler="sitemap"
    )
    refused = run_task(task).refused
    assert refused is not None and refused.startswith("too-many-entries: 50001")


HTML_PAGE = b"<!DOCTYPE html><html><head><meta charset=utf-8>"
NOT_DOCUMENTS = [
    ("sitemap", "text/html", HTML_PAGE, "not-a-sitemap: an HTML page (text/html)"),
    ("sitemap", "application/xml", b"\n <html><p>hi<br></html>", "not-a-sitemap: an HTML page"),
    ("sitemap", "application/xml", b"", "xml-malformed: empty document"),
    ("sitemap", "text/plain", b"just some prose\nno URL here\n", "not-a-sitemap: text without"),
    ("sitemap", "application/xml", b"<rss><channel/></rss>", "not-a-sitemap: root element <rss>"),
    ("feed", "text/html", b"<html><a href=/x>x</a></html>", "not-a-feed: an HTML page (text/html)"),
    ("feed", "application/rss+xml", b"  ", "xml-malformed: empty document"),
]


@pytest.mark.parametrize(("handler", "content_type", "body", "reason"), NOT_DOCUMENTS)
def test_a_document_that_is_not_what_it_was_admitted_as_is_refused(
    handler: str, content_type: str, body: bytes, reason: str
) -> None:
    task = ParseTask(url="http://a.test/d", body=body, content_type=content_type, handler=handler)
    page = run_task(task)
    assert page.links == () and page.documents == ()
    assert page.kind == handler and (page.refused or "").startswith(reason), page.refused


@pytest.mark.parametrize("handler", ["sitemap", "feed"])
def test_a_gzipped_document_is_held_to_the_document_limit_once_unpacked(handler: str) -> None:
    if handler == "sitemap":
        xml = NS + b"".join(b"<url><loc>http://a.test/%d</loc></url>" % i for i in range(5000))
        xml += b"</urlset>"
    else:
        items = b"".join(b"<item><link>http://a.test/%d</link></item>" % i for i in range(5000))
        xml = b"<rss version='2.0'><channel>" + items + b"</channel></rss>"
    packed = gzip.compress(xml)
    assert len(packed) < 100_000 < len(xml)

    def run(limit: int) -> str | None:
        task = ParseTask(url="http://a.test/d.gz", body=packed, handler=handler, max_document=limit)
        return run_task(task).refused

    assert run(len(xml)) is None  # the whole document fits
    refused = run(100_000)
    assert refused is not None and refused.startswith("too-large: over 100000 bytes uncompressed")
