"""Retry-After (RFC 9110 section 10.2.3): turn the header value into seconds to wait.

Contract: ``parse_retry_after(value, now)`` returns seconds (>= 0, at most
``max_seconds``) for a delta-seconds value or an HTTP-date, and None for a missing or
malformed value. ``now`` is a Unix timestamp (the clock HTTP-dates are measured on).
"""

from __future__ import annotations

import math
from datetime import UTC
from email.utils import parsedate_to_datetime

#: Digits of a delta-seconds value read as a number; a longer one (over 30,000 years)
#: is the cap.
_DIGITS = 12


def parse_retry_after(value: str | None, now: float, max_seconds: float = 86400.0) -> float | None:
    """Seconds to wait before the next request, or None when ``value`` is unusable."""
    if value is None:
        return None
    text = value.strip()
    if not text:
        return None
    if text.isascii() and text.isdigit():  # delta-seconds = 1*DIGIT
        if len(text.lstrip("0")) > _DIGITS:  # past any cap: float() of it would overflow,
            return max_seconds  # and int() refuses past 4,300 digits
        return min(float(int(text)), max_seconds)
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when.tzinfo is None:  # "-0000" and obsolete zones: the date is still UTC
        when = when.replace(tzinfo=UTC)
    try:
        wait = when.timestamp() - now
    except (OverflowError, ValueError):
        return None
    if math.isnan(wait):
        return None
    return min(max(0.0, wait), max_seconds)
