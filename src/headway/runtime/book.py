"""What a node keeps for the console besides its statistics: per-host counters, the
recent problems, the state of each seed, and the last hour's history.

Contract: every record is bounded. ``HostBook`` keeps at most ``max_hosts`` hosts (the
oldest recorded host is forgotten first), ``Problems`` the last ``PROBLEMS`` problems
(each host-level problem once), ``History`` one point per ``HISTORY_STEP`` seconds for
``HISTORY_POINTS`` points, ``SeedBook`` the first ``MAX_SEEDS`` seeds. What the fetch
path pays per page is a dict look-up and a few increments (``HostBook.on_page``); the
rest is paid when a console snapshot is built. Times are given by the caller (no clock
here).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

#: Problems kept (the last ones).
PROBLEMS = 100
#: Seconds between two history points, and points kept (one hour).
HISTORY_STEP = 10.0
HISTORY_POINTS = 360
#: Seeds whose state is followed (a crawl of a million seeds shows the first ones).
MAX_SEEDS = 1000
#: Hosts whose counters are kept by default (as many as the scheduler's limiters).
MAX_HOSTS = 50_000
#: Outcomes that are not errors (as ``runtime.stats.OK_OUTCOMES``).
OK_OUTCOMES = frozenset({"ok", "redirect", "not_modified", "client_error"})


@dataclass(slots=True)
class HostTally:
    """One host's fetching in this run."""

    pages: int = 0
    bytes: int = 0
    error_count: int = 0
    errors: dict[str, int] = field(default_factory=dict)  # by outcome


class HostBook:
    """Per-host counters of this run, for at most ``max_hosts`` hosts. ``changed``
    holds the hosts counted since the reader last cleared it, and ``evictions`` counts
    the hosts forgotten: as counters only grow, the top hosts now are among the top
    hosts before and the hosts changed since, unless a host was forgotten."""

    def __init__(self, max_hosts: int = MAX_HOSTS) -> None:
        self.max_hosts = max_hosts
        self.hosts: dict[str, HostTally] = {}
        self.changed: set[str] = set()
        self.evictions = 0

    def on_page(self, host: str, outcome: str, nbytes: int) -> HostTally:
        tally = self.hosts.get(host)
        if tally is None:
            if len(self.hosts) >= self.max_hosts:
                del self.hosts[next(iter(self.hosts))]
                self.evictions += 1
            tally = self.hosts[host] = HostTally()
        tally.pages += 1
        tally.bytes += nbytes
        self.changed.add(host)
        if outcome not in OK_OUTCOMES:
            tally.error_count += 1
            tally.errors[outcome] = tally.errors.get(outcome, 0) + 1
        return tally

    def __len__(self) -> int:
        return len(self.hosts)


@dataclass(frozen=True, slots=True)
class Problem:
    """One problem: ``kind`` (an outcome such as ``timeout``, or a host-level kind such
    as ``opted-out``, ``blocked-address``, ``robots-unreachable``, ``host-budget``),
    the host, the URL (empty for a host-level problem) and a reason a person reads."""

    at: float
    kind: str
    host: str
    url: str
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {
            "at": round(self.at, 3),
            "kind": self.kind,
            "host": self.host,
            "url": self.url,
            "reason": self.reason,
        }


class Problems:
    """The last ``size`` page problems and, apart, the last ``size`` host-level problems
    (each (host, kind) once for the run, remembered in a bounded set), newest first."""

    def __init__(self, size: int = PROBLEMS) -> None:
        self._ring: deque[Problem] = deque(maxlen=size)
        self._hosts: deque[Problem] = deque(maxlen=size)
        self._noted: set[tuple[str, str]] = set()
        self._noted_max = 10 * MAX_HOSTS

    def add(self, problem: Problem) -> None:
        self._ring.append(problem)

    def add_once(self, problem: Problem) -> bool:
        """Add a host-level problem unless that host had that kind already."""
        key = (problem.host, problem.kind)
        if key in self._noted:
            return False
        if len(self._noted) >= self._noted_max:
            self._noted.clear()
        self._noted.add(key)
        self._hosts.append(problem)
        return True

    def recent(self) -> list[Problem]:
        """Page problems, newest first."""
        return list(reversed(self._ring))

    def hosts(self) -> list[Problem]:
        """Host-level problems, newest first."""
        return list(reversed(self._hosts))


@dataclass(frozen=True, slots=True)
class Point:
    """One history point: pages/s over the window, queued URLs, and errors (page
    fetches that ended in an error) since the previous point."""

    at: float
    pages_per_second: float
    queued: int
    errors: int


class History:
    """One point per ``step`` seconds for the last ``points`` points."""

    def __init__(self, step: float = HISTORY_STEP, points: int = HISTORY_POINTS) -> None:
        self.step = step
        self._points: deque[Point] = deque(maxlen=points)
        self._last_errors: int | None = None

    def due(self, now: float) -> bool:
        return not self._points or now - self._points[-1].at >= self.step

    def add(self, now: float, pages_per_second: float, queued: int, errors_total: int) -> None:
        errors = 0 if self._last_errors is None else max(0, errors_total - self._last_errors)
        self._last_errors = errors_total
        self._points.append(Point(now, pages_per_second, queued, errors))

    def load(self, rows: Iterable[object]) -> None:
        """Continue a history read back from ``to_json`` (a resumed crawl); rows that
        are not points are skipped."""
        for row in rows:
            if isinstance(row, list | tuple) and len(row) == 4:
                try:
                    self._points.append(
                        Point(float(row[0]), float(row[1]), int(row[2]), int(row[3]))
                    )
                except (TypeError, ValueError):
                    continue

    def to_json(self) -> list[list[float | int]]:
        return [
            [round(p.at, 1), round(p.pages_per_second, 3), p.queued, p.errors] for p in self._points
        ]


@dataclass(slots=True)
class SeedState:
    """The first fetch of one seed: its outcome and status (empty until fetched)."""

    url: str
    host: str
    outcome: str = ""
    status: int | None = None
    at: float = 0.0


class SeedBook:
    """The state of the crawl's first ``MAX_SEEDS`` seeds."""

    def __init__(self, seeds: Iterable[tuple[str, str]] = ()) -> None:
        self.seeds: dict[str, SeedState] = {}
        self.total = 0
        self.use(seeds)

    def use(self, seeds: Iterable[tuple[str, str]]) -> None:
        """The crawl's seeds as (url, host); replaces what was followed before, keeping
        the first fetch of a seed still followed (one carried over from an earlier run)."""
        before = self.seeds
        self.seeds = {}
        self.total = 0
        for url, host in seeds:
            self.total += 1
            if len(self.seeds) < MAX_SEEDS:
                self.seeds[url] = before.get(url) or SeedState(url, host)

    def carry(self, rows: Iterable[object]) -> int:
        """First fetches from an earlier run's snapshot rows (``rows``): a resumed crawl
        does not show its seeds as not fetched yet. Rows of seeds not followed, without
        a first fetch, or not rows, are skipped; returns how many were taken."""
        taken = 0
        for row in rows:
            if not isinstance(row, dict) or not row.get("first_fetch"):
                continue
            url = row.get("url")
            state = self.seeds.get(url) if isinstance(url, str) else None
            if state is None:
                # a seed not followed: skipped once the seeds are known (it is no seed of
                # this run), kept for use() while they are not set yet
                if not isinstance(url, str) or self.total or len(self.seeds) >= MAX_SEEDS:
                    continue
                # not followed yet (the seeds are set later at start): kept for use()
                state = self.seeds[url] = SeedState(url, str(row.get("host") or ""))
            if state.outcome:
                continue
            status = row.get("status")
            at = row.get("at")
            state.outcome = str(row["first_fetch"])
            state.status = status if isinstance(status, int) else None
            state.at = float(at) if isinstance(at, int | float) else 0.0
            taken += 1
        return taken

    def on_page(self, url: str, outcome: str, status: int | None, now: float) -> None:
        state = self.seeds.get(url)
        if state is not None and not state.outcome:
            state.outcome, state.status, state.at = outcome, status, now

    def rows(self, robots: Mapping[str, str], pages: Mapping[str, int]) -> list[dict[str, Any]]:
        """Each seed with its host's robots.txt state and pages fetched from its host."""
        return [
            {
                "url": s.url,
                "host": s.host,
                "robots": robots.get(s.host, ""),
                "first_fetch": s.outcome,
                "status": s.status,
                "at": round(s.at, 3) if s.at else None,
                "host_pages": pages.get(s.host, 0),
            }
            for s in self.seeds.values()
        ]


class ConsoleBook:
    """Everything the node keeps for the console (see the module docstring)."""

    def __init__(self, max_hosts: int = MAX_HOSTS) -> None:
        self.hosts = HostBook(max_hosts)
        self.problems = Problems()
        self.history = History()
        self.seeds = SeedBook()

    def on_page(
        self,
        url: str,
        host: str,
        outcome: str,
        status: int | None,
        nbytes: int,
        error: str | None,
        now: float,
    ) -> None:
        """A page fetch ended (any outcome)."""
        self.hosts.on_page(host, outcome, nbytes)
        if self.seeds.seeds:
            self.seeds.on_page(url, outcome, status, now)
        if outcome not in OK_OUTCOMES:
            reason = outcome if status is None else f"{outcome} (HTTP {status})"
            if error:
                reason = f"{reason}: {error[:200]}"
            self.problems.add(Problem(now, outcome, host, url, reason))

    def on_host_problem(self, host: str, kind: str, reason: str, now: float) -> None:
        """A host-level problem (excluded, blocked, out of budget), noted once."""
        self.problems.add_once(Problem(now, kind, host, "", reason))
