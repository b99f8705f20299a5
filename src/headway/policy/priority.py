"""URL priority and crawler-trap heuristics (pure).

Contract:

- ``priority_for(depth)`` is the depth-only priority (``--priority depth``): the depth.
- ``quality_priority(depth, ...)`` is the default priority (``--priority quality``), an
  integer, lower is fetched sooner and shed later::

      priority = DEPTH_STEP * depth
               + NEAR_DUP_PENALTY                       if the linking page is a near-duplicate
               + round(QUALITY_PENALTY * (1 - q))       q = quality of the worse of the
                                                          linking and the linked host
               - min(INLINK_BONUS_MAX, round(INLINK_STEP * log2(1 + n)))
                                                          n = distinct other hosts seen
                                                          linking to the linked host
               - lastmod_bonus(age)                     age = seconds since the <lastmod>
                                                          (or feed date) a sitemap or feed
                                                          gave the link, when it gave one
      clamped at 0.

  One level of depth is worth ``DEPTH_STEP`` = 10 points, a near-duplicate source 10
  (a link from a near-duplicate page waits as if it were one level deeper), the worst
  host quality 20, and in-link evidence at most 6 (a host linked from 7 other hosts
  gains 6 points). Host quality and in-link counts come from ``policy.quality``.
- ``lastmod_bonus(age)``: ``round(LASTMOD_BONUS * (1 - age / LASTMOD_HORIZON))`` for an
  age between 0 and ``LASTMOD_HORIZON`` (90 days), else 0: a page a sitemap says changed
  today gains 5 points (half a level of depth), one unchanged for 90 days or more none.
  A date in the future counts as today.
- ``quality_gap(q, gap_max)``: extra seconds between two requests to a host whose
  quality ``q`` is below ``POOR_BELOW``: ``gap_max * (POOR_BELOW - q) / POOR_BELOW``, else
  0. Priority orders the URLs within a host (and decides what is shed); across hosts the
  scheduler serves whichever host politeness allows next, so this gap is how a poor host
  gives way to good ones.
- ``looks_like_trap(url)`` flags URLs that are very likely generated without end
  (repeating path segments, very deep or very long URLs, calendars paging into far
  years); such URLs are shed at admission.
"""

from __future__ import annotations

import math
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


DEPTH_STEP = 10
NEAR_DUP_PENALTY = 10
QUALITY_PENALTY = 20
INLINK_STEP = 2.0
INLINK_BONUS_MAX = 6
POOR_BELOW = 0.5
LASTMOD_BONUS = 5
LASTMOD_HORIZON = 90 * 86400.0


def priority_for(depth: int) -> int:
    """Depth-only frontier priority of a URL found ``depth`` links away from a seed."""
    return max(0, depth)


def lastmod_bonus(age: float) -> int:
    """Points a link gains when a sitemap or feed says it changed ``age`` seconds ago."""
    if age >= LASTMOD_HORIZON:
        return 0
    return round(LASTMOD_BONUS * (1.0 - max(0.0, age) / LASTMOD_HORIZON))


def quality_priority(
    depth: int,
    *,
    near_dup: bool = False,
    quality: float = 1.0,
    inlink_hosts: int = 0,
    lastmod_age: float | None = None,
) -> int:
    """The default frontier priority (see the module contract)."""
    score = DEPTH_STEP * max(0, depth)
    if lastmod_age is not None:
        score -= lastmod_bonus(lastmod_age)
    if near_dup:
        score += NEAR_DUP_PENALTY
    score += round(QUALITY_PENALTY * (1.0 - min(1.0, max(0.0, quality))))
    if inlink_hosts > 0:
        score -= min(INLINK_BONUS_MAX, round(INLINK_STEP * math.log2(1 + inlink_hosts)))
    return max(0, score)


def quality_gap(quality: float, gap_max: float) -> float:
    """Extra seconds between requests to a host of this quality (see the contract)."""
    if quality >= POOR_BELOW or gap_max <= 0:
        return 0.0
    return gap_max * (POOR_BELOW - max(0.0, quality)) / POOR_BELOW


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
