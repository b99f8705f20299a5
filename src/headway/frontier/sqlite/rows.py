"""Schema and per-transaction row bookkeeping of the SQLite frontier (see ``sqlite.py``
for the layout and the durability contract)."""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Iterator, Sequence
from typing import Any

from headway.frontier.store import SHED_REASONS, UrlEntry, UrlState

SCHEMA_VERSION = "3"
CHUNK = 900  # host parameters per IN (...) query, far below SQLite's limit
TOTALS = ("queued", "leased", "done", "failed", "seen", "fetched", "parked")
QUEUED, LEASED, DONE, FAILED, PARKED = (int(s) for s in UrlState)

SCHEMA = f"""
CREATE TABLE IF NOT EXISTS seen (fp INTEGER PRIMARY KEY);
CREATE TABLE IF NOT EXISTS hosts (
  id INTEGER PRIMARY KEY, host TEXT NOT NULL UNIQUE,
  admitted INTEGER NOT NULL DEFAULT 0, queued INTEGER NOT NULL DEFAULT 0,
  ready_at REAL NOT NULL DEFAULT 0, min_not_before REAL, next_ready REAL NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS hosts_ready ON hosts(next_ready, host) WHERE queued > 0;
CREATE TABLE IF NOT EXISTS urls (
  id INTEGER PRIMARY KEY, fp INTEGER NOT NULL, url TEXT NOT NULL, host_id INTEGER NOT NULL,
  depth INTEGER NOT NULL, priority INTEGER NOT NULL, via TEXT, attempts INTEGER NOT NULL,
  state INTEGER NOT NULL, not_before REAL NOT NULL, lease_expires REAL,
  owner TEXT, validators TEXT, fetches INTEGER NOT NULL DEFAULT 0, handler TEXT);
CREATE INDEX IF NOT EXISTS urls_host_queue ON urls(host_id, priority, id) WHERE state = {QUEUED};
CREATE INDEX IF NOT EXISTS urls_host_wait ON urls(host_id, not_before) WHERE state = {QUEUED};
CREATE INDEX IF NOT EXISTS urls_queue ON urls(priority, id) WHERE state = {QUEUED};
CREATE INDEX IF NOT EXISTS urls_leases ON urls(lease_expires) WHERE state = {LEASED};
CREATE INDEX IF NOT EXISTS urls_parked ON urls(host_id) WHERE state = {PARKED};
CREATE TABLE IF NOT EXISTS totals (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS shed (reason TEXT PRIMARY KEY, count INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS payloads (
  digest TEXT PRIMARY KEY, uri TEXT NOT NULL, date TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS host_state (host TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
INSERT OR IGNORE INTO totals VALUES {",".join(f"('{n}', 0)" for n in TOTALS)};
INSERT OR IGNORE INTO shed VALUES {",".join(f"('{r}', 0)" for r in SHED_REASONS)};
INSERT OR IGNORE INTO meta VALUES ('frontier_schema', '{SCHEMA_VERSION}');
"""


#: Version 1 -> 2: leases get an owner (the leases of a version-1 file all belong to the
#: node opening it: version 1 had one node per file), URLs get recrawl validators and a
#: fetch count; the payloads and host_state tables are created by ``SCHEMA`` itself.
MIGRATE_1_TO_2 = (
    "ALTER TABLE urls ADD COLUMN owner TEXT",
    "ALTER TABLE urls ADD COLUMN validators TEXT",
    "ALTER TABLE urls ADD COLUMN fetches INTEGER NOT NULL DEFAULT 0",
    f"UPDATE urls SET owner = :node WHERE state = {LEASED}",
    "UPDATE meta SET value = '2' WHERE key = 'frontier_schema'",
)
#: Version 2 -> 3: URLs get the content handler they were admitted to be read with
#: (NULL, an ordinary link, for every URL already admitted).
MIGRATE_2_TO_3 = (
    "ALTER TABLE urls ADD COLUMN handler TEXT",
    "UPDATE meta SET value = '3' WHERE key = 'frontier_schema'",
)
#: Schema versions this code upgrades in place: the steps from each, applied in order
#: in one transaction.
MIGRATIONS: dict[str, tuple[str, ...]] = {
    "1": MIGRATE_1_TO_2 + MIGRATE_2_TO_3,
    "2": MIGRATE_2_TO_3,
}


def chunks(items: Sequence[Any]) -> Iterator[Sequence[Any]]:
    for i in range(0, len(items), CHUNK):
        yield items[i : i + CHUNK]


def by_priority(e: UrlEntry) -> int:
    return e.priority


class HostRow:
    """A host row loaded for the length of one transaction."""

    __slots__ = ("admitted", "id", "min_nb", "name", "queued", "ready_at", "stale")

    def __init__(self, row: tuple[Any, ...]) -> None:
        self.id: int = row[0]
        self.name: str = row[1]
        self.admitted: int = row[2]
        self.queued: int = row[3]
        self.ready_at: float = row[4]
        self.min_nb: float | None = row[5]
        self.stale = False  # queued URLs left: min_nb must be recomputed at flush

    def push(self, not_before: float) -> None:
        self.queued += 1
        self.min_nb = not_before if self.min_nb is None else min(self.min_nb, not_before)

    def pop(self, count: int = 1) -> None:
        self.queued -= count
        self.stale = True


class Tx:
    """Deltas of one transaction, written before COMMIT and mirrored after it."""

    __slots__ = ("by_name", "conn", "hosts", "shed", "totals")

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.hosts: dict[int, HostRow] = {}
        self.by_name: dict[str, HostRow] = {}
        self.totals = dict.fromkeys(TOTALS, 0)
        self.shed = dict.fromkeys(SHED_REASONS, 0)

    def keep(self, h: HostRow) -> HostRow:
        self.hosts[h.id] = h
        self.by_name[h.name] = h
        return h

    def hosts_named(self, names: Collection[str], create: bool) -> None:
        """Load the named hosts (creating missing ones when ``create``); then in
        ``by_name``."""
        wanted = [n for n in names if n not in self.by_name]
        for part in chunks(wanted):
            marks = ",".join("?" * len(part))
            for row in self.conn.execute(
                f"SELECT {HOST_COLS} FROM hosts WHERE host IN ({marks})", part
            ):
                self.keep(HostRow(row))
        if create:
            for name in wanted:
                if name not in self.by_name:
                    cur = self.conn.execute("INSERT INTO hosts(host) VALUES (?)", (name,))
                    assert cur.lastrowid is not None
                    self.keep(HostRow((cur.lastrowid, name, 0, 0, 0.0, None)))

    def host(self, host_id: int) -> HostRow:
        """The host row ``host_id``, loaded once per transaction."""
        h = self.hosts.get(host_id)
        if h is None:
            row = self.conn.execute(f"SELECT {HOST_COLS} FROM hosts WHERE id = ?", (host_id,))
            h = self.keep(HostRow(row.fetchone()))
        return h

    def flush(self) -> None:
        """Write the loaded host rows and the deltas (before COMMIT)."""
        rows = []
        for h in self.hosts.values():
            if h.queued <= 0:
                h.min_nb = None
            elif h.stale:
                h.min_nb = self.conn.execute(
                    f"SELECT min(not_before) FROM urls WHERE host_id = ? AND state = {QUEUED}",
                    (h.id,),
                ).fetchone()[0]
            nxt = h.ready_at if h.min_nb is None else max(h.ready_at, h.min_nb)
            rows.append((h.admitted, h.queued, h.ready_at, h.min_nb, nxt, h.id))
        self.conn.executemany(
            "UPDATE hosts SET admitted = ?, queued = ?, ready_at = ?, min_not_before = ?,"
            " next_ready = ? WHERE id = ?",
            rows,
        )
        self.conn.executemany(
            "UPDATE totals SET value = value + ? WHERE name = ?",
            [(d, n) for n, d in self.totals.items() if d],
        )
        self.conn.executemany(
            "UPDATE shed SET count = count + ? WHERE reason = ?",
            [(d, r) for r, d in self.shed.items() if d],
        )


HOST_COLS = "id, host, admitted, queued, ready_at, min_not_before"
