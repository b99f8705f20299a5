"""The text of a page for the text output: modes, layout, and the bounds a hostile page
cannot push (deep nesting, a 10 MB text node, 100,000 links)."""

from __future__ import annotations

import time

import pytest

from headway.errors import TextRefused
from headway.parse.page import parse_page
from headway.parse.text import MAX_DEPTH, MAX_TEXT_CHARS, extract_text

ARTICLE = (
    "<html><head><title>T</title></head><body>"
    "<nav><a href=/>Home</a> <a href=/news>News</a> <a href=/about>About us</a></nav>"
    "<div class=cookie-banner>We use cookies to improve your experience. Accept all</div>"
    "<article><h1>The river rose overnight</h1>"
    "<p>The river rose by two metres overnight and flooded the lower town, where "
    "residents had been told to leave their homes before the storm reached the hills.</p>"
    "<p>By the morning the water had reached the market square, and the council opened "
    "the school hall to families who had nowhere else to go for the coming nights.</p>"
    "</article><footer>Copyright 2024 The Daily Example. All rights reserved.</footer>"
    "</body></html>"
)


def test_main_content_keeps_heading_and_paragraphs_and_drops_the_rest() -> None:
    text = extract_text(ARTICLE, "main")
    blocks = text.split("\n\n")
    assert blocks[0] == "The river rose overnight"
    assert blocks[1].startswith("The river rose by two metres")
    assert blocks[2].startswith("By the morning")
    for chrome in ("Home", "About us", "cookies", "Copyright"):
        assert chrome not in text


def test_all_text_keeps_everything_visible() -> None:
    text = extract_text(ARTICLE, "all")
    for part in ("Home", "We use cookies", "The river rose overnight", "Copyright 2024"):
        assert part in text


def test_page_parse_returns_text_and_language_only_when_asked() -> None:
    plain = parse_page("https://example.com/a", ARTICLE.encode())
    assert plain.text is None and plain.languages == ()
    page = parse_page("https://example.com/a", ARTICLE.encode(), text_mode="main")
    assert page.text is not None and page.text.startswith("The river rose overnight")
    assert page.languages[0] == "eng"
    assert page.links == plain.links and page.simhash == plain.simhash


def _timed(mode: str, html: str) -> tuple[str | None, str | None, float]:
    started = time.process_time()
    page = parse_page("https://example.com/x", html.encode(), text_mode=mode)  # type: ignore[arg-type]
    return page.text, page.text_error, time.process_time() - started


@pytest.mark.parametrize("mode", ["main", "all"])
def test_deep_nesting_is_refused_in_bounded_time(mode: str) -> None:
    # 5,000 levels: main-content extraction would take about 0.3 s, 100,000 minutes (its
    # cost is the square of the depth); the depth check refuses it at once
    depth = 5_000
    html = "<html><body>" + "<div>" * depth + "deep" + "</div>" * depth + "</body></html>"
    text, error, seconds = _timed(mode, html)
    assert text is None
    assert error == f"nested deeper than {MAX_DEPTH} elements"
    with pytest.raises(TextRefused):
        extract_text(html, mode)  # type: ignore[arg-type]
    assert seconds < 1.0


def test_nesting_within_the_bound_is_extracted() -> None:
    depth = MAX_DEPTH - 10
    html = "<html><body>" + "<div>" * depth + "<p>within</p>" + "</div>" * depth
    assert extract_text(html, "all") == "within"


def test_a_10_mb_text_node_is_cut() -> None:
    html = "<html><body><p>" + "word " * 2_000_000 + "</p></body></html>"
    started = time.process_time()
    text = extract_text(html, "main")
    assert len(text) == MAX_TEXT_CHARS
    assert time.process_time() - started < 3.0


def test_a_page_of_100000_links_is_bounded() -> None:
    html = "<html><body>" + "".join(f'<a href="/p{i}">link {i}</a> ' for i in range(100_000))
    for mode in ("main", "all"):
        started = time.process_time()
        text = extract_text(html + "</body></html>", mode)  # type: ignore[arg-type]
        assert len(text) <= MAX_TEXT_CHARS
        assert time.process_time() - started < 3.0
