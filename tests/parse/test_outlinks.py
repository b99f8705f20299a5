"""The outlinks output of one page: links as written, anchor text, rel, canonical,
hreflang and meta robots; collected only when asked."""

from __future__ import annotations

from headway.parse.page import Outlink, parse_page

PAGE = b"""<html><head>
<link rel="canonical" href="/news/story">
<link rel="alternate" hreflang="de" href="https://example.de/nachricht">
<link rel="alternate" hreflang="x-default" href="/news/story">
<meta name="robots" content="index, follow, noai">
</head><body>
<a href="/a">First   <b>link</b></a>
<a href="/a" rel="nofollow sponsored">again</a>
<a href="javascript:void(0)">js</a>
<map><area href="/map" alt="Map area"></map>
</body></html>"""


def test_outlinks_as_written() -> None:
    found = parse_page("https://example.com/news/story?x=1", PAGE, outlinks=True).outlinks
    assert found is not None
    assert found.links == (
        Outlink("/a", "https://example.com/a", "First link", None),
        Outlink("/a", "https://example.com/a", "again", "nofollow sponsored"),
        Outlink("javascript:void(0)", None, "js", None),
        Outlink("/map", "https://example.com/map", "Map area", None),
    )
    assert found.canonical == "https://example.com/news/story"
    assert found.hreflang == (
        ("de", "https://example.de/nachricht"),
        ("x-default", "https://example.com/news/story"),
    )
    assert found.meta_robots == ("index, follow, noai",)


def test_not_collected_unless_asked_and_bounded_by_max_links() -> None:
    assert parse_page("https://example.com/", PAGE).outlinks is None
    many = b"<body>" + b"".join(b'<a href="/p%d">%d</a>' % (i, i) for i in range(500))
    found = parse_page("https://example.com/", many, outlinks=True, max_links=100).outlinks
    assert found is not None and len(found.links) == 100


def test_a_page_of_100000_links_is_bounded() -> None:
    import time

    html = ("<body>" + "".join(f'<a href="/p{i}">link {i}</a> ' for i in range(100_000))).encode()
    started = time.process_time()
    found = parse_page("https://example.com/", html, outlinks=True).outlinks
    assert found is not None and len(found.links) == 10_000  # max_links
    assert time.process_time() - started < 3.0
