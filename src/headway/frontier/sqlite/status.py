"""What ``headway status`` and ``headway report`` read of a crawl directory's frontier
file, opened read-only, while a node may be running on it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from headway.errors import StoreError
from headway.frontier.sqlite import read_counts

__all__ = ["meta_values", "read_counts"]


def meta_values(path: Path, prefix: str) -> dict[str, str]:
    """The frontier file's meta entries whose key starts with ``prefix``."""
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            rows = con.execute(
                "SELECT key, value FROM meta WHERE substr(key, 1, ?) = ?", (len(prefix), prefix)
            ).fetchall()
        finally:
            con.close()
    except sqlite3.Error as exc:
        raise StoreError(f"cannot read the frontier {path}: {exc}") from exc
    return {str(k): str(v) for k, v in rows}
