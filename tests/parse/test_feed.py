"""parse_feed and the feed handler: RSS 2.0, RSS 1.0 and Atom, table tests."""

from __future__ import annotations

import pytest

from headway.parse.feed import FEED_HANDLER, parse_feed, parse_feed_date
from headway.parse.page import LinkHint
from headway.parse.xmldoc import XmlLimits

FEED = "http://a.test/feed.xml"

RSS = b"""<?xml version="1.0"?><rss version="2.0"><channel><title>t</title>
<link>http://a.test/</link>
<item><title>a</title><link>http://a.test/post/1</link>
<pubDate>Thu, 01 Feb 2024 10:00:00 GMT</pubDate></item>
<item><link> /post/2 </link></item>
<item><title>no link</title></item>
<item><link>http://a.test/post/1</link></item>
</channel></rss>"""

ATOM = b"""<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom"><title>t</title>
<link rel="self" href="http://a.test/atom.xml"/>
<entry><link rel="edit" href="http://a.test/edit/1"/><link href="http://a.test/e/1"/>
<updated>2024-02-01T10:00:00Z</updated></entry>
<entry><link rel="alternate" href="e/2"/><published>2024-02-01T12:00:00+02:00</published></entry>
</feed>"""

RDF = b"""<?xml version="1.0"?>
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/"
 xmlns:dc="http://purl.org/dc/elements/1.1/">
<channel rdf:about="http://a.test/"><link>http://a.test/</link></channel>
<item rdf:about="http://a.test/r/1"><link>http://a.test/r/1</link><dc:date>2024-02-01</dc:date></item>
</rdf:RDF>"""


@pytest.mark.parametrize(
    ("body", "links", "hints"),
    [
        (RSS, ("http://a.test/post/1", "http://a.test/post/2"),
         (LinkHint("http://a.test/post/1", 1706781600.0),)),
        (ATOM, ("http://a.test/e/1", "http://a.test/e/2"),
         (LinkHint("http://a.test/e/1", 1706781600.0),
          LinkHint("http://a.test/e/2", 1706781600.0))),
        (RDF, ("http://a.test/r/1",), (LinkHint("http://a.test/r/1", 1706745600.0),)),
    ],
)  # fmt: skip
def test_feeds(body: bytes, links: tuple[str, ...], hints: tuple[LinkHint, ...]) -> None:
    page = parse_feed(FEED, body)
    assert page.refused is None and page.kind == "feed"
    assert page.links == links
    assert page.hints == hints


@pytest.mark.parametrize(
    ("body", "prefix"),
    [
        (b"<html/>", "not-a-feed"),
        (b'<!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><rss><channel><item>'
         b"<link>&x;</link></item></channel></rss>", "xml-entities"),
        (b"<rss><channel>", "xml-malformed"),
    ],
)  # fmt: skip
def test_refused(body: bytes, prefix: str) -> None:
    page = parse_feed(FEED, body)
    assert page.links == ()
    assert page.refused is not None and page.refused.startswith(prefix), page.refused


def test_entry_cap() -> None:
    items = "".join(f"<item><link>http://a.test/{i}</link></item>" for i in range(20))
    body = f"<rss><channel>{items}</channel></rss>".encode()
    assert len(parse_feed(FEED, body, limits=XmlLimits(max_entries=5)).links) == 5


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Thu, 01 Feb 2024 10:00:00 GMT", 1706781600.0),
        ("Thu, 01 Feb 2024 11:00:00 +0100", 1706781600.0),
        ("2024-02-01T10:00:00Z", 1706781600.0),
        ("soon", None),
        (None, None),
    ],
)
def test_feed_dates(text: str | None, expected: float | None) -> None:
    assert parse_feed_date(text) == expected


@pytest.mark.parametrize(
    ("media", "head", "expected"),
    [
        ("application/rss+xml", b"", True),
        ("application/atom+xml", b"", True),
        ("application/xml", b"<?xml version='1.0'?><rss version='2.0'>", True),
        ("text/xml", b"<feed xmlns='http://www.w3.org/2005/Atom'>", True),
        ("application/xml", b"<urlset>", False),
    ],
)
def test_handler_accepts(media: str, head: bytes, expected: bool) -> None:
    assert FEED_HANDLER.accepts(media, head) is expected
