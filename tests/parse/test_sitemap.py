"""parse_sitemap and the sitemap handler: table tests."""

from __future__ import annotations

import gzip

import pytest

from headway.parse.page import LinkHint
from headway.parse.sitemap import SITEMAP_HANDLER, parse_sitemap, parse_w3c_datetime
from headway.parse.xmldoc import XmlLimits

NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
SM = "http://a.test/sitemap.xml"


def urlset(*entries: str) -> bytes:
    return (
        f'<?xml version="1.0" encoding="UTF-8"?><urlset {NS}>{"".join(entries)}</urlset>'.encode()
    )


def url(loc: str, lastmod: str | None = None, freq: str | None = None) -> str:
    extra = f"<lastmod>{lastmod}</lastmod>" if lastmod else ""
    extra += f"<changefreq>{freq}</changefreq>" if freq else ""
    return f"<url><loc>{loc}</loc>{extra}</url>"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2024", 1704067200.0),
        ("2024-02", 1706745600.0),
        ("2024-02-01", 1706745600.0),
        ("2024-02-01T10:00:00+00:00", 1706781600.0),
        ("2024-02-01T10:00:00Z", 1706781600.0),
        ("2024-02-01T12:00:00+02:00", 1706781600.0),
        ("2024-02-01T10:00Z", 1706781600.0),
        (" 2024-02-01 ", 1706745600.0),
        ("yesterday", None),
        ("2024-13-01", None),
        ("", None),
        (None, None),
    ],
)
def test_w3c_datetime(text: str | None, expected: float | None) -> None:
    assert parse_w3c_datetime(text) == expected


def test_urlset_links_and_hints() -> None:
    body = urlset(
        url("http://a.test/one", "2024-02-01", "daily"),
        url("http://a.test/two"),
        url("http://a.test/one"),  # duplicate
        url("/relative", freq="WEEKLY"),
        url("javascript:alert(1)"),
        url("http://a.test/bad-freq", freq="sometimes"),
        "<url></url>",
    )
    page = parse_sitemap(SM, body)
    assert page.refused is None and page.kind == "sitemap"
    assert page.links == (
        "http://a.test/one",
        "http://a.test/two",
        "http://a.test/relative",
        "http://a.test/bad-freq",
    )
    assert page.documents == ()
    assert page.hints == (
        LinkHint("http://a.test/one", 1706745600.0, "daily"),
        LinkHint("http://a.test/relative", None, "weekly"),
    )


def test_index_gives_documents() -> None:
    body = (
        f"<sitemapindex {NS}><sitemap><loc>http://a.test/s1.xml.gz</loc>"
        "<lastmod>2024-02-01</lastmod></sitemap>"
        "<sitemap><loc>http://a.test/s2.xml</loc></sitemap></sitemapindex>"
    ).encode()
    page = parse_sitemap(SM, body)
    assert page.links == ()
    assert page.documents == ("http://a.test/s1.xml.gz", "http://a.test/s2.xml")
    assert page.hints == (LinkHint("http://a.test/s1.xml.gz", 1706745600.0, None),)


def test_gzipped_and_without_namespace() -> None:
    body = gzip.compress(b"<urlset><url><loc>http://a.test/z</loc></url></urlset>")
    assert parse_sitemap(SM, body).links == ("http://a.test/z",)


@pytest.mark.parametrize(
    ("body", "limits", "prefix"),
    [
        (urlset(*(url(f"http://a.test/{i}") for i in range(11))), XmlLimits(max_entries=10),
         "too-many-entries"),
        (urlset(url("http://a.test/x")) + b" " * 600, XmlLimits(max_bytes=500), "too-large"),
        (b"<html><body>no</body></html>", XmlLimits(), "not-a-sitemap"),
        (b'<!DOCTYPE u [<!ENTITY e "x">]><urlset><url><loc>&e;</loc></url></urlset>',
         XmlLimits(), "xml-entities"),
    ],
)  # fmt: skip
def test_refused(body: bytes, limits: XmlLimits, prefix: str) -> None:
    page = parse_sitemap(SM, body, limits=limits)
    assert page.links == () and page.documents == ()
    assert page.refused is not None and page.refused.startswith(prefix), page.refused


def test_protocol_limit_is_50000() -> None:
    at_limit = urlset(*(url(f"http://a.test/{i}") for i in range(50_000)))
    assert len(parse_sitemap(SM, at_limit).links) == 50_000
    over = urlset(*(url(f"http://a.test/{i}") for i in range(50_001)))
    assert (parse_sitemap(SM, over).refused or "").startswith("too-many-entries")


@pytest.mark.parametrize(
    ("media", "head", "expected"),
    [
        ("application/xml", urlset(), True),
        ("text/xml", b"<sitemapindex>", True),
        ("application/x-gzip", gzip.compress(urlset()), True),
        ("application/xml", b"<rss>", False),
        (None, urlset(), True),
    ],
)
def test_handler_accepts(media: str | None, head: bytes, expected: bool) -> None:
    assert SITEMAP_HANDLER.accepts(media, head) is expected
