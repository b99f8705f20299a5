"""Conformance of the parse stage against ``html_links.jsonl`` (Scrapy, w3lib, html5lib).

Every case runs through ``parse_page``. Our links are canonical (fragment dropped,
tracking parameters stripped, query sorted, deduplicated), so expectations are compared
after ``canonicalize``. Cases where headway deliberately differs are listed below with
the reason; none is dropped silently.
"""

from __future__ import annotations

from typing import Any

import pytest

from headway.parse.page import ParsedPage, parse_page, parse_tree
from headway.urls.canonical import canonicalize
from tests.conftest import load_conformance

CASES = load_conformance("html_links.jsonl")

#: Page URL for cases that come without one (html5lib tree and tokenizer cases).
DEFAULT_PAGE = "http://example.com/dir/page.html"

#: Cases whose expectation headway deliberately does not follow.
SKIP: dict[str, str] = {
    "html-033": "a <meta> cut off by the end of input: the HTML tokenizer drops a tag that "
    "EOF interrupts, so a browser never sees it; w3lib's regex accepts it",
    "html-038": "repeated http-equiv attribute: the HTML tokenizer keeps the first one (no "
    "value) and drops the later http-equiv=refresh, so a browser does not refresh",
    "html-046": "non-ASCII query on a latin-1 page: WHATWG encodes it in the page encoding "
    "(%B5); headway always encodes as UTF-8 so one link has one canonical form everywhere",
    "html-054": "ignore_tags=[] variant of html-053: headway parses like a browser with "
    "scripting on, where <noscript> content is text, and follows the default variant",
    "html-056": "ignore_tags=[] variant of html-055: a meta refresh written inside a "
    "<script> string is not markup to an HTML parser",
    "html-061": "<isindex action>: an obsolete form control; headway follows only "
    "<a>/<area> href and the meta refresh target",
}

#: Links headway returns beyond the expected ones, in document order after them.
EXTRA_LINKS: dict[str, tuple[list[str], str]] = {
    "html-005": (
        ["http://example.org/photo.jpg"],
        "no filtering by file extension (Scrapy's IGNORED_EXTENSIONS): that is a scope rule",
    ),
}

#: Cases whose expected links are (partly) not http(s), so headway drops them.
DROPPED_LINKS: dict[str, str] = {
    "html-008": "ftp: links: headway fetches http(s) only",
}


def _case_id(index: int, case: dict[str, Any]) -> str:
    return f"{case['kind']}-{case.get('id', index)}"


def _params(kind: str) -> list[Any]:
    params = []
    for index, case in enumerate(CASES):
        if case["kind"] != kind:
            continue
        case_id = case.get("id", str(index))
        marks = [pytest.mark.skip(reason=SKIP[case_id])] if case_id in SKIP else []
        params.append(pytest.param(case, id=_case_id(index, case), marks=marks))
    return params


def _run(case: dict[str, Any]) -> ParsedPage:
    encoding = case.get("encoding") or "utf-8"
    if "html_bytes_hex" in case:
        body = bytes.fromhex(case["html_bytes_hex"])
    else:
        body = case["html"].encode(encoding)
    page_url = case.get("page_url", DEFAULT_PAGE)
    return parse_page(page_url, body, content_type=f"text/html; charset={encoding}")


def _canon_list(urls: list[str], base: str | None = None) -> list[str]:
    found = (canonicalize(url, base) for url in urls)
    return list(dict.fromkeys(url for url in found if url is not None))


def test_every_kind_is_present() -> None:
    kinds = {case["kind"] for case in CASES}
    assert kinds == {
        "extract_links",
        "base_url",
        "meta_refresh",
        "url_attributes",
        "attribute_value",
    }
    assert set(SKIP) | set(EXTRA_LINKS) | set(DROPPED_LINKS) <= {c.get("id") for c in CASES}


@pytest.mark.parametrize("case", _params("extract_links"))
def test_extract_links(case: dict[str, Any]) -> None:
    details = case["expected_link_details"]
    followed = [d["url"] for d in details if not d["nofollow"]]
    expected = _canon_list(followed)
    dropped = [url for url in followed if canonicalize(url) is None]
    assert bool(dropped) == (case["id"] in DROPPED_LINKS), dropped
    expected += EXTRA_LINKS.get(case["id"], ([], ""))[0]
    skipped = set(_canon_list([d["url"] for d in details if d["nofollow"]])) - set(expected)

    result = _run(case)

    assert list(result.links) == expected
    assert result.nofollow_skipped == len(skipped)


@pytest.mark.parametrize("case", _params("base_url"))
def test_base_url(case: dict[str, Any]) -> None:
    page_url = case["page_url"]
    expected_raw = case.get("expected_base_url") or page_url
    expected = canonicalize(expected_raw) if expected_raw else None

    result = _run(case)

    effective = result.base_href or (canonicalize(page_url) if page_url else None)
    assert effective == expected
    if result.base_href is not None:
        assert result.base_href != canonicalize(page_url)  # reported only when it applies


@pytest.mark.parametrize("case", _params("meta_refresh"))
def test_meta_refresh(case: dict[str, Any]) -> None:
    expected = canonicalize(case["expected_url"]) if case.get("expected_url") else None

    result = _run(case)

    assert result.meta_refresh == expected
    if expected is not None:
        assert expected in result.links


@pytest.mark.parametrize("case", _params("url_attributes"))
def test_url_attributes(case: dict[str, Any]) -> None:
    expected = _canon_list(case["expected_unique_link_values"], DEFAULT_PAGE)

    result = _run(case)

    assert list(result.links) == expected


@pytest.mark.parametrize("case", _params("attribute_value"))
def test_attribute_value(case: dict[str, Any]) -> None:
    """The tree parse_page reads decodes attribute values as the HTML tokenizer must."""
    html, tag, attribute = case["html"], case["tag"], case["attribute"]
    nodes = parse_tree(html).css(tag)
    assert nodes, f"no <{tag}> element"
    assert attribute in nodes[0].attributes
    assert (nodes[0].attributes[attribute] or "") == case["expected_value"]

    # Where the case can be written as a link, the href comes out with the same value.
    written = f"<{tag} {attribute}="
    if html.count(written) == 1:
        link_html = html.replace(written, "<a href=", 1)
        result = parse_page(DEFAULT_PAGE, link_html.encode())
        assert list(result.links) == _canon_list([case["expected_value"]], DEFAULT_PAGE)
        assert result.hrefs_seen == 1
