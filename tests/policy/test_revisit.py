"""The revisit policy: intervals, validators and the capacity rule, on fake time."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from headway.policy.revisit import (
    Capture,
    Change,
    RevisitBounds,
    RevisitState,
    SitemapHint,
    after_fetch,
    conditional_headers,
    decode,
    decode_hint,
    encode,
    encode_hint,
    first_interval,
    next_interval,
    prefer_revisits,
)

B = RevisitBounds(2.0, 32.0)
NOW = 1_700_000_000.0
CAP = Capture("http://a.test/", "2023-11-14T22:13:20Z", "<urn:uuid:1>")


def fetch(prev: RevisitState | None, *, digest: str = "sha1:A", not_modified: bool = False,
          etag: str | None = '"e1"', lm: str | None = "Tue, 14 Nov 2023 22:13:20 GMT",
          now: float = NOW) -> tuple[RevisitState, Change]:  # fmt: skip
    return after_fetch(
        prev,
        not_modified=not_modified,
        digest=None if not_modified else digest,
        etag=etag,
        last_modified=lm,
        capture=None if not_modified else CAP,
        bounds=B,
        now=now,
    )


def test_bounds_are_checked() -> None:
    with pytest.raises(ValueError):
        RevisitBounds(0.0, 1.0)
    with pytest.raises(ValueError):
        RevisitBounds(5.0, 1.0)


@pytest.mark.parametrize(
    ("hint", "expected"),
    [
        (None, 8.0),  # sqrt(2 * 32)
        (SitemapHint(changefreq="always"), 2.0),
        (SitemapHint(changefreq="never"), 32.0),
        (SitemapHint(changefreq=" Hourly "), 32.0),
        (SitemapHint(lastmod=NOW - 10), 5.0),
        (SitemapHint(lastmod=NOW - 1), 2.0),
        (SitemapHint(lastmod=NOW + 100), 8.0),  # a date in the future is ignored
        (SitemapHint(changefreq="sometimes"), 8.0),
    ],
)
def test_first_interval(hint: SitemapHint | None, expected: float) -> None:
    assert first_interval(B, NOW, hint) == expected


def test_changed_halves_unchanged_grows_by_half_clamped() -> None:
    assert next_interval(8.0, Change.CHANGED, B) == 4.0
    assert next_interval(8.0, Change.UNCHANGED, B) == 12.0
    assert next_interval(3.0, Change.CHANGED, B) == 2.0
    assert next_interval(30.0, Change.UNCHANGED, B) == 32.0
    assert next_interval(8.0, Change.FIRST, B) == 8.0


def test_a_changing_page_comes_back_sooner_a_stable_one_later() -> None:
    first, change = fetch(None, digest="sha1:A")
    assert change is Change.FIRST and first.interval == 8.0 and first.capture == CAP
    changing, stable = first, first
    for n in range(1, 5):
        changing, c1 = fetch(changing, digest=f"sha1:{n}", now=NOW + n)
        stable, c2 = fetch(stable, not_modified=True, etag=None, lm=None, now=NOW + n)
        assert (c1, c2) == (Change.CHANGED, Change.UNCHANGED)
    assert changing.interval == 2.0 and changing.changes == 4 and changing.revisits == 4
    assert stable.interval == 32.0 and stable.changes == 0 and stable.revisits == 4
    # a 304 keeps the validators, digest and capture of the content it confirms
    assert (stable.etag, stable.digest, stable.capture) == ('"e1"', "sha1:A", CAP)


def test_same_digest_200_is_unchanged_and_replaces_validators() -> None:
    first, _ = fetch(None)
    again, change = fetch(first, etag=None, lm="Wed, 15 Nov 2023 00:00:00 GMT")
    assert change is Change.UNCHANGED and again.interval == 12.0
    assert again.etag is None and again.last_modified == "Wed, 15 Nov 2023 00:00:00 GMT"


def test_conditional_headers() -> None:
    assert conditional_headers(None) == ()
    state, _ = fetch(None)
    assert conditional_headers(state) == (
        ("If-None-Match", '"e1"'),
        ("If-Modified-Since", "Tue, 14 Nov 2023 22:13:20 GMT"),
    )
    bare, _ = fetch(None, etag="  ", lm=None)
    assert conditional_headers(bare) == ()


def test_huge_validators_are_cut() -> None:
    state, _ = fetch(None, etag="x" * 10_000)
    assert state.etag is not None and len(state.etag) == 512


def test_encode_decode_round_trip() -> None:
    state, _ = fetch(None)
    state, _ = fetch(state, digest="sha1:B")
    assert decode(encode(state)) == state
    plain = RevisitState(interval=3.5)
    assert decode(encode(plain)) == plain


@pytest.mark.parametrize(
    "text",
    [None, "", "not json", "[]", '{"i": -1}', '{"i": "nan"}', '{"x": 1}', '{"i": 1, "n": "a"}'],
)
def test_unreadable_state_is_a_first_fetch(text: str | None) -> None:
    assert decode(text) is None


def test_capacity_rule() -> None:
    assert prefer_revisits(0, 0, 0.5)
    assert not prefer_revisits(1, 1, 0.5)
    assert prefer_revisits(1, 2, 0.5)
    assert not prefer_revisits(0, 100, 0.0)
    assert prefer_revisits(100, 100, 1.0)


@given(st.lists(st.booleans(), max_size=60), st.floats(0.01, 1.0), st.floats(1.0, 1000.0))
def test_interval_stays_within_bounds(changes: list[bool], share: float, ratio: float) -> None:
    bounds = RevisitBounds(share, share * ratio)
    interval = first_interval(bounds, NOW)
    for changed in changes:
        interval = next_interval(interval, Change.CHANGED if changed else Change.UNCHANGED, bounds)
        assert bounds.minimum <= interval <= bounds.maximum
        assert math.isfinite(interval)


@given(st.integers(0, 10_000), st.floats(0.0, 1.0))
def test_capacity_rule_keeps_the_share(steps: int, share: float) -> None:
    # with both kinds always ready, following the rule keeps revisits within one fetch
    # of their share
    revisits = 0
    for fetches in range(steps % 500):
        revisits += int(prefer_revisits(revisits, fetches, share))
        assert abs(revisits - share * (fetches + 1)) <= 1.0


def test_hint_round_trip_and_bad_hints() -> None:
    hint = SitemapHint(lastmod=NOW - 5, changefreq="daily")
    assert decode_hint(encode_hint(hint)) == hint
    assert decode_hint(encode_hint(SitemapHint())) == SitemapHint()
    for bad in (None, "", "x", '{"h": 1}', '{"h": [1]}', '{"i": 3}', '{"h": ["nan?", null]}'):
        assert decode_hint(bad) is None
    # a hint is not a revisit state: the URL counts as never fetched
    assert decode(encode_hint(hint)) is None
