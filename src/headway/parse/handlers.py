"""Content handlers: the built-in ones and the registry that picks one by media type.

A content handler (the interface: ``handler.py``) turns one fetched document into a
``ParsedPage`` (links to follow, further documents to read, hints, or the reason it was
refused). headway ships three:
``html`` (``headway.parse.page``), ``sitemap`` (``headway.parse.sitemap``) and ``feed``
(``headway.parse.feed``). Others come from installed packages through the entry-point
group ``headway.handlers``: each entry point names an object that satisfies
``ContentHandler`` (see docs/handlers.md for a minimal one).

Contract (the handler's own contract is in ``handler.py``; its names are re-exported
here for other packages' handlers):

- ``HandlerRegistry.select(content_type, head)`` returns the first handler, in
  registry order, that lists the media type and accepts the head (any handler that
  accepts the head when there is no Content-Type). Handlers from other packages come
  before the built-in ones, so a package can take over a media type. ``get(name)``
  finds a handler by name.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from functools import cache
from importlib.metadata import entry_points

from headway.parse.feed import FEED_HANDLER
from headway.parse.handler import HEAD_BYTES, ContentHandler, Document, media_type_of
from headway.parse.page import ParsedPage, ParseTask, is_html, parse_page, parse_task
from headway.parse.sitemap import SITEMAP_HANDLER

__all__ = [
    "ENTRY_POINT_GROUP",
    "HEAD_BYTES",
    "ContentHandler",
    "Document",
    "HandlerRegistry",
    "HtmlHandler",
    "load_handlers",
    "media_type_of",
    "run_task",
]

log = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "headway.handlers"


class HtmlHandler:
    """HTML and XHTML pages: links, directives, SimHash, announced feeds."""

    name = "html"
    media_types = frozenset({"text/html", "application/xhtml+xml"})

    def accepts(self, media_type: str | None, head: bytes) -> bool:
        return is_html(media_type, head)

    def handle(self, doc: Document) -> ParsedPage:
        return parse_page(
            doc.url,
            doc.body,
            content_type=doc.content_type,
            x_robots_tag=doc.x_robots_tag,
            robots_token=doc.robots_token,
            options=doc.options,
            max_links=doc.max_links,
        )


HTML_HANDLER = HtmlHandler()
BUILTIN_NAMES = ("html", "sitemap", "feed")


class HandlerRegistry:
    """Handlers in consultation order (see the module contract)."""

    def __init__(self, handlers: Iterable[ContentHandler]) -> None:
        self.handlers: tuple[ContentHandler, ...] = tuple(handlers)
        self._by_name = {h.name: h for h in self.handlers}

    def names(self) -> tuple[str, ...]:
        return tuple(h.name for h in self.handlers)

    def get(self, name: str) -> ContentHandler | None:
        return self._by_name.get(name)

    def select(self, content_type: str | None, head: bytes) -> ContentHandler | None:
        media = media_type_of(content_type)
        head = head[:HEAD_BYTES]
        for handler in self.handlers:
            if media is not None and media not in handler.media_types:
                continue
            try:
                if handler.accepts(media, head):
                    return handler
            except Exception:  # a broken plug-in must not stop the crawl
                log.warning("content handler %s failed in accepts()", handler.name, exc_info=True)
        return None


def _builtins() -> dict[str, ContentHandler]:
    return {"html": HTML_HANDLER, "sitemap": SITEMAP_HANDLER, "feed": FEED_HANDLER}


@cache
def load_handlers() -> HandlerRegistry:
    """The registry of this process: the ``headway.handlers`` entry points (a broken
    one is logged and skipped), with the built-in handlers always present (also when
    the package runs from a source tree without its entry points installed)."""
    builtins = _builtins()
    extra: list[ContentHandler] = []
    for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        if ep.name in builtins:
            continue  # the built-ins are taken from this package, whatever is installed
        try:
            handler = ep.load()
        except Exception:
            log.warning("cannot load content handler %r (%s)", ep.name, ep.value, exc_info=True)
            continue
        if not isinstance(handler, ContentHandler):
            log.warning("content handler %r (%s) lacks the handler interface", ep.name, ep.value)
            continue
        extra.append(handler)
    return HandlerRegistry([*extra, *(builtins[n] for n in BUILTIN_NAMES)])


def run_task(task: ParseTask) -> ParsedPage:
    """Run ``task`` with its handler, in a parser process (``parse_task`` for HTML). A
    handler that is not installed here, or that raises, gives a refused result."""
    if task.handler == "html":
        return parse_task(task)
    handler = load_handlers().get(task.handler)
    if handler is None:
        return _refused(task.handler, f"no content handler {task.handler!r}")
    doc = Document(
        url=task.url,
        body=task.body,
        content_type=task.content_type,
        truncated=task.truncated,
        x_robots_tag=task.x_robots_tag,
        robots_token=task.robots_token,
        options=task.options,
        max_links=task.max_links,
        max_bytes=task.max_document,
    )
    try:
        return handler.handle(doc)
    except Exception as exc:  # a broken plug-in must not take the page's batch with it
        log.warning("content handler %s failed on %s", task.handler, task.url, exc_info=True)
        return _refused(task.handler, f"handler error: {type(exc).__name__}: {exc}")


def _refused(kind: str, reason: str) -> ParsedPage:
    return ParsedPage((), 0, False, False, None, None, "utf-8", None, 0, kind, refused=reason)
