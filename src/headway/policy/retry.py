"""Retry decisions for failed fetches (pure).

Contract: ``retry_delay`` says whether a URL whose fetch ended in ``outcome`` is fetched
again and after how long: only outcomes in ``RETRYABLE``, at most ``params.budget``
retries, with full-jitter exponential backoff, never sooner than the site's Retry-After.
The retry then passes the same per-host admission as a first attempt.
"""

from __future__ import annotations

from dataclasses import dataclass

from headway.policy.outcome import Outcome


@dataclass(frozen=True, slots=True)
class RetryParams:
    budget: int = 3  # retries per URL (so at most budget + 1 fetches)
    base: float = 2.0  # seconds; the first retry waits up to base
    cap: float = 600.0  # no backoff step exceeds this (Retry-After may)


#: Outcomes worth another attempt: the failure is likely transient.
RETRYABLE: frozenset[Outcome] = frozenset(
    {
        Outcome.THROTTLED,
        Outcome.UNAVAILABLE,
        Outcome.SERVER_ERROR,
        Outcome.TIMEOUT,
        Outcome.CONNECTION_ERROR,
        Outcome.DNS_ERROR,
        Outcome.RETRYABLE_CLIENT,
    }
)

# 2.0**62 already dwarfs any cap; bounding the exponent keeps the float finite.
_MAX_EXPONENT = 62


def retry_delay(
    outcome: Outcome,
    attempts: int,
    params: RetryParams,
    rand: float,
    retry_after: float | None = None,
) -> float | None:
    """Seconds to wait before fetching the URL again, or None for "do not retry".

    ``attempts`` is how many fetches of the URL already happened (>= 1); ``rand`` is a
    uniform draw in [0, 1) supplied by the caller (kept outside for determinism).
    """
    if outcome not in RETRYABLE or attempts < 1 or attempts > params.budget:
        return None
    step = min(params.cap, params.base * 2.0 ** min(attempts - 1, _MAX_EXPONENT))
    delay = min(max(rand, 0.0), 1.0) * step
    if retry_after is not None and retry_after > delay:
        return retry_after
    return delay
