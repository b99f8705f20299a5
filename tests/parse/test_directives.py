"""Meta robots, X-Robots-Tag and meta refresh values (table-driven)."""

from __future__ import annotations

import pytest

from headway.parse.directives import (
    RobotsDirectives,
    refresh_url,
    robots_content,
    x_robots_tag,
)

NONE = RobotsDirectives()
NOINDEX = RobotsDirectives(noindex=True)
NOFOLLOW = RobotsDirectives(nofollow=True)
BOTH = RobotsDirectives(noindex=True, nofollow=True)


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("", NONE),
        ("index, follow", NONE),
        ("all", NONE),
        ("noindex", NOINDEX),
        ("NOFOLLOW", NOFOLLOW),
        ("noindex,nofollow", BOTH),
        (" noindex , nofollow ", BOTH),
        ("noindex nofollow", BOTH),
        ("none", BOTH),
        ("None", BOTH),
        ("noarchive, max-snippet:-1", NONE),
        ("noindexing", NONE),
    ],
)
def test_robots_content(content: str, expected: RobotsDirectives) -> None:
    assert robots_content(content) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, NONE),
        ("", NONE),
        ("noindex", NOINDEX),
        ("noindex, nofollow", BOTH),
        ("none", BOTH),
        ("googlebot: noindex", NONE),
        ("headway: noindex", NOINDEX),
        ("HeadWay: NoFollow", NOFOLLOW),
        ("googlebot: none, headway: nofollow", NOFOLLOW),
        # an agent prefix carries to the directives after it in the same field
        ("headway: noindex, nofollow", BOTH),
        ("googlebot: noindex, nofollow", NONE),
        # newline-joined fields: each starts with no agent
        ("googlebot: noindex\nnofollow", NOFOLLOW),
        ("googlebot: noindex\r\nheadway: noindex", NOINDEX),
        # valued directives are not agents
        ("unavailable_after: 25 Jun 2010 15:00:00 PST, noindex", NOINDEX),
        ("max-snippet: 20, nofollow", NOFOLLOW),
        ("unavailable_after: Friday, 25-Jun-10 15:00:00 PST", NONE),
        ("otherbot: noindex, max-snippet: 20", NONE),
    ],
)
def test_x_robots_tag(value: str | None, expected: RobotsDirectives) -> None:
    assert x_robots_tag(value, "headway") == expected


def test_x_robots_tag_uses_given_token() -> None:
    assert x_robots_tag("mybot: noindex", "MyBot") == NOINDEX
    assert x_robots_tag("mybot: noindex", "headway") == NONE


def test_merge_keeps_stricter() -> None:
    assert NOINDEX.merge(NOFOLLOW) == BOTH
    assert BOTH.merge(NONE) == BOTH
    assert NONE.merge(NONE) == NONE


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("5;url=http://example.org/a", "http://example.org/a"),
        ("5; URL=/a", "/a"),
        ("0;url='next.html'", "next.html"),
        ('0; url="next.html" trailing', "next.html"),
        ("0; url = next.html ", "next.html"),
        ("3, next.html", "next.html"),
        ("3 next.html", "next.html"),
        ("1.5; url=x", "x"),
        (".1;URL=index.html", "index.html"),
        ("0; URL=\nhttp://www.example.org/index.php", "http://www.example.org/index.php"),
        ("0; urlfoo", "urlfoo"),
        ("0; url", "url"),
        # no URL: a refresh of the page itself, not a link
        ("5", None),
        ("5;", None),
        ("5; ", None),
        # not a refresh
        ("", None),
        ("url=x", None),
        ("\u0665; url=x", None),
        ("5x; url=y", None),
    ],
)
def test_refresh_url(content: str, expected: str | None) -> None:
    assert refresh_url(content) == expected
