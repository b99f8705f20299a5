"""The crawl directory: the whole state of a crawl, and its format-version guard.

Layout (format version ``CRAWL_FORMAT_VERSION``)::

    <out>/headway.json        format version and the software that created it
    <out>/lock                held (flock) by the running node; a second node is refused
    <out>/frontier.sqlite3    the frontier (SQLite, WAL)
    <out>/frontier.sqlite3.bloom  its seen filter's bitmap, saved at a clean stop
    <out>/warc/*.warc.gz      WARC/1.1 files
    <out>/index.cdxj          CDXJ index of the WARC records
    <out>/crawl.log.jsonl     one JSON line per fetch
    <out>/metrics.jsonl       periodic pressure metrics
"""

from __future__ import annotations

import fcntl
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from headway import CRAWL_FORMAT_VERSION, __version__
from headway.errors import CrawlDirError

MARKER = "headway.json"


@dataclass(frozen=True, slots=True)
class CrawlPaths:
    root: Path

    @property
    def frontier(self) -> Path:
        return self.root / "frontier.sqlite3"

    @property
    def warc_dir(self) -> Path:
        return self.root / "warc"

    @property
    def cdxj(self) -> Path:
        return self.root / "index.cdxj"

    @property
    def crawl_log(self) -> Path:
        return self.root / "crawl.log.jsonl"

    @property
    def metrics(self) -> Path:
        return self.root / "metrics.jsonl"


class CrawlDir:
    """Opens (creating if new) and locks a crawl directory; refuses other formats."""

    def __init__(self, root: Path) -> None:
        self.paths = CrawlPaths(root)
        self._lock: IO[str] | None = None
        self.resumed = False

    def open(self) -> CrawlPaths:
        root = self.paths.root
        if root.exists() and not root.is_dir():
            raise CrawlDirError(f"{root} exists and is not a directory")
        marker = root / MARKER
        if root.exists() and any(root.iterdir()) and not marker.exists():
            raise CrawlDirError(
                f"{root} is not empty and is not a headway crawl directory "
                f"(no {MARKER}); choose another --out"
            )
        try:
            root.mkdir(parents=True, exist_ok=True)
            self.paths.warc_dir.mkdir(exist_ok=True)
        except OSError as exc:
            raise CrawlDirError(f"cannot create {root}: {exc.strerror or exc}") from None
        self._take_lock()
        if marker.exists():
            self._check_marker(marker)
            self.resumed = True
        else:
            tmp = marker.with_suffix(".tmp")
            tmp.write_text(
                json.dumps({"format": CRAWL_FORMAT_VERSION, "software": f"headway/{__version__}"})
                + "\n"
            )
            os.replace(tmp, marker)
        return self.paths

    def _check_marker(self, marker: Path) -> None:
        try:
            info = json.loads(marker.read_text())
            fmt = info["format"]
        except (OSError, ValueError, KeyError, TypeError):
            raise CrawlDirError(
                f"{marker} is unreadable; this directory cannot be resumed"
            ) from None
        if fmt != CRAWL_FORMAT_VERSION:
            raise CrawlDirError(
                f"{self.paths.root} was written by {info.get('software', 'another version')} "
                f"(crawl format {fmt}); this headway {__version__} reads format "
                f"{CRAWL_FORMAT_VERSION} only. Use a matching headway or a new --out."
            )

    def _take_lock(self) -> None:
        fh = open(self.paths.root / "lock", "a+")  # noqa: SIM115 - held for the crawl's life
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            fh.close()
            raise CrawlDirError(f"{self.paths.root} is in use by another headway process") from None
        fh.seek(0)
        fh.truncate()
        fh.write(f"{os.getpid()}\n")
        fh.flush()
        self._lock = fh

    def close(self) -> None:
        if self._lock is not None:
            fcntl.flock(self._lock.fileno(), fcntl.LOCK_UN)
            self._lock.close()
            self._lock = None
