"""Revisit policy (pure): when a fetched page is due again, what a revisit asks the server,
and how new URLs and due revisits share the fetch capacity.

Contract:

- ``RevisitState`` is what the frontier keeps per URL between fetches (as the opaque
  ``validators`` string, see ``encode``/``decode``): the validators of the last answer
  (ETag, Last-Modified), the payload digest of the last content, the current interval,
  counts of revisits and of those that found a change, and the earlier capture a
  ``304`` revisit record refers to.
- ``next_interval`` adapts the interval per URL by multiplicative increase and decrease,
  clamped to ``[revisit_min, revisit_max]``:

      changed:   I' = max(revisit_min, I * DECREASE)      (DECREASE = 1/2)
      unchanged: I' = min(revisit_max, I * INCREASE)      (INCREASE = 3/2)

  The interval is thus a running estimate of the time between changes: it settles where
  a fraction p of revisits find a change with p*ln(DECREASE) + (1-p)*ln(INCREASE) = 0,
  p = ln 1.5 / ln 3 = 0.37. For a page that changes as a Poisson process at rate
  lambda, P(change within I) = 1 - exp(-lambda*I) = 0.37 gives I = 0.46 / lambda.
- The first interval (after the first fetch) is the geometric mean of the bounds, unless
  a sitemap hint says better: ``changefreq`` maps to its period (``CHANGEFREQ_SECONDS``),
  else a ``lastmod`` that is A seconds old gives A / 2; both clamped. A hint travels with
  its URL through the frontier as the URL's validators until the first fetch
  (``encode_hint``/``decode_hint``).
- ``conditional_headers`` are the request headers of a revisit: ``If-None-Match`` from
  the stored ETag, ``If-Modified-Since`` from the stored Last-Modified.
- ``prefer_revisits`` is the capacity rule (see its docstring).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, replace
from enum import StrEnum

DECREASE = 0.5
INCREASE = 1.5
#: Period of each sitemap ``changefreq`` value, in seconds ("always" and "never" map to
#: the bounds).
CHANGEFREQ_SECONDS: dict[str, float] = {
    "always": 0.0,
    "hourly": 3600.0,
    "daily": 86_400.0,
    "weekly": 604_800.0,
    "monthly": 2_592_000.0,
    "yearly": 31_536_000.0,
    "never": math.inf,
}
#: Bound on the stored validator strings (a hostile server may send huge headers).
MAX_VALIDATOR_CHARS = 512


class Change(StrEnum):
    """What a revisit found (``FIRST``: the first fetch of the URL)."""

    FIRST = "first"
    CHANGED = "changed"
    UNCHANGED = "unchanged"


@dataclass(frozen=True, slots=True)
class RevisitBounds:
    """The interval bounds, in seconds: 0 < ``minimum`` <= ``maximum``."""

    minimum: float
    maximum: float

    def __post_init__(self) -> None:
        if not 0 < self.minimum <= self.maximum:
            raise ValueError("revisit bounds need 0 < minimum <= maximum")

    def clamp(self, seconds: float) -> float:
        return min(self.maximum, max(self.minimum, seconds))


@dataclass(frozen=True, slots=True)
class Capture:
    """The capture that holds a page's current content: its target URI, WARC-Date and
    WARC-Record-ID (None when that capture is itself a revisit record)."""

    uri: str
    date: str
    record_id: str | None = None


@dataclass(frozen=True, slots=True)
class RevisitState:
    """Per-URL revisit state kept in the frontier between fetches."""

    interval: float
    etag: str | None = None
    last_modified: str | None = None
    digest: str | None = None
    revisits: int = 0
    changes: int = 0
    capture: Capture | None = None


@dataclass(frozen=True, slots=True)
class SitemapHint:
    """What a sitemap said about a URL (either may be None)."""

    lastmod: float | None = None
    changefreq: str | None = None


def first_interval(bounds: RevisitBounds, now: float, hint: SitemapHint | None = None) -> float:
    """The interval after a URL's first fetch (see the module contract)."""
    if hint is not None:
        freq = CHANGEFREQ_SECONDS.get((hint.changefreq or "").strip().lower())
        if freq is not None:
            return bounds.clamp(freq)
        if hint.lastmod is not None and hint.lastmod <= now:
            return bounds.clamp((now - hint.lastmod) / 2)
    return bounds.clamp(math.sqrt(bounds.minimum * bounds.maximum))


def next_interval(interval: float, change: Change, bounds: RevisitBounds) -> float:
    """The interval after a revisit that found ``change`` (``FIRST`` keeps it)."""
    if change is Change.CHANGED:
        return bounds.clamp(interval * DECREASE)
    if change is Change.UNCHANGED:
        return bounds.clamp(interval * INCREASE)
    return bounds.clamp(interval)


def _cut(value: str | None) -> str | None:
    if value is None:
        return None
    value = value.strip()
    return value[:MAX_VALIDATOR_CHARS] if value else None


def after_fetch(
    previous: RevisitState | None,
    *,
    not_modified: bool,
    digest: str | None,
    etag: str | None,
    last_modified: str | None,
    capture: Capture | None,
    bounds: RevisitBounds,
    now: float,
    hint: SitemapHint | None = None,
) -> tuple[RevisitState, Change]:
    """The state after a fetch answered 200 (``digest`` of its payload, ``capture`` where
    the payload is stored) or 304 (``not_modified``: digest and capture are kept), and
    what it found. A 304 and a 200 with the stored digest are unchanged; a 200 with
    another digest is changed. Validators the answer lacks are kept from before only
    for a 304 (a 200 without an ETag drops the old one)."""
    if previous is None:
        state = RevisitState(
            interval=first_interval(bounds, now, hint),
            etag=_cut(etag),
            last_modified=_cut(last_modified),
            digest=digest,
            capture=capture,
        )
        return state, Change.FIRST
    if not_modified:
        change = Change.UNCHANGED
        state = replace(
            previous,
            etag=_cut(etag) or previous.etag,
            last_modified=_cut(last_modified) or previous.last_modified,
        )
    else:
        change = Change.UNCHANGED if digest == previous.digest else Change.CHANGED
        state = replace(
            previous,
            etag=_cut(etag),
            last_modified=_cut(last_modified),
            digest=digest,
            capture=capture or previous.capture,
        )
    return (
        replace(
            state,
            interval=next_interval(previous.interval, change, bounds),
            revisits=previous.revisits + 1,
            changes=previous.changes + int(change is Change.CHANGED),
        ),
        change,
    )


def conditional_headers(state: RevisitState | None) -> tuple[tuple[str, str], ...]:
    """Request headers of a revisit: ``If-None-Match`` and ``If-Modified-Since`` from the
    stored validators (none on a first fetch)."""
    if state is None:
        return ()
    out: list[tuple[str, str]] = []
    if state.etag:
        out.append(("If-None-Match", state.etag))
    if state.last_modified:
        out.append(("If-Modified-Since", state.last_modified))
    return tuple(out)


def prefer_revisits(revisits: int, fetches: int, share: float) -> bool:
    """The capacity rule: the next lease of a host takes a due revisit before a new URL
    while revisits are under ``share`` of the page fetches so far
    (``revisits < share * (fetches + 1)``), else a new URL first. Either kind fills what
    the other leaves, so capacity never idles while either is ready; ``share`` 0 means
    new URLs always first, 1 revisits always first."""
    return revisits < share * (fetches + 1)


# -- the frontier's opaque string ----------------------------------------------------


def encode(state: RevisitState) -> str:
    """The ``validators`` string the frontier stores for ``state``."""
    data: dict[str, object] = {"v": 1, "i": state.interval, "n": state.revisits}
    if state.changes:
        data["c"] = state.changes
    for key, value in (("e", state.etag), ("m", state.last_modified), ("d", state.digest)):
        if value is not None:
            data[key] = value
    cap = state.capture
    if cap is not None:
        data["r"] = [cap.uri, cap.date, cap.record_id]
    return json.dumps(data, separators=(",", ":"))


def encode_hint(hint: SitemapHint) -> str:
    """The ``validators`` string a URL is admitted with when a sitemap describes it (it
    holds until the URL's first fetch)."""
    return json.dumps({"v": 1, "h": [hint.lastmod, hint.changefreq]}, separators=(",", ":"))


def decode_hint(text: str | None) -> SitemapHint | None:
    """The sitemap hint stored as ``text`` (None when there is none or it is unreadable)."""
    if not text:
        return None
    try:
        lastmod, freq = json.loads(text)["h"]
        lastmod = None if lastmod is None else float(lastmod)
        if lastmod is not None and not math.isfinite(lastmod):
            lastmod = None
        return SitemapHint(lastmod, None if freq is None else str(freq))
    except (ValueError, TypeError, KeyError, AttributeError):
        return None


def decode(text: str | None) -> RevisitState | None:
    """The state stored as ``text``; None when there is none or it is unreadable (the URL
    is then treated as fetched for the first time)."""
    if not text:
        return None
    try:
        data = json.loads(text)
        interval = float(data["i"])
        if not math.isfinite(interval) or interval <= 0:
            return None
        ref = data.get("r")
        capture = None
        if isinstance(ref, list) and len(ref) == 3:
            capture = Capture(str(ref[0]), str(ref[1]), None if ref[2] is None else str(ref[2]))

        def text_of(key: str) -> str | None:
            value = data.get(key)
            return None if value is None else str(value)

        return RevisitState(
            interval=interval,
            etag=text_of("e"),
            last_modified=text_of("m"),
            digest=text_of("d"),
            revisits=int(data.get("n", 0)),
            changes=int(data.get("c", 0)),
            capture=capture,
        )
    except (ValueError, TypeError, KeyError, AttributeError):
        return None
