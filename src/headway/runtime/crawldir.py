"""The crawl directory: the whole state of a crawl, and its format-version guard.

Layout (format version ``CRAWL_FORMAT_VERSION``)::

    <out>/headway.json        format version, the software that created it, the node id,
                              the crawl it belongs to (store, crawl id)
    <out>/lock                held (flock) by the running node; a second node is refused
    <out>/frontier.sqlite3    the frontier (SQLite, WAL)
    <out>/frontier.sqlite3.bloom  its seen filter's bitmap, saved at a clean stop
    <out>/warc/*.warc.gz      WARC/1.1 files
    <out>/text/text-*.warc.gz the text output (--text): WARC conversion records
    <out>/index/*.parquet     the Parquet index (--parquet-index)
    <out>/outlinks/outlinks-*.warc.gz  each page's links (--outlinks): WARC metadata records
    <out>/index.cdxj          CDXJ index of the WARC records
    <out>/crawl.log.jsonl     one JSON line per fetch
    <out>/metrics.jsonl       periodic pressure metrics

The node id is made when the directory is created and never changes: the frontier's
leases of this directory's node carry it. Format 1 (no node id; payload digests read
from ``index.cdxj`` at every start) opens with ``upgrade_from == 1``: a node id is written
at once, and the node moves the index's payload digests into the frontier backend and
then calls ``finish_upgrade``. Until then the directory stays format 1, so an upgrade cut
short by a crash is simply done again.

A directory belongs to one crawl (``CrawlIdentity``): its own embedded frontier, or one
shared crawl (store URL, password masked, and crawl id), recorded in ``headway.json``
when it is created. Opening it for another crawl is a ``CrawlDirError`` naming the crawl
it belongs to. A directory written before the crawl was recorded is taken to be what its
files say (a ``frontier.sqlite3``: its own frontier; none: a shared crawl) and, when that
matches, the crawl opening it is recorded.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import re
import secrets
import shutil
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from headway import CRAWL_FORMAT_VERSION, UPGRADABLE_CRAWL_FORMATS, __version__
from headway.errors import CrawlDirError

log = logging.getLogger(__name__)

MARKER = "headway.json"

#: The keys of ``headway.json`` that name the crawl a directory belongs to.
STORE_KEY = "store"
CRAWL_ID_KEY = "crawl_id"

_NODE_ID_RX = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


def new_node_id() -> str:
    """A fresh node id: the machine's short name and a random suffix, in ``[A-Za-z0-9._-]``."""
    host = re.sub(r"[^A-Za-z0-9-]", "", socket.gethostname().split(".")[0])[:40] or "node"
    return f"{host}-{secrets.token_hex(4)}"


@dataclass(frozen=True, slots=True)
class CrawlIdentity:
    """The crawl a directory belongs to: ``store`` empty for the embedded frontier in the
    directory, else the shared store's URL with its password masked, and ``crawl_id``
    (None without a store)."""

    store: str = ""
    crawl_id: str | None = None

    def describe(self) -> str:
        if not self.store:
            return "a crawl with its own frontier in the directory (no --store)"
        return f"the shared crawl {self.crawl_id!r} in {self.store}"

    def resume_hint(self) -> str:
        """How to run the crawl this identity names."""
        if not self.store:
            return "run it without --store and --crawl-id"
        return f"give --store {self.store} --crawl-id {self.crawl_id}"


@dataclass(frozen=True, slots=True)
class CrawlPaths:
    """File names of a crawl directory. A node of a shared crawl (``node`` set) puts its
    id into the names of its WARC files, index and crawl log, so that the outputs of
    many nodes can be gathered in one place without clashing."""

    root: Path
    node: str = ""

    def for_node(self, node: str) -> CrawlPaths:
        return CrawlPaths(self.root, node)

    @property
    def frontier(self) -> Path:
        return self.root / "frontier.sqlite3"

    @property
    def warc_dir(self) -> Path:
        return self.root / "warc"

    def warc_prefix(self, prefix: str) -> str:
        return f"{prefix}-{self.node}" if self.node else prefix

    @property
    def text_dir(self) -> Path:
        """The text output's WARC files (``--text``)."""
        return self.root / "text"

    @property
    def outlinks_dir(self) -> Path:
        """The outlinks output (``--outlinks``)."""
        return self.root / "outlinks"

    @property
    def index_dir(self) -> Path:
        """The Parquet index (``--parquet-index``)."""
        return self.root / "index"

    def text_prefix(self, prefix: str) -> str:
        return "text-" + self.warc_prefix(prefix)

    @property
    def cdxj(self) -> Path:
        return self.root / (f"index-{self.node}.cdxj" if self.node else "index.cdxj")

    @property
    def crawl_log(self) -> Path:
        return self.root / (f"crawl-{self.node}.log.jsonl" if self.node else "crawl.log.jsonl")

    @property
    def metrics(self) -> Path:
        return self.root / "metrics.jsonl"


class CrawlDir:
    """Opens (creating if new) and locks a crawl directory of the crawl ``identity``;
    refuses other formats and other crawls. After ``open``: ``node_id``, ``resumed``, and
    ``upgrade_from`` (the old format of a directory being upgraded, else None)."""

    def __init__(self, root: Path, identity: CrawlIdentity | None = None) -> None:
        self.paths = CrawlPaths(root)
        self.identity = identity if identity is not None else CrawlIdentity()
        self._lock: IO[str] | None = None
        self.resumed = False
        self.node_id = ""
        self.upgrade_from: int | None = None
        self.created = False  # this open made the directory a crawl directory
        self._made_root = False  # ... and the directory itself

    def open(self) -> CrawlPaths:
        """Create or resume the crawl directory and take its lock. Any file-system failure
        (read-only, full, a name too long) is a CrawlDirError naming the directory."""
        try:
            return self._open()
        except CrawlDirError:
            self.close()  # refused: the lock is let go at once
            raise
        except OSError as exc:
            self.close()
            raise CrawlDirError(
                f"cannot use {self.paths.root} as the crawl directory: {exc.strerror or exc}"
            ) from None

    def _open(self) -> CrawlPaths:
        root = self.paths.root
        if root.exists() and not root.is_dir():
            raise CrawlDirError(f"{root} exists and is not a directory")
        marker = root / MARKER
        if root.exists() and any(root.iterdir()) and not marker.exists():
            raise CrawlDirError(
                f"{root} is not empty and is not a headway crawl directory "
                f"(no {MARKER}); choose another --out"
            )
        self._made_root = not root.exists()
        try:
            root.mkdir(parents=True, exist_ok=True)
            self.paths.warc_dir.mkdir(exist_ok=True)
        except OSError as exc:
            raise CrawlDirError(f"cannot create {root}: {exc.strerror or exc}") from None
        self._take_lock()
        if marker.exists():
            info = self._check_marker(marker)
            self.resumed = True
            node_id = info.get("node_id")
            if node_id is None and self.upgrade_from is not None:
                info["node_id"] = new_node_id()
                self._write_marker(info)
            elif not isinstance(node_id, str) or not _NODE_ID_RX.match(node_id):
                raise CrawlDirError(
                    f"{marker} holds no valid node_id; this directory cannot be resumed"
                )
            self.node_id = str(info["node_id"])
            self._check_identity(info)
        else:
            self.node_id = new_node_id()
            self.created = True
            self._write_marker(
                {
                    "format": CRAWL_FORMAT_VERSION,
                    "software": f"headway/{__version__}",
                    "node_id": self.node_id,
                    STORE_KEY: self.identity.store,
                    CRAWL_ID_KEY: self.identity.crawl_id,
                }
            )
        return self.paths

    def _check_identity(self, info: dict[str, object]) -> None:
        """Refuse to open the directory for another crawl than the one it belongs to; a
        directory that does not say (written before it was recorded) is judged by its
        files and then records the crawl that opens it."""
        root = self.paths.root
        recorded = identity_of(info)
        if recorded is None:
            self._check_unrecorded()
            info[STORE_KEY] = self.identity.store
            info[CRAWL_ID_KEY] = self.identity.crawl_id
            self._write_marker(info)
            log.info("%s now records that it belongs to %s", root, self.identity.describe())
        elif recorded != self.identity:
            raise CrawlDirError(
                f"{root} belongs to {recorded.describe()}, not {self.identity.describe()}: "
                f"{recorded.resume_hint()} to resume it, or choose another --out"
            )

    def _check_unrecorded(self) -> None:
        """A directory that does not say which crawl it belongs to is judged by its files:
        its own frontier file (or format 1, which had nothing else) is a crawl of its
        own; outputs named after its node without one are a node of a shared crawl."""
        root, node = self.paths.root, self.node_id
        own = self.paths.frontier.exists() or self.upgrade_from is not None
        shared = not own and any(
            p.exists()
            for p in (self.paths.for_node(node).crawl_log, self.paths.for_node(node).cdxj)
        )
        if own and self.identity.store:
            what, hint = CrawlIdentity().describe(), CrawlIdentity().resume_hint()
        elif shared and not self.identity.store:
            what, hint = "a shared crawl (--store)", "give the --store and --crawl-id it had"
        else:
            return
        raise CrawlDirError(
            f"{root} belongs to {what}, not {self.identity.describe()}: {hint} to resume it, "
            "or choose another --out"
        )

    def finish_upgrade(self) -> None:
        """Record that the directory now has the current format (after the node moved
        what the old format kept elsewhere)."""
        if self.upgrade_from is None:
            return
        info = json.loads((self.paths.root / MARKER).read_text())
        info["format"] = CRAWL_FORMAT_VERSION
        info["upgraded_by"] = f"headway/{__version__}"
        self._write_marker(info)
        self.upgrade_from = None

    def _write_marker(self, info: dict[str, object]) -> None:
        marker = self.paths.root / MARKER
        tmp = marker.with_suffix(".tmp")
        with tmp.open("w") as fh:
            fh.write(json.dumps(info) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, marker)

    def _check_marker(self, marker: Path) -> dict[str, object]:
        info = read_marker(marker)
        fmt = info["format"]
        if fmt in UPGRADABLE_CRAWL_FORMATS:
            self.upgrade_from = fmt
            log.info(
                "%s has crawl format %s: upgrading it to %s",
                self.paths.root,
                fmt,
                CRAWL_FORMAT_VERSION,
            )
            return info
        if fmt != CRAWL_FORMAT_VERSION:
            raise CrawlDirError(
                f"{self.paths.root} was written by {info.get('software', 'another version')} "
                f"(crawl format {fmt}); this headway {__version__} reads format "
                f"{CRAWL_FORMAT_VERSION} only. Use a matching headway or a new --out."
            )
        return info

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

    def discard_if_new(self) -> None:
        """Undo a start that failed before the crawl began: when ``open`` created this
        crawl directory, remove what is in it (all of it written by this start, under
        the lock) and the directory itself if ``open`` made it. A resumed directory is
        never touched. Call after ``close``; never raises."""
        if not self.created:
            return
        root = self.paths.root
        self.close()
        try:
            for entry in root.iterdir():
                if entry.is_dir() and not entry.is_symlink():
                    shutil.rmtree(entry)
                else:
                    entry.unlink()
            if self._made_root:
                root.rmdir()
        except OSError as exc:
            log.warning("could not remove the new crawl directory %s: %s", root, exc)
        self.created = False

    def close(self) -> None:
        if self._lock is not None:
            fcntl.flock(self._lock.fileno(), fcntl.LOCK_UN)
            self._lock.close()
            self._lock = None


def read_marker(marker: Path) -> dict[str, object]:
    """``headway.json`` read and checked for shape (a JSON object with an integer
    ``format``); CrawlDirError naming the file otherwise. Whether this version reads
    that format is the caller's question (``format_note``)."""
    try:
        info = json.loads(marker.read_text())
    except (OSError, ValueError):
        info = None
    fmt = info.get("format") if isinstance(info, dict) else None
    if not isinstance(fmt, int) or isinstance(fmt, bool):
        raise CrawlDirError(f"{marker} is unreadable; this directory cannot be resumed")
    assert isinstance(info, dict)
    return info


def identity_of(info: dict[str, object]) -> CrawlIdentity | None:
    """The crawl ``headway.json`` says its directory belongs to; None when it does not say
    (written before that was recorded)."""
    if STORE_KEY not in info:
        return None
    store = info.get(STORE_KEY)
    crawl_id = info.get(CRAWL_ID_KEY)
    if not isinstance(store, str) or not (crawl_id is None or isinstance(crawl_id, str)):
        raise CrawlDirError(
            f"{MARKER} of this directory holds no valid {STORE_KEY}/{CRAWL_ID_KEY}; "
            "this directory cannot be resumed"
        )
    return CrawlIdentity(store, crawl_id if store else None)


def format_note(fmt: object) -> str | None:
    """What ``headway status`` says of a directory this version would not resume as it
    is: None for the current format."""
    if fmt == CRAWL_FORMAT_VERSION:
        return None
    if fmt in UPGRADABLE_CRAWL_FORMATS:
        return f"format {fmt}: upgraded to {CRAWL_FORMAT_VERSION} when a crawl resumes it"
    return (
        f"format {fmt}: this headway {__version__} reads format {CRAWL_FORMAT_VERSION} "
        "only, so it cannot resume this directory"
    )
