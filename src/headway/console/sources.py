"""Where a console reads a crawl from, and where its controls go.

Contract: a ``Source`` answers ``state()`` (``view.crawl_view``'s JSON) and
``hosts(q, sort, limit)`` (host rows whose name contains ``q``); neither raises for a
crawl that is missing, starting or unreachable: the state then says so in ``error``.

- ``LiveSource``: the node running in this process (its ``Snapshotter``).
- ``DirSource``: a crawl directory, running or finished: its ``console.json``, and its
  frontier file read-only for host searches over every host of the crawl.
- ``SharedSource``: a shared crawl in Redis: the crawl's counts, the live nodes'
  heartbeats and each node's published snapshot. Host searches cover the hosts the
  nodes' snapshots list.

``ControlDesk`` records controls in the crawl's control log (``headway.control``) and
keeps the last ``CONTROLS_SHOWN`` of them for the page; all its log calls run on one
thread of its own. No store URL with its password leaves this module: errors and
names are masked (``mask_store_url``).
"""

from __future__ import annotations

import sqlite3
import time
from collections import deque
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol

import orjson

from headway.console.view import crawl_view
from headway.control import Control, ControlKind, ControlLog, CrawlRef, check_args
from headway.control import open_control_log as _open_control_log
from headway.errors import HeadwayError
from headway.frontier.storeurl import mask_store_url
from headway.runtime.snapshot import CONSOLE_FILE, Snapshotter, host_row
from headway.threads import ThreadWorker

#: Controls the page shows (the latest).
CONTROLS_SHOWN = 50
#: Seconds a node's heartbeat may be old and the node still be listed.
LIVE_WITHIN = 60.0


class Source(Protocol):
    where: str

    async def state(self) -> dict[str, Any]: ...

    async def hosts(self, q: str, sort: str, limit: int) -> list[dict[str, Any]]: ...


def _search_rows(rows: list[dict[str, Any]], q: str, sort: str, limit: int) -> list[dict[str, Any]]:
    q = q.lower()
    found = [r for r in rows if q in str(r.get("host", ""))]
    if sort == "host":
        found.sort(key=lambda r: str(r.get("host", "")))
    elif sort in ("errors", "gap", "queued"):
        key = "error_count" if sort == "errors" else sort
        found.sort(key=lambda r: -(r.get(key) or 0))
    else:
        found.sort(key=lambda r: -(r.get("pages") or 0))
    return found[:limit]


def _view_rows(view: Mapping[str, Any]) -> list[dict[str, Any]]:
    hosts = view.get("hosts", {})
    rows: dict[str, dict[str, Any]] = {}
    for name in ("busiest", "slowest", "failing"):
        for r in hosts.get(name, []):
            rows.setdefault(str(r.get("host")), r)
    return list(rows.values())


class LiveSource:
    """The node of this process; ``snapshotter`` returns its ``Snapshotter`` once the
    node has built its parts (None before)."""

    def __init__(self, snapshotter: Callable[[], Snapshotter | None], where: str) -> None:
        self._snapshotter = snapshotter
        self.where = where

    async def state(self) -> dict[str, Any]:
        snap = self._snapshotter()
        latest = snap.latest if snap is not None else None
        view = crawl_view([latest] if latest else [], now=time.time(), where=self.where)
        if latest is None:
            view["state"] = "starting"
        return view

    async def hosts(self, q: str, sort: str, limit: int) -> list[dict[str, Any]]:
        snap = self._snapshotter()
        return await snap.search(q, sort, limit) if snap is not None else []


class DirSource:
    """A crawl directory (see the module docstring); file reads run on ``worker``."""

    def __init__(self, directory: Path, worker: ThreadWorker) -> None:
        self.directory = directory
        self.where = str(directory)
        self._worker = worker

    def _read(self) -> dict[str, Any] | None:
        try:
            data = orjson.loads((self.directory / CONSOLE_FILE).read_bytes())
        except (OSError, orjson.JSONDecodeError):
            return None
        return data if isinstance(data, dict) else None

    async def state(self) -> dict[str, Any]:
        snap = await self._worker.call(self._read)
        view = crawl_view([snap] if snap else [], now=time.time(), where=self.where)
        if snap is None:
            view["error"] = (
                f"no {CONSOLE_FILE} in {self.directory} yet: a crawl of this version writes "
                "it within seconds of starting"
            )
        return view

    def _search(self, q: str, sort: str, limit: int) -> list[dict[str, Any]]:
        snap = self._read()
        known = {
            str(r.get("host")): r for r in _view_rows(crawl_view([snap] if snap else [], now=0))
        }
        path = self.directory / "frontier.sqlite3"
        rows: dict[str, dict[str, Any]] = {}
        if path.exists():
            order = {"queued": "queued DESC", "host": "host"}.get(sort, "admitted DESC")
            pattern = (
                "%" + q.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
            )
            try:
                con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
                try:
                    found = con.execute(
                        "SELECT host, queued, admitted FROM hosts WHERE host LIKE ? ESCAPE '\\'"
                        f" ORDER BY {order} LIMIT ?",
                        (pattern, limit),
                    ).fetchall()
                finally:
                    con.close()
            except sqlite3.Error:
                found = []
            budget = int(snap.get("host_budget", 0)) if snap else 0
            for host, queued, admitted in found:
                row = dict(known.get(host) or host_row(host, None, None, None, "", budget, 0))
                row.update(queued=queued, admitted=admitted)
                row["at_budget"] = bool(budget) and admitted >= budget
                rows[host] = row
        for host, r in known.items():
            if q.lower() in host:
                rows.setdefault(host, r)
        return _search_rows(list(rows.values()), q, sort, limit)

    async def hosts(self, q: str, sort: str, limit: int) -> list[dict[str, Any]]:
        return await self._worker.call(self._search, q, sort, limit)


class SharedSource:
    """A shared crawl in Redis (see the module docstring); reads run on ``worker``."""

    def __init__(self, store: str, crawl_id: str, worker: ThreadWorker) -> None:
        self._store = store  # with its password: never shown
        self.crawl_id = crawl_id
        self.where = f"crawl {crawl_id} in {mask_store_url(store)}"
        self._worker = worker
        self._client: Any = None

    def _connect(self) -> Any:
        if self._client is None:
            from headway.frontier.redis.connect import connect, parse_store_url

            self._client = connect(parse_store_url(self._store))
        return self._client

    def _read(self) -> dict[str, Any]:
        import redis

        from headway.frontier.redis.counts import read_counts
        from headway.frontier.redis.keys import CrawlKeys

        keys = CrawlKeys(self.crawl_id)
        now = time.time()
        try:
            client = self._connect()
            shards = client.hget(keys.meta, "shards")
            if shards is None:
                return {"error": f"no crawl {self.crawl_id!r} in {mask_store_url(self._store)}"}
            counts = read_counts(client, keys, int(shards))
            beats = client.zrangebyscore(keys.nodes, now - LIVE_WITHIN, "+inf", withscores=True)
            names = [n.decode() if isinstance(n, bytes) else str(n) for n, _ in beats]
            texts = client.mget([keys.console(n) for n in names]) if names else []
        except (redis.RedisError, HeadwayError, ValueError) as exc:
            self._client = None
            return {"error": mask_store_url(f"cannot read {self.where}: {exc}")}
        snaps = []
        for text in texts:
            if text is None:
                continue
            try:
                snap = orjson.loads(text)
            except orjson.JSONDecodeError:
                continue
            if isinstance(snap, dict):
                snaps.append(snap)
        frontier = {
            "queued": counts.queued,
            "leased": counts.leased,
            "done": counts.done,
            "failed": counts.failed,
            "seen": counts.seen,
            "fetched": counts.fetched,
            "revisits_parked": counts.revisits_parked,
            "shed": dict(counts.shed),
        }
        beat_of = {n: float(b) for n, (_, b) in zip(names, beats, strict=True)}
        return crawl_view(snaps, frontier=frontier, beats=beat_of, now=now, where=self.where)

    async def state(self) -> dict[str, Any]:
        view = await self._worker.call(self._read)
        if "error" in view and "now" not in view:
            empty = crawl_view([], now=time.time(), where=self.where)
            empty["error"] = view["error"]
            return empty
        return view

    async def hosts(self, q: str, sort: str, limit: int) -> list[dict[str, Any]]:
        view = await self.state()
        return _search_rows(_view_rows(view), q, sort, limit)

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None


class ControlDesk:
    """Records controls in the crawl's control log and keeps the latest for the page."""

    def __init__(self, ref: CrawlRef | None, worker: ThreadWorker) -> None:
        self.ref = ref
        self._worker = worker
        self._log: ControlLog | None = None
        self._seq = 0
        self._recent: deque[Control] = deque(maxlen=CONTROLS_SHOWN)

    @property
    def enabled(self) -> bool:
        return self.ref is not None

    def _open(self) -> ControlLog:
        if self._log is None:
            if self.ref is None:
                raise HeadwayError("this console has no control log")
            self._log = _open_control_log(self.ref)
        return self._log

    def _append(self, kind: str, args: Mapping[str, Any], node: str | None, origin: str) -> Control:
        checked = check_args(kind, args, node)
        return self._open().append(
            ControlKind(kind), checked, node=node, origin=origin, at=time.time()
        )

    async def append(
        self, kind: str, args: Mapping[str, Any], node: str | None, origin: str
    ) -> Control:
        """Record a control; ``ControlError`` (one line) when it is not acceptable."""
        return await self._worker.call(self._append, kind, args, node, origin)

    def _refresh(self) -> list[Control]:
        if self.ref is None:
            return []
        log = self._open()
        for _ in range(20):  # bounded: at most 20,000 new controls per read
            new = log.read_after(self._seq, 1000)
            if not new:
                break
            self._recent.extend(new)
            self._seq = new[-1].seq
        return list(reversed(self._recent))

    async def recent(self) -> list[dict[str, Any]]:
        """The latest controls, newest first ([] when the log cannot be read)."""
        try:
            controls = await self._worker.call(self._refresh)
        except HeadwayError:
            return []
        return [c.to_json() for c in controls]

    def close(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None
