"""The embedded frontier backend: one SQLite file in the crawl directory.

Contract: implements ``FrontierStore`` (see ``store.py``); every public method is one
transaction, so a process killed at any moment (``kill -9``) reopens to the state after
the last method that returned. Durability: WAL journal with ``synchronous=NORMAL``: a
commit is in the WAL (the OS page cache) when the method returns, which survives a
process kill; only an OS crash or power loss may roll back the last few commits (never
corrupt the file). Used from one worker thread (``check_same_thread=False`` because it
may be created on another). Memory is bounded: the SQLite page cache plus the Bloom
bitmap; nothing per URL is kept in Python.

Schema (version 3; a file of version 1 or 2 is upgraded in place when opened):

- ``seen(fp INTEGER PRIMARY KEY)``: every admitted fingerprint, shed ones included.
- ``hosts(id, host UNIQUE, admitted, queued, ready_at, min_not_before, next_ready)``:
  ``admitted`` counts the host's rows in ``urls`` (any state, bounded by the budget);
  ``min_not_before`` is the earliest not_before of its queued URLs (NULL when none);
  ``next_ready = max(ready_at, min_not_before)``; all maintained incrementally.
  Index ``(next_ready, host) WHERE queued > 0`` serves ``ready_hosts``.
- ``urls(id, fp, url, host_id, depth, priority, via, attempts, state, not_before,
  lease_expires, owner, validators, fetches, handler)`` (``owner``: node id of a lease;
  ``validators``/``fetches``: recrawl state of the last DONE; ``handler``: the content
  handler a document was admitted to be read with, NULL for a link) with partial indexes:
  ``(host_id, priority, id)`` and ``(host_id, not_before)`` on queued rows (leasing,
  host budget, host ready time), ``(priority, id)`` on queued rows (global shedding),
  ``(lease_expires)`` on leased rows, ``(host_id)`` on parked rows.
  Shed URLs have no row; an evicted URL's row is deleted (its fp stays in ``seen``).
- ``totals(name, value)``: queued/leased/done/failed/seen/fetched/parked counters
  (``fetched``: DONE settlements, revisits included); ``shed(reason,
  count)``; ``meta(key, value)``.
- ``payloads(digest, uri, date)``: first capture of each payload digest (revisits).
- ``host_state(host, value)``: opaque per-host state strings of the node.

Admission (the seen check, host budgets and shedding) is in ``admission.py``, settling
leased URLs in ``settle.py``; the schema and the host rows of one transaction (``Tx``)
in ``rows.py``.

The in-memory Bloom filter in front of ``seen``, its growth and its checkpoints are
``SeenFilter``'s (``seenfilter.py``).
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from headway import crashpoints
from headway.crashpoints import CrashPoint
from headway.errors import StoreError
from headway.frontier.bloom import BloomFilter
from headway.frontier.sqlite.admission import admit
from headway.frontier.sqlite.park import park_revisits, unpark_revisits
from headway.frontier.sqlite.rows import (
    FAILED,
    LEASED,
    MIGRATIONS,
    QUEUED,
    SCHEMA,
    SCHEMA_VERSION,
    TOTALS,
    Tx,
    chunks,
)
from headway.frontier.sqlite.seenfilter import SeenFilter
from headway.frontier.sqlite.settle import settle
from headway.frontier.store import (
    SHED_REASONS,
    AddResult,
    Completion,
    FrontierCounts,
    FrontierLimits,
    LeasedUrl,
    UrlEntry,
    counts_from_totals,
)

log = logging.getLogger(__name__)

DEFAULT_LIMITS = FrontierLimits()

#: The oldest SQLite the frontier runs on (``INSERT ... RETURNING``, 3.35, March 2021).
MIN_SQLITE = (3, 35, 0)

_LEASE_COLS = "SELECT id, url, depth, priority, fp, via, attempts, validators, fetches, handler"
#: Ready URLs of a host by priority, then oldest; pinned to the host-queue index (the
#: planner would otherwise sort the host's whole queue). ``{kind}`` narrows to new URLs.
_BY_PRIORITY = (
    f"{_LEASE_COLS} FROM urls INDEXED BY urls_host_queue"
    f" WHERE host_id = ? AND state = {QUEUED} AND not_before <= ?{{kind}}"
    " ORDER BY priority, id LIMIT ?"
)
#: Due revisits of a host (fetched before), most overdue first.
_DUE_REVISITS = (
    f"{_LEASE_COLS} FROM urls INDEXED BY urls_host_wait"
    f" WHERE host_id = ? AND state = {QUEUED} AND not_before <= ? AND fetches > 0"
    " ORDER BY not_before, id LIMIT ?"
)
#: The queries of one host's lease, in turn, for each ``revisits_first`` choice.
_LEASE_PASSES: dict[bool | None, tuple[str, ...]] = {
    None: (_BY_PRIORITY.format(kind=""),),
    True: (_DUE_REVISITS, _BY_PRIORITY.format(kind="")),
    False: (_BY_PRIORITY.format(kind=" AND fetches = 0"), _BY_PRIORITY.format(kind="")),
}


class SqliteFrontier:
    """``FrontierStore`` on one SQLite file (WAL, synchronous=NORMAL), for node
    ``node_id``. One instance per file at a time (the crawl directory's lock sees to it):
    counters are mirrored in memory."""

    def __init__(
        self,
        path: Path,
        limits: FrontierLimits = DEFAULT_LIMITS,
        *,
        node_id: str,
        cache_size_kib: int = 64_000,
    ) -> None:
        if not node_id:
            raise ValueError("node_id must not be empty")
        if sqlite3.sqlite_version_info < MIN_SQLITE:
            raise StoreError(
                f"{path}: the frontier needs SQLite {'.'.join(map(str, MIN_SQLITE))} or later"
                f" (INSERT ... RETURNING); this Python has SQLite {sqlite3.sqlite_version}"
            )
        self._node_id = node_id
        self._limits = limits
        self._seen: SeenFilter | None = None  # once the file is open and upgraded
        try:
            conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise StoreError(f"{path}: cannot use WAL journal (got {mode})")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute(f"PRAGMA cache_size=-{int(cache_size_kib)}")
            conn.execute("PRAGMA temp_store=MEMORY")
            conn.execute("PRAGMA busy_timeout=5000")
            conn.executescript(f"BEGIN IMMEDIATE;{SCHEMA}COMMIT;")
        except sqlite3.Error as exc:
            raise StoreError(f"{path}: cannot open frontier: {exc}") from exc
        self._conn: sqlite3.Connection | None = conn
        self._totals: dict[str, int] = dict.fromkeys(TOTALS, 0)
        self._shed: dict[str, int] = dict.fromkeys(SHED_REASONS, 0)
        version = self.get_meta("frontier_schema")
        if version is not None and version in MIGRATIONS:
            self._upgrade(path, version)
            version = self.get_meta("frontier_schema")
        if version != SCHEMA_VERSION:
            self.close()
            raise StoreError(f"{path}: frontier schema {version}, expected {SCHEMA_VERSION}")
        self._totals = dict(conn.execute("SELECT name, value FROM totals"))
        self._shed = dict(conn.execute("SELECT reason, count FROM shed"))
        seen = self._totals["seen"]
        bitmap = Path(path).with_name(Path(path).name + ".bloom")
        self._seen = SeenFilter(conn, bitmap, limits, seen, int(cache_size_kib) * 1024)
        how, took = self._seen.opened
        log.info(
            "frontier %s opened: Bloom filter of %d seen fingerprints (%d KiB) %s in %.2f s",
            path,
            seen,
            self._seen.bloom.nbytes // 1024,
            how,
            took,
        )

    @property
    def node_id(self) -> str:
        return self._node_id

    def _upgrade(self, path: Path, version: str) -> None:
        with self._tx() as tx:
            for sql in MIGRATIONS[version]:
                tx.conn.execute(sql, {"node": self._node_id} if ":node" in sql else {})
        log.info("frontier %s upgraded from schema %s to %s", path, version, SCHEMA_VERSION)

    # -- transactions ------------------------------------------------------------------

    @contextmanager
    def _tx(self) -> Iterator[Tx]:
        conn = self._conn
        if conn is None:
            raise StoreError("frontier store is closed")
        try:
            conn.execute("BEGIN IMMEDIATE")
            tx = Tx(conn)
            yield tx
            tx.flush()
            crashpoints.reached(CrashPoint.FRONTIER_UNCOMMITTED)
            conn.execute("COMMIT")
        except BaseException as exc:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            if isinstance(exc, sqlite3.Error):
                raise StoreError(f"frontier store failed: {exc}") from exc
            raise
        for name, delta in tx.totals.items():
            self._totals[name] += delta
        for reason, delta in tx.shed.items():
            self._shed[reason] = self._shed.get(reason, 0) + delta
        if self._seen is not None:
            self._seen.committed(tx.totals["seen"], self._totals["seen"])

    # -- FrontierStore -----------------------------------------------------------------

    def add(self, entries: Sequence[UrlEntry], now: float) -> AddResult:
        with self._tx() as tx:
            return admit(tx, self._filter(), self._limits, self._totals["queued"], entries)

    def complete(
        self, completions: Sequence[Completion], discovered: Sequence[UrlEntry], now: float
    ) -> AddResult:
        with self._tx() as tx:
            wanted: dict[int, Completion] = {}
            for c in completions:
                wanted.setdefault(c.id, c)
            settle(tx, wanted)
            return admit(tx, self._filter(), self._limits, self._totals["queued"], discovered)

    def ready_hosts(
        self, now: float, limit: int, exclude: Collection[str] = ()
    ) -> list[tuple[str, float]]:
        out: list[tuple[str, float]] = []
        if limit <= 0:
            return out
        for host, ready in self._read(
            "SELECT host, next_ready FROM hosts WHERE queued > 0 AND next_ready <= ?"
            " ORDER BY next_ready, host LIMIT ?",
            (now, limit + len(exclude)),
        ):
            if host not in exclude:
                out.append((host, ready))
                if len(out) >= limit:
                    break
        return out

    def next_ready_time(self, exclude: Collection[str] = ()) -> float | None:
        for host, ready in self._read(
            "SELECT host, next_ready FROM hosts WHERE queued > 0 ORDER BY next_ready, host LIMIT ?",
            (len(exclude) + 1,),
        ):
            if host not in exclude:
                return float(ready)
        return None

    def set_host_ready_at(self, host: str, ready_at: float) -> None:
        with self._tx() as tx:
            tx.hosts_named((host,), create=True)
            tx.by_name[host].ready_at = ready_at

    def lease_many(
        self,
        wants: Sequence[tuple[str, int]],
        now: float,
        lease_seconds: float,
        *,
        revisits_first: bool | None = None,
    ) -> list[LeasedUrl]:
        out: list[LeasedUrl] = []
        with self._tx() as tx:
            tx.hosts_named({h for h, _ in wants}, create=False)
            expires = now + lease_seconds
            for host, n in wants:
                h = tx.by_name.get(host)
                if h is None or h.queued <= 0 or n <= 0:
                    continue
                rows: list[Any] = []
                for sql in _LEASE_PASSES[revisits_first]:
                    want = min(n, h.queued) - len(rows)
                    if want <= 0:
                        break
                    got = tx.conn.execute(sql, (h.id, now, want)).fetchall()
                    if got:
                        # leased before the next pass reads, so it is not read twice
                        tx.conn.executemany(
                            f"UPDATE urls SET state = {LEASED}, lease_expires = ?, owner = ?"
                            " WHERE id = ?",
                            [(expires, self._node_id, r[0]) for r in got],
                        )
                        rows += got
                if not rows:
                    continue
                h.pop(len(rows))
                tx.totals["queued"] -= len(rows)
                tx.totals["leased"] += len(rows)
                out.extend(
                    LeasedUrl(
                        r[0], r[1], host, r[2], r[3], r[4], r[5], r[6], expires, r[7], r[8], r[9]
                    )
                    for r in rows
                )
        return out

    def extend_leases(self, ids: Sequence[int], now: float, lease_seconds: float) -> int:
        if not ids:
            return 0
        expires = now + lease_seconds
        with self._tx() as tx:
            cur = tx.conn.executemany(
                f"UPDATE urls SET lease_expires = ? WHERE id = ? AND state = {LEASED}"
                " AND owner = ?",
                [(expires, i, self._node_id) for i in ids],
            )
            return cur.rowcount

    def drop_host(self, host: str, reason: str) -> int:
        with self._tx() as tx:
            tx.hosts_named((host,), create=False)
            h = tx.by_name.get(host)
            if h is None:
                return 0
            cur = tx.conn.execute(
                f"UPDATE urls SET state = {FAILED} WHERE host_id = ? AND state = {QUEUED}", (h.id,)
            )
            dropped = cur.rowcount
            h.pop(dropped)
            tx.totals["queued"] -= dropped
            tx.totals["failed"] += dropped
        if dropped:
            log.info("dropped %d queued URLs of %s: %s", dropped, host, reason)
        return dropped

    def park_revisits(self) -> int:
        with self._tx() as tx:
            return park_revisits(tx)

    def unpark_revisits(self) -> int:
        with self._tx() as tx:
            return unpark_revisits(tx)

    def reclaim_expired(self, now: float, limit: int = 1000) -> int:
        with self._tx() as tx:
            rows = tx.conn.execute(
                f"SELECT id, host_id, not_before FROM urls WHERE state = {LEASED}"
                " AND lease_expires < ? ORDER BY lease_expires LIMIT ?",
                (now, limit),
            ).fetchall()
            self._requeue(tx, rows)
            return len(rows)

    def release_own_leases(self) -> int:
        with self._tx() as tx:
            rows = tx.conn.execute(
                f"SELECT id, host_id, not_before FROM urls WHERE state = {LEASED} AND owner = ?",
                (self._node_id,),
            ).fetchall()
            self._requeue(tx, rows)
            return len(rows)

    def _requeue(self, tx: Tx, rows: list[tuple[int, int, float]]) -> None:
        tx.conn.executemany(
            f"UPDATE urls SET state = {QUEUED}, lease_expires = NULL, owner = NULL WHERE id = ?",
            [(r[0],) for r in rows],
        )
        for _, host_id, not_before in rows:
            tx.host(host_id).push(not_before)
        tx.totals["leased"] -= len(rows)
        tx.totals["queued"] += len(rows)

    def find_payloads(self, digests: Sequence[str]) -> dict[str, tuple[str, str]]:
        found: dict[str, tuple[str, str]] = {}
        wanted = list(dict.fromkeys(digests))
        for part in chunks(wanted):
            marks = ",".join("?" * len(part))
            for digest, uri, date in self._read(
                f"SELECT digest, uri, date FROM payloads WHERE digest IN ({marks})", part
            ):
                found[digest] = (uri, date)
        return found

    def put_payloads(self, items: Sequence[tuple[str, str, str]]) -> None:
        if not items:
            return
        with self._tx() as tx:
            tx.conn.executemany(
                "INSERT OR IGNORE INTO payloads(digest, uri, date) VALUES (?, ?, ?)", items
            )

    def get_host_states(self, hosts: Sequence[str]) -> dict[str, str]:
        found: dict[str, str] = {}
        for part in chunks(list(dict.fromkeys(hosts))):
            marks = ",".join("?" * len(part))
            for host, value in self._read(
                f"SELECT host, value FROM host_state WHERE host IN ({marks})", part
            ):
                found[host] = value
        return found

    def put_host_states(self, items: Sequence[tuple[str, str]]) -> None:
        if not items:
            return
        with self._tx() as tx:
            tx.conn.executemany(
                "INSERT OR REPLACE INTO host_state(host, value) VALUES (?, ?)", items
            )

    def host_counts(self, hosts: Sequence[str]) -> dict[str, tuple[int, int]]:
        found: dict[str, tuple[int, int]] = {}
        for part in chunks(list(dict.fromkeys(hosts))):
            marks = ",".join("?" * len(part))
            for host, queued, admitted in self._read(
                f"SELECT host, queued, admitted FROM hosts WHERE host IN ({marks})", part
            ):
                found[host] = (queued, admitted)
        return found

    def counts(self) -> FrontierCounts:
        (hosts_queued,) = self._read("SELECT count(*) FROM hosts WHERE queued > 0", ())[0]
        return counts_from_totals(self._totals, self._shed, hosts_queued)

    def get_meta(self, key: str) -> str | None:
        rows = self._read("SELECT value FROM meta WHERE key = ?", (key,))
        return str(rows[0][0]) if rows else None

    def set_meta(self, key: str, value: str) -> None:
        with self._tx() as tx:
            tx.conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

    def shared(self) -> None:
        return None  # one node's own frontier

    def close(self) -> None:
        if self._conn is not None:
            if self._seen is not None:
                self._seen.close(self._totals["seen"])
            self._conn.close()
            self._conn = None

    # -- helpers -----------------------------------------------------------------------

    def _filter(self) -> BloomFilter:
        if self._seen is None:
            raise StoreError("frontier store is closed")
        return self._seen.bloom

    def _read(self, sql: str, params: Sequence[Any]) -> list[Any]:
        if self._conn is None:
            raise StoreError("frontier store is closed")
        try:
            return self._conn.execute(sql, params).fetchall()
        except sqlite3.Error as exc:
            raise StoreError(f"frontier store failed: {exc}") from exc
