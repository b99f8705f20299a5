"""The content handler registry: selection by media type and head, entry points."""

from __future__ import annotations

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
