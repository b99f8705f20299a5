"""Priority and crawler-trap heuristics."""

from __future__ import annotations

import pytest

from headway.policy.priority import (
    LASTMOD_HORIZON,
    lastmod_bonus,
    looks_like_trap,
    priority_for,
    quality_priority,
)


@pytest.mark.parametrize(("depth", "priority"), [(0, 0), (1, 1), (7, 7), (-1, 0)])
def test_priority_for(depth: int, priority: int) -> None:
    assert priority_for(depth) == priority


def test_shallower_is_fetched_sooner() -> None:
    assert sorted([3, 0, 2, 1], key=priority_for) == [0, 1, 2, 3]


@pytest.mark.parametrize(
    ("url", "trap"),
    [
        ("https://example.org/", False),
        ("https://example.org/a/b/c/page.html?x=1", False),
        ("https://example.org/a/b/a/b/page", False),  # twice is normal
        ("https://example.org/a/b/a/b/a/b", True),  # a segment three times
        ("https://example.org/x/x/x", True),
        ("https://example.org/" + "/".join(f"d{i}" for i in range(15)), False),
        ("https://example.org/" + "/".join(f"d{i}" for i in range(16)), True),
        ("https://example.org/?q=" + "a" * 990, True),
        ("https://example.org/?q=" + "a" * 900, False),
        ("https://example.org/news/2021/05/17/story", False),
        ("https://example.org/calendar/2023-11", False),
        ("https://example.org/calendar/2187/03", True),
        ("https://example.org/calendar/1850/03/02", True),
        ("https://example.org/events?date=2999-01-01", True),
        ("https://example.org/calendar/2187/13", False),  # not a month
        ("https://example.org/item/1234/5", False),  # an id, not a year
        ("not a url at all", False),
        ("http://[::1", False),
    ],
)
def test_looks_like_trap(url: str, trap: bool) -> None:
    assert looks_like_trap(url) is trap


@pytest.mark.parametrize(
    ("url", "trap"),
    [
        ("https://example.org/cal/2026/01", False),
        ("https://example.org/cal/2029/01", True),
        ("https://example.org/cal/1990/01", False),
        ("https://example.org/cal/1984/01", True),
        ("https://example.org/cal/2000/01", False),
    ],
)
def test_calendar_window_follows_current_year(url: str, trap: bool) -> None:
    assert looks_like_trap(url, current_year=2025) is trap


def test_lastmod_bonus_fades_over_the_horizon() -> None:
    assert lastmod_bonus(0.0) == 5
    assert lastmod_bonus(-3600.0) == 5  # a date in the future counts as today
    assert lastmod_bonus(LASTMOD_HORIZON / 2) in (2, 3)
    assert lastmod_bonus(LASTMOD_HORIZON) == 0
    assert lastmod_bonus(10 * LASTMOD_HORIZON) == 0
    fresh = quality_priority(2, lastmod_age=0.0)
    stale = quality_priority(2, lastmod_age=LASTMOD_HORIZON)
    assert fresh == quality_priority(2) - 5 and stale == quality_priority(2)
