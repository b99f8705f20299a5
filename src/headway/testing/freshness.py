"""Validators and content that changes over time, for the simulated web (pure).

Contract, for a host whose ``HostSpec.validators`` is on:

- Every 200 HTML page carries an ``ETag`` (a hash of its body) and a ``Last-Modified``.
- Pages that change (``changes(spec, path)``: ``/p/i`` with ``i % change_every == 0``
  when ``change_every`` > 0 and ``change_period`` > 0) are at content version
  ``floor(now / change_period)``: the version is written into the body, so each version
  has its own payload digest and ETag; ``Last-Modified`` is the start of the version.
  Every other page never changes (``Last-Modified`` is ``STABLE_SINCE``).
- ``conditional`` answers 304 (headers only, with the same ETag and Last-Modified) when
  ``If-None-Match`` names the current ETag, or, without ``If-None-Match``, when
  ``If-Modified-Since`` is not before ``Last-Modified`` (RFC 9110, 13.2.2).
"""

from __future__ import annotations

import gzip
import hashlib
import math
from datetime import UTC, datetime
from email.utils import format_datetime, parsedate_to_datetime

from headway.testing.features import Reply
from headway.testing.graph import HostSpec

#: Last-Modified of pages that never change.
STABLE_SINCE = 1_600_000_000.0


def http_date(epoch: float) -> str:
    return format_datetime(datetime.fromtimestamp(int(epoch), UTC), usegmt=True)


def changes(spec: HostSpec, path: str) -> bool:
    """Whether ``path`` of a host with ``spec`` changes over time."""
    if spec.change_every <= 0 or spec.change_period <= 0 or not path.startswith("/p/"):
        return False
    try:
        return int(path[3:]) % spec.change_every == 0
    except ValueError:
        return False


def version(spec: HostSpec, path: str, now: float) -> int:
    """The content version of ``path`` at ``now`` (0 for pages that never change)."""
    return math.floor(now / spec.change_period) if changes(spec, path) else 0


def with_validators(reply: Reply, spec: HostSpec, path: str, now: float) -> Reply:
    """``reply`` (a 200 HTML page) at its version for ``now``, with ETag and
    Last-Modified; other replies unchanged."""
    if not spec.validators or reply.status != 200 or not reply.html:
        return reply
    body = reply.body
    gzipped = any(k.lower() == "content-encoding" for k, _ in reply.headers)
    if changes(spec, path):
        v = version(spec, path, now)
        plain = gzip.decompress(body) if gzipped else body
        plain = plain.replace(b"</main>", f"<p>content version {v}</p>\n</main>".encode(), 1)
        body = gzip.compress(plain, compresslevel=6, mtime=0) if gzipped else plain
        modified = v * spec.change_period
    else:
        modified = STABLE_SINCE
    etag = '"' + hashlib.sha1(body).hexdigest()[:20] + '"'
    headers = (*reply.headers, ("ETag", etag), ("Last-Modified", http_date(modified)))
    return Reply(reply.status, reply.content_type, body, headers, reply.html)


def _header(reply: Reply, name: str) -> str | None:
    for k, v in reply.headers:
        if k.lower() == name.lower():
            return v
    return None


def _not_before(since: str, modified: str) -> bool:
    try:
        return parsedate_to_datetime(since) >= parsedate_to_datetime(modified)
    except (TypeError, ValueError, IndexError):
        return False  # an unreadable date is ignored: the full page is sent


def conditional(reply: Reply, if_none_match: str | None, if_modified_since: str | None) -> Reply:
    """304 when the request's validators match ``reply`` (see the module contract)."""
    etag = _header(reply, "ETag")
    modified = _header(reply, "Last-Modified")
    if etag is None or reply.status != 200:
        return reply
    if if_none_match is not None:
        tags = {t.strip().removeprefix("W/") for t in if_none_match.split(",")}
        match = etag in tags or "*" in tags
    else:
        match = (
            if_modified_since is not None
            and modified is not None
            and _not_before(if_modified_since, modified)
        )
    if not match:
        return reply
    keep = tuple((k, v) for k, v in reply.headers if k.lower() in ("etag", "last-modified"))
    return Reply(304, reply.content_type, b"", keep)
