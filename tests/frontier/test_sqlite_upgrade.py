"""A frontier file of schema version 1 (the previous release) opens and is upgraded in
place: nothing admitted is lost, and its leases become the opening node's."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from headway.errors import StoreError
from headway.frontier.sqlite import SqliteFrontier
from headway.frontier.store import Completion, Settle
from tests.frontier.conftest import TEST_LIMITS, entry, fp_of

#: The version-1 layout as the previous release wrote it.
V1_SCHEMA = """
CREATE TABLE seen (fp INTEGER PRIMARY KEY);
CREATE TABLE hosts (
  id INTEGER PRIMARY KEY, host TEXT NOT NULL UNIQUE,
  admitted INTEGER NOT NULL DEFAULT 0, queued INTEGER NOT NULL DEFAULT 0,
  ready_at REAL NOT NULL DEFAULT 0, min_not_before REAL, next_ready REAL NOT NULL DEFAULT 0);
CREATE INDEX hosts_ready ON hosts(next_ready, host) WHERE queued > 0;
CREATE TABLE urls (
  id INTEGER PRIMARY KEY, fp INTEGER NOT NULL, url TEXT NOT NULL, host_id INTEGER NOT NULL,
  depth INTEGER NOT NULL, priority INTEGER NOT NULL, via TEXT, attempts INTEGER NOT NULL,
  state INTEGER NOT NULL, not_before REAL NOT NULL, lease_expires REAL);
CREATE INDEX urls_host_queue ON urls(host_id, priority, id) WHERE state = 0;
CREATE INDEX urls_host_wait ON urls(host_id, not_before) WHERE state = 0;
CREATE INDEX urls_queue ON urls(priority, id) WHERE state = 0;
CREATE INDEX urls_leases ON urls(lease_expires) WHERE state = 1;
CREATE TABLE totals (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE shed (reason TEXT PRIMARY KEY, count INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
INSERT INTO totals VALUES ('queued', 1), ('leased', 1), ('done', 1), ('failed', 0), ('seen', 3);
INSERT INTO shed VALUES ('host-budget', 0), ('frontier-full', 0);
INSERT INTO meta VALUES ('frontier_schema', '1');
INSERT INTO hosts VALUES (1, 'a.test', 3, 1, 0, 0, 0);
"""


def _v1_file(path: Path) -> None:
    con = sqlite3.connect(path)
    con.executescript(V1_SCHEMA)
    rows = [
        (1, "http://a.test/q", 0, 0),
        (2, "http://a.test/l", 1, 99),
        (3, "http://a.test/d", 2, None),
    ]
    con.executemany(
        "INSERT INTO urls VALUES (?, ?, ?, 1, 0, 0, NULL, 0, ?, 0, ?)",
        [(i, fp_of(u), u, state, exp) for i, u, state, exp in rows],
    )
    con.executemany("INSERT INTO seen VALUES (?)", [(fp_of(u),) for _, u, _, _ in rows])
    con.commit()
    con.close()


def test_version_1_file_is_upgraded_and_its_leases_are_the_openers(tmp_path: Path) -> None:
    db = tmp_path / "frontier.sqlite3"
    _v1_file(db)
    store = SqliteFrontier(db, TEST_LIMITS, node_id="n1")
    assert store.get_meta("frontier_schema") == "2"
    c = store.counts()
    assert (c.queued, c.leased, c.done, c.seen) == (1, 1, 1, 3)
    assert store.release_own_leases() == 1
    got = store.lease_many([("a.test", 5)], now=1, lease_seconds=10)
    assert sorted(u.url for u in got) == ["http://a.test/l", "http://a.test/q"]
    assert all(u.fetches == 0 and u.validators is None for u in got)
    store.complete([Completion(u.id, Settle.DONE) for u in got], [], now=2)
    assert store.add([entry("http://a.test/d")], now=3).duplicates == 1
    store.put_payloads([("sha1:A", "http://a.test/q", "2026-01-01T00:00:00Z")])
    store.close()
    again = SqliteFrontier(db, TEST_LIMITS, node_id="n1")
    assert again.counts().done == 3
    assert again.find_payloads(["sha1:A"]) == {
        "sha1:A": ("http://a.test/q", "2026-01-01T00:00:00Z")
    }
    again.close()


def test_unknown_schema_is_refused_not_upgraded(tmp_path: Path) -> None:
    db = tmp_path / "frontier.sqlite3"
    _v1_file(db)
    con = sqlite3.connect(db)
    con.execute("UPDATE meta SET value = '0' WHERE key = 'frontier_schema'")
    con.commit()
    con.close()
    with pytest.raises(StoreError, match="schema 0, expected 2"):
        SqliteFrontier(db, TEST_LIMITS, node_id="n1")
