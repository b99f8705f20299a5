"""URL priority and crawler-trap heuristics (pure).

Contract: ``priority_for(depth)`` is the frontier priority of a URL (lower is fetched
sooner; the default order is by depth, shallow first). ``looks_like_trap(url)`` flags
URLs that are very likely generated without end (repeating path segments, very deep or
very long URLs, calendars paging into far years); such URLs are shed at admission.
"""

from __future__ import annotations

import re
from collections import Counter
from urllib.parse import urlsplit

MAX_URL_LENGTH = 1000
MAX_PATH_DEPTH = 15
MAX_SEGMENT_REPEATS = 2
#: Without a known current year, calendar years outside this window count as far.
DEFAULT_YEAR_WINDOW = (1990, 2040)
#: With ``current_year``: years more than this far back or ahead count as far.
YEARS_BACK = 40
YEARS_AHEAD = 3

# A year followed by a month (and optionally a day), separated by "/" or "-". Only years
# 1800-2999 read as calendar years, which keeps most numeric ids ("/item/1234/5") out.
_CALENDAR_RE = re.compile(r"(?<!\d)(1[89]\d\d|2\d{3})[/-](\d{1,2})(?:[/-](\d{1,2}))?(?!\d)")


def priority_for(depth: int) -> int:
    """Frontier priority of a URL found ``depth`` links away from a seed."""
    return max(0, depth)


def looks_like_trap(url: str, *, current_year: int | None = None) -> bool:
    """True when ``url`` looks machine-generated without end (see module docstring)."""
    if len(url) > MAX_URL_LENGTH:
        return True
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    segments = [s for s in parts.path.split("/") if s]
    if len(segments) > MAX_PATH_DEPTH:
        return True
    if segments and Counter(segments).most_common(1)[0][1] > MAX_SEGMENT_REPEATS:
        return True
    return _far_calendar(f"{parts.path}?{parts.query}", current_year)


def _far_calendar(text: str, current_year: int | None) -> bool:
    if current_year is None:
        low, high = DEFAULT_YEAR_WINDOW
    else:
        low, high = current_year - YEARS_BACK, current_year + YEARS_AHEAD
    for match in _CALENDAR_RE.finditer(text):
        year, month = int(match.group(1)), int(match.group(2))
        day = match.group(3)
        if not 1 <= month <= 12 or (day is not None and not 1 <= int(day) <= 31):
            continue
        if not low <= year <= high:
            return True
    return False
