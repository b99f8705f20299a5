"""``headway status``: what a crawl directory holds, read without disturbing a running node."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from headway.errors import CrawlDirError
from headway.runtime.crawldir import MARKER, CrawlPaths


def read_status(root: Path) -> dict[str, object]:
    paths = CrawlPaths(root)
    if not (root / MARKER).exists():
        raise CrawlDirError(f"{root} is not a headway crawl directory (no {MARKER})")
    info = json.loads((root / MARKER).read_text())
    out: dict[str, object] = {"directory": str(root), "format": info.get("format")}
    if paths.frontier.exists():
        con = sqlite3.connect(f"file:{paths.frontier}?mode=ro", uri=True)
        try:
            rows = con.execute("SELECT state, COUNT(*) FROM urls GROUP BY state").fetchall()
        except sqlite3.Error as exc:
            raise CrawlDirError(f"cannot read {paths.frontier}: {exc}") from None
        finally:
            con.close()
        names = {0: "queued", 1: "leased", 2: "done", 3: "failed"}
        out["frontier"] = {names.get(s, str(s)): n for s, n in rows}
    out["warc_files"] = len(list(paths.warc_dir.glob("*.warc.gz")))
    out["warc_bytes"] = sum(p.stat().st_size for p in paths.warc_dir.glob("*.warc.gz"))
    if paths.metrics.exists():
        lines = paths.metrics.read_text().splitlines()
        if lines:
            try:
                last = json.loads(lines[-1])
                out["last_metrics"] = {
                    k: last.get(k)
                    for k in ("time", "fetches", "pages_per_second", "errors", "retry_ratio")
                }
            except ValueError:
                pass
    return out


def print_status(root: Path, as_json: bool = False) -> int:
    status = read_status(root)
    if as_json:
        print(json.dumps(status, indent=2))
        return 0
    for key, value in status.items():
        print(f"{key}: {value}")
    return 0
