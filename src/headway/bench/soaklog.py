"""What a soak's request log says: pure functions over the server's own log, the
faults injected and the pages a correct crawler fetches (no IO, no clock).

Contract:
- ``Request`` is one logged request (times from one monotonic clock shared with the
  faults); ``node`` names the crawler node that sent it (from its User-Agent).
- ``duplicates`` lists the URLs answered 200 more than once, each classed by the fault
  that explains it (``Explained``) or ``unexplained``: a node killed, frozen or a Redis
  server lost after the first fetch and within ``window`` seconds of it.
- ``gap_violations`` finds, per host, a request that arrived before the one before it
  was answered, or two that arrived closer than the host's delay (less ``slack``).
- ``robots_violations`` lists page requests robots.txt disallows.
- ``coverage`` splits the reachable pages into fetched (a 200), failed (asked for, never
  a 200) and lost (never asked for).
- ``rate`` / ``recovery`` / ``host_resume`` / ``thaw_intrusions`` measure each fault.
"""

from __future__ import annotations

import bisect
import itertools
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum

ROBOTS = "/robots.txt"
#: Seconds a request logged just after a fault may still belong before it: the fault's
#: time is noted once it is done (a process killed and reaped), and a busy server starts
#: handlers late when it cannot measure by how much.
LATE_SLACK = 2.0


@dataclass(frozen=True, slots=True)
class Request:
    arrival: float  # when it reached the server's socket
    end: float  # when its answer was ready
    host: str
    path: str  # with the query
    status: int  # 0: never answered
    node: str
    late_measured: bool = True  # the server measured its lateness (kernel timestamps)


class FaultKind(StrEnum):
    NODE_KILL = "node-kill"  # kill -9 of a crawler node
    NODE_RESTART = "node-restart"
    NODE_FREEZE = "node-freeze"  # SIGSTOP ... SIGCONT (``until``)
    NODE_ADD = "node-add"
    NODE_STOP = "node-stop"  # a clean stop (SIGTERM)
    REDIS_KILL = "redis-kill"  # kill -9 of a Redis master
    REDIS_RESTART = "redis-restart"  # a Redis server started again
    REDIS_MACHINE = "redis-machine"  # a master and a replica stopped together


@dataclass(frozen=True, slots=True)
class Fault:
    at: float
    kind: FaultKind
    target: str  # a node name or a Redis address
    until: float | None = None  # the end of a freeze or an outage


class Explained(StrEnum):
    NODE_KILLED = "node-killed"
    NODE_FROZEN = "node-frozen"
    REDIS_LOST = "redis-lost"
    UNEXPLAINED = "unexplained"


_LOSES_NODE = {FaultKind.NODE_KILL: Explained.NODE_KILLED}
_LOSES_REDIS = (FaultKind.REDIS_KILL, FaultKind.REDIS_MACHINE)


@dataclass(frozen=True, slots=True)
class Duplicate:
    url: str
    first: Request
    again: Request
    why: Explained


def page_requests(log: Iterable[Request]) -> list[Request]:
    return [r for r in log if r.path != ROBOTS]


def explain(first: Request, again: Request, faults: Sequence[Fault], window: float) -> Explained:
    """Why a page answered to ``first`` was asked for again in ``again``."""
    for f in faults:
        # the first fetch at most ``window`` before the fault began (or during it), and
        # the fault before the second
        late = LATE_SLACK  # the fault's time is taken once it is done
        if not f.at - window <= first.arrival <= (f.until or f.at) + late or f.at > again.arrival:
            continue
        if f.kind in _LOSES_NODE and f.target == first.node:
            return _LOSES_NODE[f.kind]
        if f.kind is FaultKind.NODE_FREEZE and f.target == first.node:
            return Explained.NODE_FROZEN
        if f.kind in _LOSES_REDIS:
            return Explained.REDIS_LOST
    return Explained.UNEXPLAINED


def duplicates(
    log: Iterable[Request],
    url_of: Callable[[str, str], str],
    faults: Sequence[Fault],
    window: float,
) -> list[Duplicate]:
    """Every second (third ...) 200 answer of a URL, with what explains it."""
    first: dict[str, Request] = {}
    out: list[Duplicate] = []
    for r in sorted(page_requests(log), key=lambda r: r.arrival):
        if r.status != 200:
            continue
        url = url_of(r.host, r.path)
        before = first.get(url)
        if before is None:
            first[url] = r
            continue
        out.append(Duplicate(url, before, r, explain(before, r, faults, window)))
        first[url] = r
    return out


@dataclass(frozen=True, slots=True)
class GapViolation:
    host: str
    before: Request
    after: Request
    gap: float
    delay: float
    overlap: bool  # the second arrived before the first was answered


def gap_violations(
    log: Iterable[Request],
    delay_for: Callable[[str], float],
    base_delay: float,
    *,
    slack: float = 0.002,
    unmeasured_slack: float = 0.03,
) -> list[GapViolation]:
    """Per host, requests (robots.txt included) closer than its delay or overlapping.
    The gap after a robots.txt request is held to ``base_delay``: the host's own
    Crawl-delay is known only once robots.txt is read."""
    by_host: dict[str, list[Request]] = defaultdict(list)
    for r in log:
        by_host[r.host].append(r)
    out: list[GapViolation] = []
    for host, reqs in by_host.items():
        reqs.sort(key=lambda r: r.arrival)
        delay = delay_for(host)
        for a, b in itertools.pairwise(reqs):
            need = base_delay if a.path == ROBOTS else delay
            allowance = slack if a.late_measured and b.late_measured else unmeasured_slack
            gap = b.arrival - a.arrival
            overlap = a.status != 0 and b.arrival < a.end - 0.001
            if overlap or gap < need - allowance:
                out.append(GapViolation(host, a, b, gap, need, overlap))
    return out


def robots_violations(log: Iterable[Request], allowed: Callable[[str, str], bool]) -> list[Request]:
    """Page requests (``allowed(host, path)`` false) that robots.txt disallows."""
    return [r for r in page_requests(log) if not allowed(r.host, r.path)]


@dataclass(frozen=True, slots=True)
class Coverage:
    fetched: frozenset[str]  # reachable, answered 200
    failed: frozenset[str]  # reachable, asked for, never a 200
    lost: frozenset[str]  # reachable, never asked for
    extra: int  # URLs answered 200 that are not reachable pages


def coverage(
    log: Iterable[Request], url_of: Callable[[str, str], str], pages: frozenset[str]
) -> Coverage:
    ok: set[str] = set()
    asked: set[str] = set()
    for r in page_requests(log):
        url = url_of(r.host, r.path)
        asked.add(url)
        if r.status == 200:
            ok.add(url)
    fetched = pages & ok
    failed = (pages & asked) - ok
    return Coverage(
        frozenset(fetched), frozenset(failed), frozenset(pages - asked), len(ok - pages)
    )


def rate(times: Sequence[float], start: float, end: float, width: float) -> list[float]:
    """Events per second in consecutive windows of ``width`` from ``start`` to ``end``
    (``times`` sorted)."""
    out = []
    t = start
    while t < end:
        lo = bisect.bisect_left(times, t)
        hi = bisect.bisect_left(times, t + width)
        out.append((hi - lo) / width)
        t += width
    return out


def recovery(
    times: Sequence[float],
    at: float,
    *,
    before: float = 60.0,
    width: float = 10.0,
    share: float = 0.8,
    limit: float = 900.0,
) -> float | None:
    """Seconds after ``at`` until the page rate over ``width`` seconds is back to
    ``share`` of its rate in the ``before`` seconds before ``at`` (0 when it never
    fell; None when it did not come back within ``limit`` or there was no rate)."""
    lo = bisect.bisect_left(times, at - before)
    hi = bisect.bisect_left(times, at)
    base = (hi - lo) / before
    if base <= 0:
        return None
    step = 1.0
    t = at
    while t < at + limit:
        n = bisect.bisect_left(times, t + width) - bisect.bisect_left(times, t)
        if n / width >= share * base:
            return round(t - at, 1)
        if bisect.bisect_left(times, t + width) >= len(times):
            return None
        t += step
    return None


def host_resume(
    log: Sequence[Request], node: str, at: float, *, before: float = 30.0
) -> list[float]:
    """For each host ``node`` asked in the ``before`` seconds before ``at`` (its kill),
    the seconds until any node asked that host again (hosts never asked again left
    out): how long the hosts of a dead node's shards wait."""
    recent = {r.host for r in log if r.node == node and at - before <= r.arrival <= at}
    resumed: dict[str, float] = {}
    for r in log:
        if r.host in recent and r.arrival > at and r.host not in resumed:
            resumed[r.host] = r.arrival - at
        elif r.host in resumed and r.arrival > at:
            resumed[r.host] = min(resumed[r.host], r.arrival - at)
    return sorted(resumed.values())


def thaw_intrusions(
    log: Sequence[Request],
    freeze: Fault,
    url_of: Callable[[str, str], str],
    *,
    after: float = 60.0,
) -> list[Request]:
    """Requests of a thawed node, within ``after`` seconds of its thaw, for URLs another
    node fetched (a 200) while it was frozen (it had leased them before, and sent them
    anyway once awake; a retry after a 503 is not one)."""
    if freeze.until is None:
        return []
    taken = {
        url_of(r.host, r.path)
        for r in page_requests(log)
        if r.node != freeze.target and r.status == 200 and freeze.at < r.arrival <= freeze.until
    }
    return [
        r
        for r in page_requests(log)
        if r.node == freeze.target
        and freeze.until < r.arrival <= freeze.until + after
        and url_of(r.host, r.path) in taken
    ]
