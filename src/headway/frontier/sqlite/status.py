"""What ``headway status`` and ``headway report`` read of a crawl directory's frontier
file, opened read-only, while a node may be running on it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from headway.errors import StoreError
from headway.frontier.sqlite import read_counts
from headway.frontier.store import FoundUrl, UrlState

__all__ = ["find_url", "meta_values", "read_counts", "seed_hosts"]


def _read(path: Path, sql: str, args: tuple[object, ...]) -> list[tuple[object, ...]]:
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            return con.execute(sql, args).fetchall()
        finally:
            con.close()
    except sqlite3.Error as exc:
        raise StoreError(f"cannot read the frontier {path}: {exc}") from exc


def find_url(path: Path, url: str, fp: int) -> FoundUrl:
    """What the frontier file holds of ``url`` (fingerprint ``fp``). The seen set is
    looked up by key; the record by a scan of the URL table (no index by URL: a look-up
    for a person, not for the crawl)."""
    seen = bool(_read(path, "SELECT 1 FROM seen WHERE fp = ?", (fp,)))
    rows = _read(
        path,
        "SELECT state, depth, priority, via, attempts, not_before, fetches, lease_expires,"
        " owner FROM urls WHERE fp = ? AND url = ?",
        (fp, url),
    )
    if not rows:
        return FoundUrl(seen=seen)
    state, depth, priority, via, attempts, not_before, fetches, expires, owner = rows[0]
    return FoundUrl(
        seen=True,
        state=UrlState(int(str(state))),
        depth=int(str(depth)),
        priority=int(str(priority)),
        via=None if via is None else str(via),
        attempts=int(str(attempts)),
        not_before=float(str(not_before)),
        fetches=int(str(fetches)),
        lease_expires=None if expires is None else float(str(expires)),
        owner=None if owner is None else str(owner),
    )


def seed_hosts(path: Path) -> list[str]:
    """The hosts of the crawl's seeds: those of URLs admitted at depth 0 from no page."""
    rows = _read(
        path,
        "SELECT DISTINCT h.host FROM urls u JOIN hosts h ON h.id = u.host_id"
        " WHERE u.depth = 0 AND u.via IS NULL",
        (),
    )
    return [str(r[0]) for r in rows]


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
