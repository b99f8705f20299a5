"""parse_page, is_html, ParseTask / parse_task."""

from __future__ import annotations

import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from headway.parse.page import (
    MAX_HREF_CHARS,
    ParsedPage,
    ParseTask,
    is_html,
    parse_page,
    parse_task,
)
from headway.urls.canonical import CanonOptions

PAGE = "http://example.com/dir/page.html"


def parse(html: str, **kwargs: object) -> ParsedPage:
    return parse_page(PAGE, html.encode(), **kwargs)  # type: ignore[arg-type]


# --- links ---------------------------------------------------------------------------


def test_links_resolved_canonical_deduped_in_order() -> None:
    page = parse(
        "<a href='b.html#top'>1</a><a href=/a?z=1&utm_source=x&a=2>2</a>"
        "<map><area href='b.html'></map><a href='HTTP://Example.COM:80/c'>3</a>"
        "<a href='javascript:void(0)'>js</a><a href='mailto:x@example.com'>m</a>"
        "<a href='data:text/html,hi'>d</a><a href='tel:+1'>t</a><a href='http://[bad/'>x</a>"
    )
    assert page.links == (
        "http://example.com/dir/b.html",
        "http://example.com/a?a=2&z=1",
        "http://example.com/c",
    )
    assert page.hrefs_seen == 9
    assert page.nofollow_skipped == 0


def test_base_href_applies_to_links_before_and_after_it() -> None:
    page = parse(
        "<html><head><title>t</title></head><body><a href=x>x</a>"
        "<base href='/other/'><base href='http://ignored.example/'><a href=y>y</a>"
    )
    assert page.base_href == "http://example.com/other/"
    assert page.links == ("http://example.com/other/x", "http://example.com/other/y")


@pytest.mark.parametrize(
    ("html", "expected_base"),
    [
        ("<base target=_blank><base href='//cdn.example.net/'>", "http://cdn.example.net/"),
        ("<base href='javascript:alert(1)'><a href=x>", None),
        ("<script>document.write('<base href=http://evil.example/>')</script>", None),
        ("<noscript><base href='http://evil.example/'></noscript>", None),
        ("<!-- <base href='http://evil.example/'> -->", None),
    ],
)
def test_base_href(html: str, expected_base: str | None) -> None:
    assert parse(html).base_href == expected_base


@pytest.mark.parametrize(
    ("rel", "followed"),
    [
        ("nofollow", False),
        ("NoFollow", False),
        ("external nofollow noopener", False),
        ("\tnofollow\n", False),
        ("nofollowed", True),
        ("noopener", True),
        ("", True),
    ],
)
def test_rel_nofollow(rel: str, followed: bool) -> None:
    page = parse(f"<a href=/kept>k</a><a href=/target rel='{rel}'>t</a>")
    assert ("http://example.com/target" in page.links) is followed
    assert page.nofollow_skipped == (0 if followed else 1)
    assert page.hrefs_seen == 2


def test_url_linked_both_ways_is_followed_not_skipped() -> None:
    page = parse("<a href=/t rel=nofollow>1</a><a href=/t>2</a><a href=/u rel=nofollow>")
    assert page.links == ("http://example.com/t",)
    assert page.nofollow_skipped == 1


def test_noscript_links_collected_in_place_but_not_its_meta() -> None:
    page = parse(
        "<a href=/one>1</a><noscript><a href='/two?a=1&amp;b=2'>2</a>"
        "<a href=/nf rel=nofollow>n</a><meta name=robots content=nofollow></noscript>"
        "<a href=/three>3</a>"
    )
    assert page.links == (
        "http://example.com/one",
        "http://example.com/two?a=1&b=2",
        "http://example.com/three",
    )
    assert not page.nofollow
    assert page.nofollow_skipped == 1


def test_links_in_script_and_comments_are_not_links() -> None:
    page = parse("<script>var a = '<a href=/s>';</script><!-- <a href=/c> --><a href=/real>")
    assert page.links == ("http://example.com/real",)
    assert page.hrefs_seen == 1


def test_max_links_caps_result() -> None:
    html = "".join(f"<a href=/p{i}>" for i in range(50))
    page = parse(html, max_links=10)
    assert page.links == tuple(f"http://example.com/p{i}" for i in range(10))
    assert page.hrefs_seen == 50


def test_canon_options_are_used() -> None:
    options = CanonOptions(strip_params=frozenset({"sid"}), strip_prefixes=(), sort_query=False)
    page = parse("<a href='/x?z=1&sid=9&utm_source=a'>", options=options)
    assert page.links == ("http://example.com/x?z=1&utm_source=a",)


# --- meta refresh ----------------------------------------------------------------------


def test_meta_refresh_is_a_link_resolved_against_base() -> None:
    page = parse(
        "<head><base href='http://example.com/b/'>"
        "<meta http-equiv=Refresh content='0; url=next.html#x'></head><a href=/z>"
    )
    assert page.meta_refresh == "http://example.com/b/next.html"
    assert page.links == ("http://example.com/b/next.html", "http://example.com/z")
    assert page.hrefs_seen == 1


@pytest.mark.parametrize(
    "html",
    [
        "<meta http-equiv=refresh content=5>",
        "<meta http-equiv=refresh content='5; url=javascript:alert(1)'>",
        "<meta name=refresh content='0; url=/x'>",
        "<noscript><meta http-equiv=refresh content='0; url=/x'></noscript>",
    ],
)
def test_no_meta_refresh(html: str) -> None:
    page = parse(html)
    assert page.meta_refresh is None
    assert page.links == ()


# --- robots directives -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("html", "header", "noindex", "nofollow"),
    [
        ("<meta name=robots content=noindex>", None, True, False),
        ("<meta name=ROBOTS content='NOFOLLOW'>", None, False, True),
        ("<meta name=robots content=none>", None, True, True),
        ("<meta name=headway content='noindex, nofollow'>", None, True, True),
        ("<meta name=googlebot content='noindex, nofollow'>", None, False, False),
        (
            "<meta name=robots content=noindex><meta name=headway content=nofollow>",
            None,
            True,
            True,
        ),
        ("<meta name=robots content='index, follow'>", None, False, False),
        ("<p>", "noindex", True, False),
        ("<p>", "googlebot: nofollow", False, False),
        ("<p>", "headway: nofollow", False, True),
        ("<meta name=robots content=noindex>", "nofollow", True, True),
    ],
)
def test_robots_directives(html: str, header: str | None, noindex: bool, nofollow: bool) -> None:
    page = parse(html + "<a href=/x>", x_robots_tag=header)
    assert (page.noindex, page.nofollow) == (noindex, nofollow)
    assert page.links == (() if nofollow else ("http://example.com/x",))
    assert page.nofollow_skipped == (1 if nofollow else 0)


def test_robots_token_is_configurable() -> None:
    page = parse("<meta name=MyBot content=nofollow><a href=/x>", robots_token="mybot")
    assert page.nofollow
    assert page.links == ()


def test_page_nofollow_counts_every_link_once() -> None:
    page = parse(
        "<meta name=robots content=nofollow><meta http-equiv=refresh content='1;url=/r'>"
        "<a href=/a>a</a><a href=/a#b>a</a><a href=/b rel=nofollow>b</a>"
    )
    assert page.links == ()
    assert page.meta_refresh == "http://example.com/r"
    assert page.nofollow_skipped == 3


# --- charset, title, robustness --------------------------------------------------------


def test_cp1252_page() -> None:
    body = "<title>Café “menu”</title><a href='/café'>".encode("cp1252")
    page = parse_page(PAGE, body, content_type="text/html; charset=ISO-8859-1")
    assert page.charset == "cp1252"
    assert page.title == "Café “menu”"
    assert page.links == ("http://example.com/caf%C3%A9",)


def test_shift_jis_page_by_meta() -> None:
    body = '<meta charset="Shift_JIS"><title>日本語</title><a href="/日本">'.encode("shift_jis")
    page = parse_page(PAGE, body)
    assert page.charset == "cp932"
    assert page.title == "日本語"
    assert page.links == ("http://example.com/%E6%97%A5%E6%9C%AC",)


def test_utf16_page_with_bom() -> None:
    body = "\ufeff<title>hé</title><a href=/x>".encode("utf-16-le")
    page = parse_page(PAGE, body, content_type="text/html; charset=iso-8859-1")
    assert page.charset == "utf-16-le"
    assert (page.title, page.links) == ("hé", ("http://example.com/x",))


def test_title_whitespace_collapsed_and_capped() -> None:
    assert parse("<title>\n  a \t b\n</title>").title == "a b"
    assert parse("<title> </title>").title is None
    long_title = parse("<title>" + "x" * 5000 + "</title>").title
    assert long_title is not None and len(long_title) == 1024


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"   \n\t ",
        b"\x00\x00\x00",
        b"\xff\xfe\xfd\xfc<a href=/x>",
        b"<a href=",
        b"<<<<>>>>",
        b"<a href='/x'><<</a></b></table></html><html><a href=/y",
        b"<meta http-equiv=refresh content='0; url=",
        b"<svg><a href=/svg></a></svg><math><mi>",
    ],
)
def test_bad_input_never_raises(body: bytes) -> None:
    page = parse_page(PAGE, body, x_robots_tag="noindex")
    assert isinstance(page, ParsedPage)
    assert page.noindex  # header directives are kept even for an empty or broken page


def test_empty_body_is_empty_page() -> None:
    page = parse_page(PAGE, b"")
    assert page == ParsedPage((), 0, False, False, None, None, "utf-8", None, 0)


def test_broken_html_still_yields_links() -> None:
    page = parse_page(PAGE, b"<table><a href=/one><tr><td><a href='/two'>x</table><a href=/th")
    assert page.links == ("http://example.com/one", "http://example.com/two")


def test_huge_attribute_values() -> None:
    huge = "a" * (MAX_HREF_CHARS + 1)
    html = (
        f"<a href='/{huge}'>big</a><a href=/ok title='{'t' * 1_000_000}'>ok</a>"
        f"<meta name=robots content='{'x, ' * 100_000}nofollow'><title>{'z' * 100_000}</title>"
    )
    page = parse(html)
    assert page.hrefs_seen == 2
    assert page.nofollow
    assert page.nofollow_skipped == 1  # /ok; the oversized href is dropped, not counted
    assert page.title is not None and len(page.title) == 1024


def test_bad_page_url_does_not_raise() -> None:
    page = parse_page("not a url", b"<a href=/x><a href='http://example.org/y'>")
    assert page.links == ()
    page = parse_page("", b"<a href=/x><a href='http://example.org/y'>")
    assert page.links == ("http://example.org/y",)


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=600) | st.text(max_size=300).map(str.encode))
def test_never_raises_on_arbitrary_bytes(body: bytes) -> None:
    page = parse_page(PAGE, b"<a href=/" + body, content_type=None)
    assert all(link.startswith(("http://", "https://")) for link in page.links)
    assert len(page.links) <= page.hrefs_seen + 1


# --- is_html ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content_type", "head", "expected"),
    [
        ("text/html", b"", True),
        ("TEXT/HTML; charset=utf-8", b"", True),
        ("application/xhtml+xml", b"", True),
        ("text/plain", b"<!doctype html>", False),
        ("application/json", b"<html>", False),
        ("image/png", b"\x89PNG", False),
        (None, b"  <!DOCTYPE HTML><html>", True),
        (None, b"<?xml version='1.0'?>\n<HTML lang=en>", True),
        ("", b"<html>", True),
        (None, b"%PDF-1.7", False),
        (None, b" " * 1100 + b"<html>", False),
        (None, b"", False),
    ],
)
def test_is_html(content_type: str | None, head: bytes, expected: bool) -> None:
    assert is_html(content_type, head) is expected


# --- process-pool task -----------------------------------------------------------------


def test_parse_task_and_result_pickle_round_trip() -> None:
    task = ParseTask(
        url=PAGE,
        body=b"<title>t</title><a href=/x>",
        content_type="text/html",
        x_robots_tag="noindex",
        robots_token="headway",
        options=CanonOptions(sort_query=False),
        max_links=5,
    )
    task_copy = pickle.loads(pickle.dumps(task))
    assert task_copy == task
    result = parse_task(task_copy)
    assert result.links == ("http://example.com/x",)
    assert result.noindex
    result_copy = pickle.loads(pickle.dumps(result))
    assert result_copy == result
    assert result_copy.title == "t"


def test_parse_task_in_process_pool() -> None:
    from concurrent.futures import ProcessPoolExecutor

    tasks = [ParseTask(url=PAGE, body=f"<a href=/p{i}>".encode()) for i in range(3)]
    with ProcessPoolExecutor(max_workers=1) as pool:
        results = list(pool.map(parse_task, tasks, timeout=30))
    assert [r.links for r in results] == [(f"http://example.com/p{i}",) for i in range(3)]


def test_credentials_in_links_removed_and_counted() -> None:
    body = (
        b'<a href="http://user:secret@a.example/x">1</a>'
        b'<a href="//bob@b.example/">2</a><a href="/c">3</a>'
    )
    page = parse_page("https://site.example/", body, content_type="text/html")
    assert page.links == ("http://a.example/x", "https://b.example/", "https://site.example/c")
    assert page.credentials_stripped == 2
    assert "secret" not in repr(page)
