"""The embedded frontier backend on SQLite (frontier stage, the default): one file inside
the node's crawl directory. The ``FrontierStore`` implementation (``backend``), its
admission of new URLs (``admission``), the settling of leased ones (``settle``), the
parking of revisits (``park``) and the schema and host rows of one transaction
(``rows``). ``BACKEND`` is what
``headway.frontier.backends`` finds for an empty ``store`` setting."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from headway.errors import StoreError
from headway.frontier.backends import StoreTarget
from headway.frontier.sqlite.backend import SqliteFrontier
from headway.frontier.store import FrontierCounts, counts_from_totals

#: The frontier's file name inside the crawl directory.
FRONTIER_FILE = "frontier.sqlite3"


class SqliteBackend:
    """Opens the crawl directory's frontier file; reads its totals read-only."""

    def check(self, store: str) -> None:
        """Nothing to check: the embedded store is named by an empty ``store``."""

    def open(self, target: StoreTarget) -> SqliteFrontier:
        return SqliteFrontier(
            target.crawl_dir / FRONTIER_FILE,
            target.limits,
            node_id=target.node_id,
            cache_size_kib=target.cache_mib * 1024,
        )

    def read_counts(self, target: StoreTarget) -> FrontierCounts | None:
        path = target.crawl_dir / FRONTIER_FILE
        return read_counts(path) if path.exists() else None

    def shown(self, store: str) -> str:
        return store


def read_counts(path: Path) -> FrontierCounts:
    """The totals of a frontier file, read without opening it for writing or loading its
    Bloom filter: for looking at a crawl, also a running one."""
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            totals = dict(con.execute("SELECT name, value FROM totals"))
            shed = dict(con.execute("SELECT reason, count FROM shed"))
            (hosts,) = con.execute("SELECT count(*) FROM hosts WHERE queued > 0").fetchone()
        finally:
            con.close()
    except sqlite3.Error as exc:
        raise StoreError(f"cannot read the frontier {path}: {exc}") from exc
    return counts_from_totals(totals, shed, hosts)


BACKEND = SqliteBackend()

__all__ = ["BACKEND", "FRONTIER_FILE", "SqliteFrontier", "read_counts"]
