"""Retry decisions and Retry-After parsing."""

from __future__ import annotations

import pytest

from headway.policy.outcome import Outcome
from headway.policy.retry import RETRYABLE, RetryParams, retry_delay
from headway.policy.retry_after import parse_retry_after

# 2015-10-21 07:28:00 UTC
T = 1445412480.0


@pytest.mark.parametrize(
    ("value", "now", "expected"),
    [
        (None, T, None),
        ("", T, None),
        ("   ", T, None),
        ("120", T, 120.0),
        (" 0 ", T, 0.0),
        ("86401", T, 86400.0),
        ("99999999999999999999", T, 86400.0),
        # found by the fuzzer (tests/fuzz, retry_after): float() of an integer over 308
        # digits overflows, int() refuses one over 4,300 digits; both are the cap
        ("5" * 400, T, 86400.0),
        ("9" * 5000, T, 86400.0),
        ("0" * 400 + "7", T, 7.0),
        ("-5", T, None),
        ("1.5", T, None),
        ("+3", T, None),
        ("٣", T, None),  # a non-ASCII digit is not delta-seconds
        ("soon", T, None),
        ("Wed, 21 Oct 2015 07:28:00 GMT", T - 100, 100.0),
        ("Wed, 21 Oct 2015 07:28:00 GMT", T + 100, 0.0),  # in the past
        ("Wed, 21 Oct 2015 07:28:00 -0000", T - 5, 5.0),
        ("Wed, 21 Oct 2015 09:28:00 +0200", T - 5, 5.0),
        ("Wednesday, 21-Oct-15 07:28:00 GMT", T - 7, 7.0),  # RFC 850
        ("Wed Oct 21 07:28:00 2015", T - 9, 9.0),  # asctime
        ("Wed, 21 Oct 2099 07:28:00 GMT", T, 86400.0),
        ("Wed, 32 Oct 2015 07:28:00 GMT", T, None),
        ("Wed, 21 Foo 2015 07:28:00 GMT", T, None),
    ],
)
def test_parse_retry_after(value: str | None, now: float, expected: float | None) -> None:
    assert parse_retry_after(value, now) == expected


def test_parse_retry_after_custom_cap() -> None:
    assert parse_retry_after("600", 0.0, max_seconds=60.0) == 60.0


def test_retryable_set() -> None:
    assert {
        Outcome.THROTTLED,
        Outcome.UNAVAILABLE,
        Outcome.SERVER_ERROR,
        Outcome.TIMEOUT,
        Outcome.CONNECTION_ERROR,
        Outcome.DNS_ERROR,
        Outcome.RETRYABLE_CLIENT,
    } == RETRYABLE


PARAMS = RetryParams(budget=3, base=2.0, cap=600.0)


@pytest.mark.parametrize(
    ("outcome", "attempts", "params", "rand", "retry_after", "expected"),
    [
        (Outcome.TIMEOUT, 1, PARAMS, 1.0, None, 2.0),
        (Outcome.TIMEOUT, 2, PARAMS, 1.0, None, 4.0),
        (Outcome.TIMEOUT, 3, PARAMS, 0.5, None, 4.0),
        (Outcome.TIMEOUT, 4, PARAMS, 0.5, None, None),  # budget spent
        (Outcome.TIMEOUT, 0, PARAMS, 0.5, None, None),
        (Outcome.SERVER_ERROR, 1, PARAMS, 0.0, None, 0.0),
        (Outcome.THROTTLED, 1, PARAMS, 0.5, 30.0, 30.0),  # Retry-After wins
        (Outcome.THROTTLED, 3, PARAMS, 1.0, 2.0, 8.0),  # backoff wins
        (Outcome.UNAVAILABLE, 10, RetryParams(budget=20, cap=60.0), 1.0, None, 60.0),
        (Outcome.DNS_ERROR, 50, RetryParams(budget=100, cap=60.0), 0.25, None, 15.0),
        (Outcome.RETRYABLE_CLIENT, 1, PARAMS, 1.0, None, 2.0),
        (Outcome.CONNECTION_ERROR, 1, RetryParams(budget=0), 1.0, None, None),
        (Outcome.CLIENT_ERROR, 1, PARAMS, 1.0, None, None),
        (Outcome.TLS_ERROR, 1, PARAMS, 1.0, None, None),
        (Outcome.BLOCKED_ADDRESS, 1, PARAMS, 1.0, None, None),
        (Outcome.INVALID_RESPONSE, 1, PARAMS, 1.0, None, None),
        (Outcome.OK, 1, PARAMS, 1.0, None, None),
        (Outcome.REDIRECT, 1, PARAMS, 1.0, 10.0, None),
        (Outcome.NOT_MODIFIED, 1, PARAMS, 1.0, None, None),
    ],
)
def test_retry_delay(
    outcome: Outcome,
    attempts: int,
    params: RetryParams,
    rand: float,
    retry_after: float | None,
    expected: float | None,
) -> None:
    assert retry_delay(outcome, attempts, params, rand, retry_after) == expected


def test_budget_allows_exactly_budget_retries() -> None:
    decisions = [retry_delay(Outcome.TIMEOUT, n, PARAMS, 0.5) for n in range(1, 10)]
    assert [d is not None for d in decisions] == [True] * 3 + [False] * 6
