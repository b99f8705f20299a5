"""The console's view of one running node, built every ``SNAPSHOT_EVERY`` seconds.

Contract: ``Snapshotter.run`` (a task of the node) builds a snapshot (``build``): the
node's statistics (``NodeStats.to_json``), its process (CPU, memory, shards held), the
last hour's history, the hosts top lists (busiest, slowest, most failing: at most
``TOP`` each, with their politeness state and their frontier counts read in one
frontier call), the seeds, the recent problems. It keeps the latest in memory (the
in-process console serves it), writes it atomically to ``console.json`` in the crawl
directory (``headway console DIR``), and in a shared crawl publishes it to Redis under
the node's key with a TTL (``headway console --store``). At the node's end ``final``
writes it once more with ``running`` false and the reason the node stopped.

Cost: the top lists are ``heapq.nlargest`` over the hosts the node counted (bounded by
``book.MAX_HOSTS``) and the scheduler's hosts under pressure; nothing here runs per page.
"""

from __future__ import annotations

import asyncio
import heapq
import logging
import math
import os
import time
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from headway.frontier.store import SHED_HOST_BUDGET, FrontierStore
from headway.policy.politeness import HostLimitStats
from headway.policy.schedule import ScheduleCore
from headway.runtime.book import ConsoleBook
from headway.runtime.stats import NodeStats
from headway.threads import ThreadWorker

log = logging.getLogger(__name__)

#: Seconds between two snapshots (the page refreshes about as often).
SNAPSHOT_EVERY = 2.0
#: Hosts in each top list.
TOP = 20
#: Snapshots between two rankings of every host counted (see ``_candidates``).
FULL_EVERY = 30
#: The snapshot file in the crawl directory.
CONSOLE_FILE = "console.json"
#: Seconds a node's snapshot lives in Redis without being renewed.
PUBLISH_TTL = 30.0
#: Hosts a search looks at between two turns of the event loop.
SEARCH_SLICE = 2000
#: Orders of a host search.
SORTS = ("pages", "errors", "gap", "host")
#: Version of the snapshot's JSON (``version``); readers accept older ones.
VERSION = 1


@dataclass(frozen=True, slots=True)
class SnapshotParts:
    """What a snapshot reads, handed over by the node (no node object is kept)."""

    node_id: str
    directory: Path
    book: ConsoleBook
    core: ScheduleCore
    worker: ThreadWorker
    frontier: FrontierStore
    stats: Callable[[], NodeStats]
    cpu_seconds: Callable[[], float]
    rss_mib: Callable[[], float]
    shards_held: Callable[[], int | None]
    publish: Callable[[bytes], None] | None  # the shared crawl's store (Redis)
    host_budget: int
    crawl: dict[str, Any]  # directory, store (password masked), crawl_id


def host_row(
    host: str,
    tally: Any,
    lim: HostLimitStats | None,
    counts: tuple[int, int] | None,
    robots: str,
    budget: int,
    now: float,
) -> dict[str, Any]:
    """One host as the page shows it (``tally``: its ``HostTally`` or None)."""
    queued, admitted = counts if counts is not None else (0, 0)
    return {
        "host": host,
        "pages": tally.pages if tally is not None else 0,
        "bytes": tally.bytes if tally is not None else 0,
        "errors": dict(tally.errors) if tally is not None else {},
        "error_count": tally.error_count if tally is not None else 0,
        "queued": queued,
        "admitted": admitted,
        "at_budget": admitted >= budget,
        "in_flight": lim.in_flight if lim is not None else 0,
        "limit": round(lim.limit, 2) if lim is not None else None,
        "gap": round(lim.gap, 3) if lim is not None else None,
        "backoff": round(lim.backoff, 3) if lim is not None else 0.0,
        "retry_after": round(max(0.0, lim.not_before - now), 1) if lim is not None else 0.0,
        "parked": round(max(0.0, lim.parked_until - now), 1) if lim is not None else 0.0,
        "health": round(lim.health, 3) if lim is not None else None,
        "robots": robots,
    }


def robots_text(core: ScheduleCore, host: str, now: float) -> str:
    """The host's robots.txt state in a word or two ('' when not fetched yet)."""
    rules = core.robots.previous(host)
    if rules is None:
        return ""
    text = str(rules.kind)
    if rules.crawl_delay:
        text += f", delay {rules.crawl_delay:g}s"
    if now >= rules.expires_at:
        text += " (expired)"
    return text


class Snapshotter:
    """Builds, keeps, writes and publishes the node's console snapshot."""

    def __init__(self, parts: SnapshotParts, every: float = SNAPSHOT_EVERY) -> None:
        self.parts = parts
        self.every = every
        self.path = parts.directory / CONSOLE_FILE
        self.latest: dict[str, Any] | None = None
        self.built = 0  # snapshots built
        self._cpu: tuple[float, float] | None = None  # (monotonic, cpu seconds)
        self._budget_shed = 0
        self._top_pages: set[str] = set()
        self._top_errors: set[str] = set()
        self._evictions = 0
        self._load_history()

    def _load_history(self) -> None:
        """A resumed crawl continues the history of its last run, and its seeds keep
        the first fetches an earlier run made."""
        try:
            old = orjson.loads(self.path.read_bytes())
        except (OSError, orjson.JSONDecodeError):
            return
        if not isinstance(old, dict):
            return
        if isinstance(old.get("history"), list):
            self.parts.book.history.load(old["history"])
        seeds = old.get("seeds")
        if isinstance(seeds, dict) and isinstance(seeds.get("rows"), list):
            self.parts.book.seeds.carry(seeds["rows"])

    async def run(self) -> None:
        """Until cancelled: a snapshot every ``every`` seconds."""
        while True:
            await self.refresh()
            await asyncio.sleep(self.every)

    async def refresh(self, *, running: bool = True, stopped_by: str | None = None) -> None:
        try:
            snap = await self.build(running=running, stopped_by=stopped_by)
        except Exception as exc:  # the console must never stop a crawl
            log.warning("console snapshot failed: %s", exc)
            return
        self.latest = snap
        data = orjson.dumps(snap)
        self._write(data)
        publish = self.parts.publish
        if publish is not None:
            try:
                await self.parts.worker.call(publish, data)
            except Exception as exc:
                log.debug("console snapshot not published: %s", exc)

    async def final(self, stopped_by: str) -> None:
        """The last snapshot of this run (``running`` false)."""
        await self.refresh(running=False, stopped_by=stopped_by)

    def _write(self, data: bytes) -> None:
        tmp = self.path.with_name(self.path.name + ".tmp")
        try:
            tmp.write_bytes(data)
            os.replace(tmp, self.path)
        except OSError as exc:
            log.debug("console snapshot not written: %s", exc)

    async def build(self, *, running: bool = True, stopped_by: str | None = None) -> dict[str, Any]:
        p = self.parts
        now = time.time()
        mono = time.monotonic()
        stats = p.stats()
        sj = stats.to_json()
        queued = stats.frontier.queued if stats.frontier is not None else 0
        book = p.book
        if book.history.due(now):
            book.history.add(now, stats.fetch.pages_per_second, queued, stats.fetch.errors)
        cpu = p.cpu_seconds()
        cpu_share = 0.0
        if self._cpu is not None and mono > self._cpu[0]:
            cpu_share = (cpu - self._cpu[1]) / (mono - self._cpu[0])
        self._cpu = (mono, cpu)
        candidates = self._candidates(stats)
        counts = await p.worker.call(p.frontier.host_counts, list(candidates))
        lims = p.core.host_stats(candidates)
        tallies = book.hosts.hosts
        rows = {
            h: host_row(
                h,
                tallies.get(h),
                lims.get(h),
                counts.get(h),
                robots_text(p.core, h, now),
                p.host_budget,
                now,
            )
            for h in candidates
        }
        self._note_budget(stats, rows.values(), now)
        seeds = book.seeds.seeds.values()
        robots = {s.host: robots_text(p.core, s.host, now) for s in seeds}
        pages = {s.host: tallies[s.host].pages for s in seeds if s.host in tallies}
        self.built += 1
        return {
            "version": VERSION,
            "node": p.node_id,
            "time": now,
            "running": running,
            "stopped_by": stopped_by,
            "crawl": p.crawl,
            "host_budget": p.host_budget,
            "stats": sj,
            "process": {
                "cpu_seconds": round(cpu, 3),
                "cpu_share": round(cpu_share, 3),
                "rss_mib": round(p.rss_mib(), 1),
                "shards_held": p.shards_held(),
            },
            "history": book.history.to_json(),
            "hosts": {
                "known": max(stats.scheduler.known, len(tallies)),
                **top_lists(rows.values()),
            },
            "seeds": {"total": book.seeds.total, "rows": book.seeds.rows(robots, pages)},
            "problems": [pr.to_json() for pr in book.problems.recent()],
            "host_problems": [pr.to_json() for pr in book.problems.hosts()],
        }

    async def search(self, q: str, sort: str, limit: int) -> list[dict[str, Any]]:
        """Hosts whose name contains ``q`` (any case), the first ``limit`` by ``sort``
        (one of ``SORTS``), as host rows. What reads the node's state runs on its event
        loop in slices of ``SEARCH_SLICE`` hosts and the ordering in a thread, so that a
        search of many hosts never holds the crawl for long."""
        p = self.parts
        q = q.lower()
        tallies = p.book.hosts.hosts
        names: set[str] = set()
        for pool in (list(tallies), list(p.core.known_hosts())):
            for i in range(0, len(pool), SEARCH_SLICE):
                names.update(h for h in pool[i : i + SEARCH_SLICE] if q in h)
                await asyncio.sleep(0)
        found = list(names)
        items: list[tuple[str, float]] = []
        for i in range(0, len(found), SEARCH_SLICE):
            part = found[i : i + SEARCH_SLICE]
            if sort == "gap":
                gaps = p.core.host_gaps(part)
                items.extend((h, gaps.get(h, -1.0)) for h in part)
            elif sort in ("pages", "errors"):
                field = "pages" if sort == "pages" else "error_count"
                items.extend(
                    (h, getattr(tallies[h], field) if h in tallies else -1.0) for h in part
                )
            else:
                items.extend((h, 0.0) for h in part)
            await asyncio.sleep(0)
        chosen = await asyncio.to_thread(_first, items, limit, by_name=sort == "host")
        counts = await p.worker.call(p.frontier.host_counts, chosen)
        lims = p.core.host_stats(chosen)
        now = time.time()
        return [
            host_row(
                h,
                tallies.get(h),
                lims.get(h),
                counts.get(h),
                robots_text(p.core, h, now),
                p.host_budget,
                now,
            )
            for h in chosen
        ]

    def _candidates(self, stats: NodeStats) -> set[str]:
        """Hosts that may be in a top list: the most fetched, the most failing, and the
        scheduler's most throttled. The tops are kept from one snapshot to the next and
        only the hosts counted since are ranked against them (``HostBook``); all hosts
        are ranked again after a host was forgotten and every ``FULL_EVERY`` snapshots."""
        book = self.parts.book.hosts
        tallies = book.hosts
        full = book.evictions != self._evictions or self.built % FULL_EVERY == 0
        self._evictions = book.evictions
        pool = set(tallies) if full else (self._top_pages | self._top_errors | book.changed)
        book.changed.clear()
        pool.intersection_update(tallies)
        pages = heapq.nlargest(TOP, pool, key=lambda h: tallies[h].pages)
        failing = (h for h in pool if tallies[h].error_count)
        errors = heapq.nlargest(TOP, failing, key=lambda h: tallies[h].error_count)
        self._top_pages, self._top_errors = set(pages), set(errors)
        out = self._top_pages | self._top_errors
        out.update(h.host for h in stats.scheduler.throttled[:TOP])
        return out

    def _note_budget(self, stats: NodeStats, rows: Iterable[dict[str, Any]], now: float) -> None:
        """Name the hosts that reached the host budget once URLs were shed for it."""
        shed = stats.frontier.shed.get(SHED_HOST_BUDGET, 0) if stats.frontier is not None else 0
        if shed <= self._budget_shed:
            return
        self._budget_shed = shed
        budget = self.parts.host_budget
        for row in rows:
            if row["at_budget"]:
                self.parts.book.on_host_problem(
                    row["host"],
                    "host-budget",
                    f"reached --host-budget {budget}: its further URLs are shed",
                    now,
                )


def _first(items: list[tuple[str, float]], limit: int, *, by_name: bool) -> list[str]:
    """The ``limit`` first hosts: by name, or by the largest key (then by name)."""
    if by_name:
        return heapq.nsmallest(limit, (h for h, _ in items))
    return [h for h, _ in heapq.nlargest(limit, items, key=lambda it: (it[1], it[0]))]


def top_lists(rows: Collection[dict[str, Any]], top: int = TOP) -> dict[str, list[dict[str, Any]]]:
    """The busiest (pages), slowest (gap) and most failing (errors) of ``rows``."""

    def gap(r: dict[str, Any]) -> float:
        g = r.get("gap")
        return g if isinstance(g, int | float) and math.isfinite(g) else -1.0

    return {
        "busiest": heapq.nlargest(top, rows, key=lambda r: (r["pages"], r["queued"])),
        "slowest": heapq.nlargest(top, (r for r in rows if r.get("gap") is not None), key=gap),
        "failing": heapq.nlargest(
            top, (r for r in rows if r["error_count"]), key=lambda r: r["error_count"]
        ),
    }
