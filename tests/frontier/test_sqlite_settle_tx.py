"""SQLite: a URL's next due time, its validators and its settlement are written in one
transaction, never two (a crash between two would leave a page settled without its due
time or validators, or the reverse)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from headway.frontier.sqlite import SqliteFrontier
from headway.frontier.store import Completion, Settle
from tests.frontier.conftest import TEST_LIMITS, entry, lease


def _statements(store: SqliteFrontier) -> list[str]:
    """Every statement the store's connection runs from now on (appended as they run)."""
    seen: list[str] = []
    conn = store._conn
    assert isinstance(conn, sqlite3.Connection)
    conn.set_trace_callback(seen.append)
    return seen


def test_revisit_settlement_due_time_and_validators_commit_together(tmp_path: Path) -> None:
    path = tmp_path / "frontier.db"
    store = SqliteFrontier(path, TEST_LIMITS, node_id="n")
    try:
        store.add([entry("http://a.test/1"), entry("http://a.test/2")], now=0)
        leased = lease(store, "a.test", 2, now=0, lease_seconds=60)
        assert len(leased) == 2
        seen = _statements(store)
        store.complete(
            [
                Completion(leased[0].id, Settle.DONE, revisit_at=500.0, validators="etag-1"),
                Completion(leased[1].id, Settle.DONE, revisit_at=900.0, validators="etag-2"),
            ],
            [entry("http://a.test/3")],
            now=1,
        )
        store._conn.set_trace_callback(None)  # type: ignore[union-attr]
        words = [s.split(None, 1)[0].upper() for s in seen]
        # one BEGIN, one COMMIT, every write of the settlement between them
        assert words.count("BEGIN") == 1 and words.count("COMMIT") == 1, seen
        begin, commit = words.index("BEGIN"), words.index("COMMIT")
        writes = [i for i, w in enumerate(words) if w in ("UPDATE", "INSERT", "DELETE")]
        assert writes and all(begin < i < commit for i in writes), seen
    finally:
        store.close()
    # what was committed: the settlement with its due time and its validators
    rows = dict(
        (url, (state, not_before, validators, fetches))
        for url, state, not_before, validators, fetches in sqlite3.connect(path).execute(
            "SELECT url, state, not_before, validators, fetches FROM urls"
        )
    )
    queued = rows["http://a.test/3"][0]
    assert rows["http://a.test/1"] == (queued, 500.0, "etag-1", 1)
    assert rows["http://a.test/2"] == (queued, 900.0, "etag-2", 1)
