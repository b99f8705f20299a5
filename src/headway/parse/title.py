"""A page's title, as a page list shows it (``headway export``'s ``pages.jsonl``)."""

from __future__ import annotations

from headway.parse.charset import decode_body, detect_charset
from headway.parse.page import MAX_TITLE_CHARS, parse_tree


def html_title(body: bytes, content_type: str | None) -> str | None:
    """The first ``<title>`` of an HTML body, whitespace collapsed and cut to
    ``MAX_TITLE_CHARS``; None when it has none or only whitespace."""
    end = body.lower().find(b"</title")
    if end >= 0:  # what follows the first title is not read
        body = body[: end + len(b"</title>")]
    text = decode_body(body, detect_charset(content_type, body))
    node = parse_tree(text).css_first("title")
    if node is None:
        return None
    return " ".join(node.text(deep=True).split())[:MAX_TITLE_CHARS] or None
