"""The control log of a crawl directory: a ``controls`` table in the frontier file.

Contract: implements ``ControlLog`` on its own connection to the frontier file, so a
separate process (``headway pause DIR``, the console) appends while the node runs:
WAL journal, each append one short transaction, waiting up to ``busy_timeout`` seconds
for the node's transaction to end. ``seq`` is the table's INTEGER PRIMARY KEY
(AUTOINCREMENT: never reused). Schema::

    controls(seq INTEGER PRIMARY KEY AUTOINCREMENT, at REAL, kind TEXT, node TEXT,
             args TEXT (JSON), origin TEXT)
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from headway.control.log import Control, ControlKind, control_from_row, encode_args
from headway.errors import StoreError

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS controls(seq INTEGER PRIMARY KEY AUTOINCREMENT,"
    " at REAL NOT NULL, kind TEXT NOT NULL, node TEXT, args TEXT NOT NULL,"
    " origin TEXT NOT NULL)"
)


class SqliteControlLog:
    """The ``controls`` table of the frontier file ``path`` (which must exist unless
    ``create``); ``read_only`` opens it for reading (a report of a finished crawl)."""

    def __init__(
        self,
        path: Path,
        *,
        create: bool = False,
        read_only: bool = False,
        busy_timeout: float = 10.0,
    ) -> None:
        self._path = path
        if not create and not path.exists():
            raise StoreError(f"no frontier file {path}")
        try:
            if read_only:
                conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None)
            else:
                conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
                conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(f"PRAGMA busy_timeout={int(busy_timeout * 1000)}")
            if not read_only:
                conn.execute(SCHEMA)
        except sqlite3.Error as exc:
            raise StoreError(f"{path}: cannot open the control log: {exc}") from exc
        self._conn: sqlite3.Connection | None = conn
        self._read_only = read_only

    def append(
        self,
        kind: ControlKind,
        args: Mapping[str, Any],
        *,
        node: str | None,
        origin: str,
        at: float,
    ) -> Control:
        conn = self._open()
        text = encode_args(args)
        try:
            cur = conn.execute(
                "INSERT INTO controls(at, kind, node, args, origin) VALUES (?, ?, ?, ?, ?)",
                (at, str(kind), node, text, origin),
            )
        except sqlite3.Error as exc:
            raise StoreError(f"{self._path}: cannot record the control: {exc}") from exc
        seq = cur.lastrowid
        assert seq is not None
        return Control(seq, ControlKind(kind), node, dict(args), origin, at)

    def read_after(self, seq: int, limit: int = 1000) -> list[Control]:
        conn = self._open()
        try:
            rows = conn.execute(
                "SELECT seq, kind, node, args, origin, at FROM controls WHERE seq > ?"
                " ORDER BY seq LIMIT ?",
                (seq, limit),
            ).fetchall()
        except sqlite3.OperationalError as exc:
            if self._read_only and "no such table" in str(exc):
                return []  # a crawl that never had a control
            raise StoreError(f"{self._path}: cannot read the control log: {exc}") from exc
        except sqlite3.Error as exc:
            raise StoreError(f"{self._path}: cannot read the control log: {exc}") from exc
        out = [control_from_row(*row) for row in rows]
        return [c for c in out if c is not None]

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _open(self) -> sqlite3.Connection:
        if self._conn is None:
            raise StoreError(f"{self._path}: the control log is closed")
        return self._conn
