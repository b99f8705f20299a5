"""The Bloom seen filter: no false negatives, false positives near the target."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from headway.frontier.bloom import BloomFilter

INT64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)


@given(st.lists(INT64, max_size=300), st.integers(min_value=1, max_value=500))
def test_no_false_negatives(fps: list[int], capacity: int) -> None:
    bloom = BloomFilter(capacity, 0.01)
    bloom.add_many(fps[::2])
    for fp in fps[1::2]:
        bloom.add(fp)
    assert all(bloom.contains_many(fps))
    assert all(fp in bloom for fp in fps)


@pytest.mark.parametrize("error", [0.01, 0.001])
def test_false_positive_rate_near_target(error: float) -> None:
    rng = random.Random(42)
    n = 100_000
    bloom = BloomFilter(n, error)
    bloom.add_many(rng.getrandbits(64) - 2**63 for _ in range(n))
    probes = [rng.getrandbits(64) - 2**63 for _ in range(n)]
    rate = sum(bloom.contains_many(probes)) / n
    assert error / 3 < rate < error * 2


def test_empty_filter_contains_nothing_and_memory_is_fixed() -> None:
    bloom = BloomFilter(1_000_000, 0.001)
    assert bloom.contains_many([0, -1, 2**63 - 1, -(2**63)]) == [False] * 4
    assert "not a fingerprint" not in bloom
    # about 1.44 * log2(1/error) bits per item: 14.4 bits -> 1.8 MB for a million
    assert 1_750_000 < bloom.nbytes < 1_850_000
    bloom.add_many(range(10_000))
    assert 1_750_000 < bloom.nbytes < 1_850_000
    assert bloom.probes == 10


@pytest.mark.parametrize(("capacity", "error"), [(0, 0.01), (10, 0.0), (10, 1.0)])
def test_rejects_bad_sizing(capacity: int, error: float) -> None:
    with pytest.raises(ValueError):
        BloomFilter(capacity, error)


@pytest.mark.parametrize(
    ("seen", "most", "expected"),
    [
        (0, 10_000_000, 65_536),
        (510, 10_000_000, 65_536),
        (65_536, 10_000_000, 65_536),
        (65_537, 10_000_000, 65_536 * 16),
        (2_000_000, 10_000_000, 10_000_000),  # never past the configured capacity
        (50_000_000, 10_000_000, 10_000_000),
        (10, 1000, 1000),  # a configured capacity below the start
    ],
)
def test_capacity_for_the_seen_set(seen: int, most: int, expected: int) -> None:
    from headway.frontier.bloom import capacity_for

    assert capacity_for(seen, most) == expected
