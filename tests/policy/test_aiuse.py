"""AI-use signals from each source, merged, and what they reserve."""

from __future__ import annotations

import pytest

from headway.parse.page import parse_page
from headway.policy.aiuse import (
    NO_SIGNALS,
    AiSignals,
    content_signal_of,
    merge,
    page_signals,
    parse_content_signal,
    reserved,
    tdm_reservation,
)
from headway.policy.robots import robots_from_response, robots_from_state, robots_state

UA = "headway/0.1 (+https://example.org/bot)"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("search=yes, ai-train=no", AiSignals(ai_train="no", search="yes")),
        ("ai-input=no,ai-train=yes", AiSignals(ai_train="yes", ai_input="no")),
        ("AI-Train=NO", AiSignals(ai_train="no")),
        ("ai-train=no, ai-train=yes", AiSignals(ai_train="no")),  # the stricter wins
        ("ai-train=maybe, other=no, search", NO_SIGNALS),
        ("", NO_SIGNALS),
        (None, NO_SIGNALS),
    ],
)
def test_content_signal_values(value: str | None, expected: AiSignals) -> None:
    assert parse_content_signal(value) == expected


ROBOTS = """# Content signals: search=yes means ...
Content-Signal: search=yes
User-agent: *
Content-Signal: ai-train=no
Disallow: /private/

User-agent: headway
User-agent: otherbot
Content-Signal: ai-input=no
Allow: /
"""


def test_robots_groups_choose_the_lines() -> None:
    # our own group wins over *, the lines before any group apply to all
    assert content_signal_of(ROBOTS, "headway") == "search=yes,ai-input=no"
    assert content_signal_of(ROBOTS, "somebot") == "search=yes,ai-train=no"
    assert content_signal_of("User-agent: *\nDisallow: /x\n", "headway") is None


def test_robots_rules_carry_the_signal_and_keep_it_when_saved() -> None:
    body = b"User-agent: *\nContent-Signal: ai-train=no, search=yes\nDisallow: /private/\n"
    rules = robots_from_response(status=200, body=body, user_agent=UA, now=0.0)
    assert rules.content_signal == "ai-train=no, search=yes"
    assert not rules.allowed("/private/a") and rules.allowed("/a")  # access unchanged
    state = robots_state(rules, body)
    assert state is not None
    again = robots_from_state(state, UA)
    assert again is not None and again.content_signal == rules.content_signal


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("1", AiSignals(ai_train="no", ai_input="no")),
        (" 0 ", AiSignals(ai_train="yes", ai_input="yes")),
        ("yes", NO_SIGNALS),
        (None, NO_SIGNALS),
    ],
)
def test_tdm_reservation(value: str | None, expected: AiSignals) -> None:
    assert tdm_reservation(value) == expected


def _page(head: str = "", x_robots: str | None = None) -> AiSignals:
    html = f"<html><head>{head}</head><body><p>text</p></body></html>".encode()
    parsed = parse_page("https://example.org/", html, x_robots_tag=x_robots)
    return page_signals(parsed, tdm_header=None, content_signal=None)


@pytest.mark.parametrize(
    ("head", "x_robots", "expected"),
    [
        ("", None, NO_SIGNALS),
        ('<meta name="robots" content="noai">', None, AiSignals(ai_train="no", ai_input="no")),
        ('<meta name="headway" content="index, NoAI">', None, AiSignals("no", "no")),
        ('<meta name="otherbot" content="noai">', None, NO_SIGNALS),
        ('<meta name="robots" content="noimageai">', None, NO_SIGNALS),  # images only
        ('<meta name="robots" content="noindex">', None, AiSignals(search="no")),
        ('<meta name="tdm-reservation" content="1">', None, AiSignals("no", "no")),
        ("", "noai", AiSignals(ai_train="no", ai_input="no")),
        ("", "otherbot: noai", NO_SIGNALS),
        ("", "headway: noai, noindex", AiSignals("no", "no", "no")),
    ],
)
def test_page_sources(head: str, x_robots: str | None, expected: AiSignals) -> None:
    assert _page(head, x_robots) == expected


def test_noimageai_is_recorded_by_the_parse() -> None:
    html = b'<html><head><meta name="robots" content="noimageai"></head></html>'
    assert parse_page("https://example.org/", html).noimageai


def test_every_source_merges_and_no_wins() -> None:
    parsed = parse_page("https://example.org/", b"<html><body>x</body></html>")
    got = page_signals(parsed, tdm_header="0", content_signal="ai-train=no, search=yes")
    assert got == AiSignals(ai_train="no", ai_input="yes", search="yes")
    assert merge() == NO_SIGNALS


@pytest.mark.parametrize(
    ("signals", "use", "expected"),
    [
        (AiSignals(ai_train="no"), "ai-train", True),
        (AiSignals(ai_train="no"), "ai-input", False),
        (AiSignals(ai_train="no"), "any", False),
        (AiSignals(ai_input="no"), "ai-input", True),
        (AiSignals(search="no"), "search", True),
        (AiSignals(ai_train="yes"), "ai-train", False),
        (NO_SIGNALS, "ai-train", False),
    ],
)
def test_what_is_reserved(signals: AiSignals, use: str, expected: bool) -> None:
    assert reserved(signals, use) is expected  # type: ignore[arg-type]
