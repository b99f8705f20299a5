"""A page's title for the WACZ page list."""

from __future__ import annotations

import pytest

from headway.parse.page import MAX_TITLE_CHARS
from headway.parse.title import html_title

CASES = [
    (b"<html><head><title>Hello</title></head></html>", None, "Hello"),
    (b"<title>  Two\n  words </title><title>second</title>", None, "Two words"),
    (b"<html><body>no title</body></html>", None, None),
    (b"<title>   </title>", None, None),
    ("<title>caf\u00e9</title>".encode("latin-1"), "text/html; charset=iso-8859-1", "caf\u00e9"),
    (b'<meta charset="utf-8"><title>\xc3\xa9t\xc3\xa9</title>', None, "\u00e9t\u00e9"),
    (b"<body><svg><title>an icon</title></svg></body>", None, "an icon"),
]


@pytest.mark.parametrize(("body", "content_type", "expected"), CASES)
def test_title(body: bytes, content_type: str | None, expected: str | None) -> None:
    assert html_title(body, content_type) == expected


def test_a_long_title_is_cut() -> None:
    title = html_title(b"<title>" + b"x" * 5000 + b"</title>", None)
    assert title == "x" * MAX_TITLE_CHARS
