"""The end-of-crawl report as values, built from what a crawl recorded (pure).

Contract: ``ReportBuilder`` takes crawl log entries one at a time (``add``: any order,
any number of crawl logs, e.g. one per node) and ``build`` returns a ``CrawlReport``:

- seeds: each seed's host, its robots.txt state (the note or status of the host's
  robots.txt line), its first fetch (status and outcome of the seed URL's earliest
  line; "not fetched" when none), and the pages reached from it (distinct URLs whose
  chain of ``via`` pages leads back to the seed, the seed included).
- hosts: per host, fetches (lines with a response), bytes, response codes, and errors
  by kind (every outcome but ok, redirect and not_modified, and the notes of URLs
  settled without a fetch, e.g. robots-disallowed, opted-out, excluded).
- MIME types (media type without parameters): lines and bytes; response codes: lines.
- the frontier's counts, the control log and extra figures (e.g. URLs dropped by
  opt-out controls) are carried as given.

Memory: one entry per distinct URL (its ``via``) while building, for the seeds' reach.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from headway.control.log import Control
from headway.frontier.store import FrontierCounts
from headway.store.crawllog import CrawlLogEntry

#: Outcomes that are not errors.
FINE = frozenset({"ok", "redirect", "not_modified"})
NO_RESPONSE = "no response"


@dataclass(frozen=True, slots=True)
class SeedRow:
    seed: str
    host: str
    robots: str  # e.g. "robots.txt allow-all", "404", "not fetched"; "unknown": no log read
    first_status: int | None
    first_outcome: str  # "not fetched" when the seed has no line; "unknown": no log read
    pages: int | None  # URLs reached from the seed (it included); None: no crawl log read


@dataclass(frozen=True, slots=True)
class HostRow:
    host: str
    fetches: int
    bytes: int
    statuses: Mapping[int, int] = field(hash=False)
    errors: Mapping[str, int] = field(hash=False)  # by kind (outcome or note)


@dataclass(frozen=True, slots=True)
class CountRow:
    key: str
    count: int
    bytes: int = 0


@dataclass(frozen=True, slots=True)
class NodeRow:
    """A node of a shared crawl as it last published itself (live nodes only)."""

    node: str
    heartbeat_age: float
    shards: int
    fetches: int
    bytes: int
    errors: int
    pages_per_second: float


@dataclass(frozen=True, slots=True)
class CrawlReport:
    """A crawl's report (see the module docstring). ``source``: what it was read from;
    ``notes``: what the report could not include, and why."""

    source: str
    lines: int
    fetches: int
    bytes: int
    first_time: float | None
    last_time: float | None
    seeds: tuple[SeedRow, ...]
    hosts: tuple[HostRow, ...]
    mime_types: tuple[CountRow, ...]
    status_codes: tuple[CountRow, ...]
    frontier: FrontierCounts | None
    controls: tuple[Control, ...]
    extra: Mapping[str, int] = field(default_factory=dict, hash=False)
    notes: tuple[str, ...] = ()
    nodes: tuple[NodeRow, ...] = ()
    #: False when no crawl log was read (a shared crawl without --logs): every figure
    #: that comes from the crawl logs is unknown, not zero
    logs_read: bool = True


#: What a figure from the crawl logs reads as when none was read.
UNKNOWN = "unknown"


def host_of(url: str) -> str:
    """The host of ``url`` as the crawl keys it (lower-case, ``:port`` when given)."""
    try:
        return urlsplit(url).netloc.lower().rpartition("@")[2]
    except ValueError:
        return ""


def _is_robots(url: str) -> bool:
    return url.endswith("/robots.txt") and url.count("/") == 3


class ReportBuilder:
    """Collects crawl log entries for one report (see the module docstring)."""

    def __init__(self) -> None:
        self._lines = 0
        self._fetches = 0
        self._bytes = 0
        self._first: float | None = None
        self._last: float | None = None
        self._via: dict[str, str | None] = {}
        self._depth0: dict[str, None] = {}  # insertion-ordered set
        self._first_line: dict[str, tuple[float, int | None, str]] = {}
        self._robots: dict[str, tuple[float, str]] = {}
        self._host_fetches: Counter[str] = Counter()
        self._host_bytes: Counter[str] = Counter()
        self._host_status: dict[str, Counter[int]] = {}
        self._host_errors: dict[str, Counter[str]] = {}
        self._mime: Counter[str] = Counter()
        self._mime_bytes: Counter[str] = Counter()
        self._status: Counter[str] = Counter()

    def add(self, e: CrawlLogEntry) -> None:
        self._lines += 1
        self._first = e.time if self._first is None else min(self._first, e.time)
        self._last = e.time if self._last is None else max(self._last, e.time)
        host = host_of(e.url)
        if _is_robots(e.url):
            state = e.note or (str(e.status) if e.status is not None else e.outcome)
            if host not in self._robots or e.time < self._robots[host][0]:
                self._robots[host] = (e.time, state)
            return
        if e.url not in self._via or self._via[e.url] is None:
            self._via[e.url] = e.via
        if e.depth == 0 and e.url not in self._depth0:
            self._depth0[e.url] = None
        old = self._first_line.get(e.url)
        if old is None or e.time < old[0]:
            self._first_line[e.url] = (e.time, e.status, e.outcome)
        if e.status is not None:
            self._fetches += 1
            self._bytes += e.bytes
            self._host_fetches[host] += 1
            self._host_bytes[host] += e.bytes
            self._host_status.setdefault(host, Counter())[e.status] += 1
            mime = (e.content_type or "unknown").split(";", 1)[0].strip().lower() or "unknown"
            self._mime[mime] += 1
            self._mime_bytes[mime] += e.bytes
        self._status[str(e.status) if e.status is not None else NO_RESPONSE] += 1
        kind = None
        if e.outcome not in FINE:
            kind = e.outcome
        if e.status is None and e.note:
            kind = e.note.split(":", 1)[0]
        if kind is not None:
            self._host_errors.setdefault(host, Counter())[kind] += 1

    def root_urls(self) -> list[str]:
        """URLs of depth 0 that no page led to (a crawl's seeds), in first-seen order."""
        return [u for u in self._depth0 if self._via.get(u) is None]

    def build(
        self,
        *,
        source: str,
        seeds: Sequence[str],
        frontier: FrontierCounts | None,
        controls: Sequence[Control],
        extra: Mapping[str, int] | None = None,
        notes: Sequence[str] = (),
        nodes: Sequence[NodeRow] = (),
        logs_read: bool = True,
    ) -> CrawlReport:
        reach = self._reach(seeds)
        seed_rows = []
        for s in seeds:
            host = host_of(s)
            first = self._first_line.get(s)
            robots = self._robots.get(host)
            seed_rows.append(
                SeedRow(
                    seed=s,
                    host=host,
                    robots=robots[1] if robots else ("not fetched" if logs_read else UNKNOWN),
                    first_status=first[1] if first else None,
                    first_outcome=first[2] if first else ("not fetched" if logs_read else UNKNOWN),
                    pages=reach.get(s, 0) if logs_read else None,
                )
            )
        hosts = set(self._host_fetches) | set(self._host_errors)
        host_rows = sorted(
            (
                HostRow(
                    host=h,
                    fetches=self._host_fetches.get(h, 0),
                    bytes=self._host_bytes.get(h, 0),
                    statuses=dict(sorted(self._host_status.get(h, Counter()).items())),
                    errors=dict(sorted(self._host_errors.get(h, Counter()).items())),
                )
                for h in hosts
            ),
            key=lambda r: (-r.fetches, r.host),
        )
        mime = sorted(
            (CountRow(m, n, self._mime_bytes[m]) for m, n in self._mime.items()),
            key=lambda r: (-r.count, r.key),
        )
        codes = sorted((CountRow(k, n) for k, n in self._status.items()), key=lambda r: r.key)
        return CrawlReport(
            source=source,
            lines=self._lines,
            fetches=self._fetches,
            bytes=self._bytes,
            first_time=self._first,
            last_time=self._last,
            seeds=tuple(seed_rows),
            hosts=tuple(host_rows),
            mime_types=tuple(mime),
            status_codes=tuple(codes),
            frontier=frontier,
            controls=tuple(sorted(controls, key=lambda c: c.seq)),
            extra=dict(extra or {}),
            notes=tuple(notes),
            nodes=tuple(sorted(nodes, key=lambda n: n.node)),
            logs_read=logs_read,
        )

    def _reach(self, seeds: Sequence[str]) -> dict[str, int]:
        """URLs reached from each seed: the seed at the root of each URL's via chain."""
        wanted = set(seeds)
        root: dict[str, str | None] = {}
        counts: Counter[str] = Counter()
        for url in self._via:
            path: list[str] = []
            cur: str | None = url
            found: str | None = None
            while cur is not None:
                if cur in root:
                    found = root[cur]
                    break
                if cur in wanted:
                    found = cur
                    break
                if cur in path or len(path) > 10_000:
                    break  # a cycle (never expected): no seed
                path.append(cur)
                cur = self._via.get(cur)
            for p in path:
                root[p] = found
            if found is not None:
                counts[found] += 1
        return dict(counts)
