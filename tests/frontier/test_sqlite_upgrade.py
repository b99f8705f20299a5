"""Frontier files of earlier schema versions open and are upgraded in place: version 1
(one node per file: its leases become the opening node's), version 2 (before URLs
carried the content handler they were admitted with: every URL is an ordinary link).
Nothing admitted is lost."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from headway.errors import StoreError
from headway.frontier.sqlite import SqliteFrontier
from headway.frontier.store import Completion, Settle
from tests.frontier.conftest import TEST_LIMITS, entry, fp_of, lease

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
    assert store.get_meta("frontier_schema") == "3"
    c = store.counts()
    assert (c.queued, c.leased, c.done, c.seen) == (1, 1, 1, 3)
    assert store.release_own_leases() == 1
    got = store.lease_many([("a.test", 5)], now=1, lease_seconds=10)
    assert sorted(u.url for u in got) == ["http://a.test/l", "http://a.test/q"]
    assert all(u.fetches == 0 and u.validators is None and u.handler is None for u in got)
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
    with pytest.raises(StoreError, match="schema 0, expected 3"):
        SqliteFrontier(db, TEST_LIMITS, node_id="n1")


#: The version-2 layout as the previous release wrote it (``urls`` without ``handler``).
V2_SCHEMA = """
CREATE TABLE seen (fp INTEGER PRIMARY KEY);
CREATE TABLE hosts (
  id INTEGER PRIMARY KEY, host TEXT NOT NULL UNIQUE,
  admitted INTEGER NOT NULL DEFAULT 0, queued INTEGER NOT NULL DEFAULT 0,
  ready_at REAL NOT NULL DEFAULT 0, min_not_before REAL, next_ready REAL NOT NULL DEFAULT 0);
CREATE INDEX hosts_ready ON hosts(next_ready, host) WHERE queued > 0;
CREATE TABLE urls (
  id INTEGER PRIMARY KEY, fp INTEGER NOT NULL, url TEXT NOT NULL, host_id INTEGER NOT NULL,
  depth INTEGER NOT NULL, priority INTEGER NOT NULL, via TEXT, attempts INTEGER NOT NULL,
  state INTEGER NOT NULL, not_before REAL NOT NULL, lease_expires REAL,
  owner TEXT, validators TEXT, fetches INTEGER NOT NULL DEFAULT 0);
CREATE INDEX urls_host_queue ON urls(host_id, priority, id) WHERE state = 0;
CREATE INDEX urls_host_wait ON urls(host_id, not_before) WHERE state = 0;
CREATE INDEX urls_queue ON urls(priority, id) WHERE state = 0;
CREATE INDEX urls_leases ON urls(lease_expires) WHERE state = 1;
CREATE TABLE totals (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE shed (reason TEXT PRIMARY KEY, count INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE payloads (
  digest TEXT PRIMARY KEY, uri TEXT NOT NULL, date TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE host_state (host TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
INSERT INTO totals VALUES ('queued', 1), ('leased', 1), ('done', 0), ('failed', 0), ('seen', 2);
INSERT INTO shed VALUES ('host-budget', 0), ('frontier-full', 0);
INSERT INTO meta VALUES ('frontier_schema', '2');
INSERT INTO hosts VALUES (1, 'a.test', 2, 1, 0, 5, 5);
"""


def test_version_2_file_is_upgraded_and_its_urls_are_links(tmp_path: Path) -> None:
    db = tmp_path / "frontier.sqlite3"
    con = sqlite3.connect(db)
    con.executescript(V2_SCHEMA)
    rows = [
        # a revisit waiting (fetched once, validators stored) and another node's lease
        (1, "http://a.test/sitemap.xml", 0, 5.0, None, None, '{"i": 60}', 1),
        (2, "http://a.test/q", 1, 0.0, 99.0, "n0", None, 0),
    ]
    con.executemany(
        "INSERT INTO urls VALUES (?, ?, ?, 1, 1, 10, NULL, 0, ?, ?, ?, ?, ?, ?)",
        [(r[0], fp_of(r[1]), *r[1:]) for r in rows],
    )
    con.executemany("INSERT INTO seen VALUES (?)", [(fp_of(r[1]),) for r in rows])
    con.commit()
    con.close()
    store = SqliteFrontier(db, TEST_LIMITS, node_id="n1")
    assert store.get_meta("frontier_schema") == "3"
    c = store.counts()
    assert (c.queued, c.leased, c.seen) == (1, 1, 2)
    assert store.reclaim_expired(now=100) == 1  # n0's lease, reclaimed as before
    got = {u.url: u for u in lease(store, "a.test", 5, now=10, lease_seconds=10)}
    assert set(got) == {"http://a.test/sitemap.xml", "http://a.test/q"}
    assert all(u.handler is None for u in got.values())
    assert got["http://a.test/sitemap.xml"].validators == '{"i": 60}'
    assert got["http://a.test/sitemap.xml"].fetches == 1
    # the upgraded file stores what new admissions say
    store.complete([Completion(u.id, Settle.DONE) for u in got.values()], [], now=11)
    store.add([entry("http://a.test/feed.xml", handler="feed")], now=12)
    store.close()
    again = SqliteFrontier(db, TEST_LIMITS, node_id="n1")
    (feed,) = lease(again, "a.test", 5, now=13, lease_seconds=10)
    assert (feed.url, feed.handler) == ("http://a.test/feed.xml", "feed")
    assert again.counts().done == 2
    again.close()
