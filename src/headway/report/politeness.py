"""The politeness ledger: what a crawl asked of each host, from its own crawl logs
(pure), for ``headway report --politeness``: something an operator can hand a site's
owner who asks what the crawler did.

Contract: ``LedgerBuilder`` takes crawl log entries one at a time (``add``: any order,
any number of crawl logs, e.g. one per node of a shared crawl) and ``build`` returns a
``Ledger`` with one ``HostLedger`` per host (host name and port as in the URL):

- ``requests``: the requests that left for the host, robots.txt included: lines with a
  send time (``sent``), and lines of logs written before it was recorded that have a
  response (``time`` stands in for the send time; ``Ledger.estimated`` counts them).
- ``smallest_gap``: the smallest time between two consecutive sends to the host (None
  with fewer than two), the two URLs, and the delay in force for the later one; ``delay``:
  the smallest and largest delay in force over the host's requests; ``short_gaps``: sends
  closer to the one before than the delay then in force, less ``TOLERANCE``.
- ``robots``: every robots.txt fetch (time, status, payload digest, verdict), in time
  order; ``skipped``: each URL not fetched because robots.txt disallows it, with the
  digest of the robots.txt fetched last before it (None: none fetched in these logs).
- ``crawl_delay``: the largest Crawl-delay the host's robots.txt asked for; waits it
  required (a send following another while it was in force) and how many kept it.
- ``retry_after``: each Retry-After a 429 or 503 answer asked for, when that answer
  ended, and how long the crawl then waited before its next request to the host (None:
  none followed); ``kept`` when the wait was at least what was asked, less ``TOLERANCE``.

Memory: one float per request, one row per robots.txt fetch and per skipped URL.
"""

from __future__ import annotations

import bisect
import itertools
from collections import defaultdict
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from headway.store.crawllog import CrawlLogEntry

#: What a wait may fall short of what was asked and still count as kept (seconds): the
#: crawl log's ``time`` and ``duration`` are written to the millisecond and a tenth of one.
TOLERANCE = 0.002
#: The crawl-log note of a URL robots.txt disallows.
DISALLOWED = "robots-disallowed"


@dataclass(frozen=True, slots=True)
class RobotsFetch:
    time: float
    url: str
    status: int | None
    digest: str | None
    verdict: str  # the crawl log's note, e.g. "robots.txt rules"


@dataclass(frozen=True, slots=True)
class SkippedUrl:
    time: float
    url: str
    robots_digest: str | None  # the robots.txt fetched last before the skip


@dataclass(frozen=True, slots=True)
class Gap:
    seconds: float
    before: str  # the URL sent first
    after: str
    delay: float | None  # the delay in force for ``after``


@dataclass(frozen=True, slots=True)
class RetryAfterWait:
    url: str
    asked: float  # seconds
    answered_at: float  # when the 429/503 answer ended
    waited: float | None  # seconds until the next request to the host (None: none)

    @property
    def kept(self) -> bool | None:
        return None if self.waited is None else self.waited >= self.asked - TOLERANCE


@dataclass(frozen=True, slots=True)
class HostLedger:
    host: str
    requests: int
    first_sent: float | None
    last_sent: float | None
    smallest_gap: Gap | None
    delay_min: float | None
    delay_max: float | None
    short_gaps: int
    crawl_delay: float | None
    crawl_delay_waits: int
    crawl_delay_kept: int
    robots: tuple[RobotsFetch, ...] = field(hash=False)
    skipped: tuple[SkippedUrl, ...] = field(hash=False)
    retry_after: tuple[RetryAfterWait, ...] = field(hash=False)

    @property
    def robots_versions(self) -> int:
        """Distinct robots.txt bodies fetched (by payload digest)."""
        return len({r.digest for r in self.robots if r.digest is not None})


@dataclass(frozen=True, slots=True)
class Ledger:
    source: str
    hosts: tuple[HostLedger, ...]
    estimated: int  # requests whose send time is their line's start time (older logs)
    notes: tuple[str, ...] = ()


@dataclass(slots=True)
class _Send:
    at: float
    url: str
    delay: float | None
    crawl_delay: float | None


@dataclass(slots=True)
class _Host:
    sends: list[_Send] = field(default_factory=list)
    robots: list[RobotsFetch] = field(default_factory=list)
    skipped: list[tuple[float, str]] = field(default_factory=list)
    pushback: list[tuple[float, str, float]] = field(default_factory=list)  # end, url, asked


def host_of(url: str) -> str:
    """Host name and port of ``url`` as its crawl-log line writes it."""
    try:
        return urlsplit(url).netloc.rpartition("@")[2].lower()
    except ValueError:
        return ""


def _is_robots(entry: CrawlLogEntry) -> bool:
    return (entry.note or "").startswith("robots.txt") and entry.depth == 0


class LedgerBuilder:
    """Collects crawl log entries; ``build`` returns the ledger (see the module
    docstring)."""

    def __init__(self) -> None:
        self._hosts: dict[str, _Host] = defaultdict(_Host)
        self._estimated = 0

    def add(self, e: CrawlLogEntry) -> None:
        if not isinstance(e.url, str):
            return
        h = self._hosts[host_of(e.url)]
        sent = e.sent
        if sent is None and e.status is not None:
            sent = e.time
            self._estimated += 1
        if isinstance(sent, int | float):
            h.sends.append(_Send(float(sent), e.url, _num(e.delay), _num(e.crawl_delay)))
        if _is_robots(e):
            h.robots.append(RobotsFetch(e.time, e.url, e.status, e.digest, e.note or ""))
        elif e.note == DISALLOWED:
            h.skipped.append((e.time, e.url))
        asked = _num(e.retry_after)
        if asked is not None and isinstance(sent, int | float):
            h.pushback.append((e.time + (_num(e.duration) or 0.0), e.url, asked))

    def build(self, source: str, notes: tuple[str, ...] = ()) -> Ledger:
        rows = [_host_row(name, h) for name, h in sorted(self._hosts.items())]
        return Ledger(source, tuple(r for r in rows if r is not None), self._estimated, notes)


def _num(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _host_row(name: str, h: _Host) -> HostLedger | None:
    if not (h.sends or h.robots or h.skipped):
        return None
    sends = sorted(h.sends, key=lambda s: s.at)
    robots = tuple(sorted(h.robots, key=lambda r: r.time))
    smallest: Gap | None = None
    short = waits = kept = 0
    for a, b in itertools.pairwise(sends):
        gap = b.at - a.at
        if smallest is None or gap < smallest.seconds:
            smallest = Gap(gap, a.url, b.url, b.delay)
        if b.delay is not None and gap < b.delay - TOLERANCE:
            short += 1
        if b.crawl_delay is not None:
            waits += 1
            kept += gap >= b.crawl_delay - TOLERANCE
    delays = [s.delay for s in sends if s.delay is not None]
    asked = [s.crawl_delay for s in sends if s.crawl_delay is not None]
    versions = [r for r in robots if r.digest is not None]
    fetched = [r.time for r in versions]
    skipped = []
    for at, url in sorted(h.skipped):
        i = bisect.bisect_right(fetched, at)
        skipped.append(SkippedUrl(at, url, versions[i - 1].digest if i else None))
    times = [s.at for s in sends]
    waits_ra = []
    for end, url, wait in sorted(h.pushback):
        j = bisect.bisect_right(times, end)
        waited = times[j] - end if j < len(times) else None
        waits_ra.append(RetryAfterWait(url, wait, end, waited))
    return HostLedger(
        host=name,
        requests=len(sends),
        first_sent=times[0] if times else None,
        last_sent=times[-1] if times else None,
        smallest_gap=smallest,
        delay_min=min(delays) if delays else None,
        delay_max=max(delays) if delays else None,
        short_gaps=short,
        crawl_delay=max(asked) if asked else None,
        crawl_delay_waits=waits,
        crawl_delay_kept=kept,
        robots=robots,
        skipped=tuple(skipped),
        retry_after=tuple(waits_ra),
    )
