"""``headway status``: what a crawl holds, read without disturbing a running node. The
frontier's totals are read through the backend the ``store`` setting names (for the
embedded store: the crawl directory's file)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from headway.errors import CrawlDirError, StoreError
from headway.frontier.backends import StoreTarget, backend_for
from headway.runtime.crawldir import MARKER, CrawlPaths
from headway.settings import Settings


def read_status(root: Path, store: str = "") -> dict[str, object]:
    paths = CrawlPaths(root)
    if not (root / MARKER).exists():
        raise CrawlDirError(f"{root} is not a headway crawl directory (no {MARKER})")
    info = json.loads((root / MARKER).read_text())
    out: dict[str, object] = {
        "directory": str(root),
        "format": info.get("format"),
        "node_id": info.get("node_id"),
    }
    backend = backend_for(store)
    target = StoreTarget(store, root, str(info.get("node_id") or ""), Settings())
    try:
        counts = backend.read_counts(target)
    except StoreError as exc:
        raise CrawlDirError(str(exc)) from None
    if counts is not None:
        out["frontier"] = dataclasses.asdict(counts)
    warcs = [p.stat().st_size for p in paths.warc_dir.glob("*.warc.gz")]
    out["warc_files"] = len(warcs)
    out["warc_bytes"] = sum(warcs)
    last = _last_line(paths.metrics)
    if last:
        try:
            snap = json.loads(last)
            out["last_metrics"] = {
                k: snap.get(k)
                for k in ("time", "fetches", "pages_per_second", "errors", "retry_ratio")
            }
        except ValueError:
            pass
    return out


_METRIC_KEYS = ("time", "fetches", "pages_per_second", "errors", "retry_ratio")


def _last_line(path: Path, tail: int = 65536) -> str | None:
    """The last complete line of a file, reading only its end."""
    try:
        with path.open("rb") as fh:
            fh.seek(0, 2)
            size = fh.tell()
            fh.seek(max(0, size - tail))
            lines = fh.read().decode("utf-8", "replace").splitlines()
    except OSError:
        return None
    return lines[-1] if lines else None


def print_status(root: Path, as_json: bool = False, store: str = "") -> int:
    status = read_status(root, store)
    if as_json:
        print(json.dumps(status, indent=2))
        return 0
    for key, value in status.items():
        print(f"{key}: {value}")
    return 0
