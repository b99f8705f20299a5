"""What a WACZ is made of: the crawl directories of one crawl, each node's WARC files
(with the bytes of each that hold complete records), index and crawl log.

Contract of ``find_sources``: every directory given must be a headway crawl directory
(``headway.json``), all of one crawl (one directory with its own frontier, or any nodes
of one shared crawl, checked against ``--store``/``--crawl-id`` when given); anything
else is an ``ExportError`` naming the directory. The directories are only read: a crawl
killed mid-run is packaged as the next start would repair it, without repairing it. Of
each node's WARC files only the newest can end in a partial record (files are never
reopened), so that one alone is checked for the end of its last complete record, and
only from the last record the crawl log names (``last_logged_offset``) when that record
is whole (the one writer wrote every byte before it first); otherwise the whole file is
inflated. The others are packaged whole.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from headway.errors import CrawlDirError, ExportError
from headway.runtime.crawldir import MARKER, CrawlIdentity, CrawlPaths, identity_of, read_marker
from headway.store.recovery import complete_gzip_prefix

_SERIAL = re.compile(r"-(\d+)\.warc\.gz$")


@dataclass(frozen=True, slots=True)
class WarcPart:
    """One WARC file to package: its first ``size`` bytes (``cut`` bytes after them are
    a partial record a killed crawl left)."""

    path: Path
    size: int
    cut: int = 0

    @property
    def name(self) -> str:
        return self.path.name


@dataclass(frozen=True, slots=True)
class NodeFiles:
    """One crawl directory: its node id, WARC files, index and crawl log."""

    root: Path
    node: str
    warcs: tuple[WarcPart, ...]
    index: Path
    crawl_log: Path


@dataclass(frozen=True, slots=True)
class ExportSource:
    """The crawl directories of one crawl, as ``find_sources`` checked them."""

    identity: CrawlIdentity
    nodes: tuple[NodeFiles, ...]

    def warc_sizes(self) -> dict[str, int]:
        """WARC file name -> the bytes packaged of it."""
        return {w.name: w.size for n in self.nodes for w in n.warcs}

    def total_bytes(self) -> int:
        """What a pass over everything reads: the WARC bytes, indexes and crawl logs."""
        extra = sum(_size(p) for n in self.nodes for p in (n.index, n.crawl_log))
        return sum(self.warc_sizes().values()) + extra


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def _identity(root: Path) -> tuple[CrawlIdentity, str]:
    if not root.exists():
        raise ExportError(f"no crawl at {root}: no such directory")
    if not root.is_dir():
        raise ExportError(f"no crawl at {root}: not a directory")
    marker = root / MARKER
    if not marker.exists():
        raise ExportError(f"{root} is not a headway crawl directory (no {MARKER})")
    try:
        info = read_marker(marker)
        identity = identity_of(info)
    except CrawlDirError as exc:
        raise ExportError(f"{root}: {exc}") from None
    node = info.get("node_id")
    if not isinstance(node, str) or not node:
        raise ExportError(f"{marker} names no node; this directory cannot be packaged")
    if identity is None:  # written before the crawl was recorded: judged by its files
        own = (root / "frontier.sqlite3").exists()
        identity = CrawlIdentity() if own else CrawlIdentity("(unrecorded shared crawl)")
    return identity, node


#: How much of a crawl log's end is read for its last record in the newest WARC file.
_LOG_TAIL = 256 << 10


def last_logged_offset(log: Path, warc_name: str) -> int:
    """The offset of the last record of ``warc_name`` named in the last ``_LOG_TAIL``
    bytes of the crawl log ``log``; 0 when none is."""
    try:
        with log.open("rb") as fh:
            size = fh.seek(0, 2)
            fh.seek(max(0, size - _LOG_TAIL))
            tail = fh.read()
    except FileNotFoundError:
        return 0
    needle = b'"warc_file":' + json.dumps(warc_name).encode()
    for line in reversed(tail.splitlines()):
        if needle not in line:
            continue
        try:
            offset = json.loads(line).get("warc_offset")
        except ValueError:
            continue
        if isinstance(offset, int) and offset > 0:
            return offset
    return 0


def _complete_prefix(path: Path, size: int, start: int) -> int:
    """``complete_gzip_prefix`` of ``path``, read from ``start`` when a whole member
    begins there (every byte before it was written before it, by the one writer), else
    from the file's start."""
    if 0 < start < size:
        good = complete_gzip_prefix(path, start)
        if good > start:
            return min(size, good)
    return min(size, complete_gzip_prefix(path))


def _warcs(paths: CrawlPaths) -> tuple[WarcPart, ...]:
    files = sorted(p for p in paths.warc_dir.glob("*.warc.gz") if p.is_file())
    if not files:
        return ()

    def serial(p: Path) -> tuple[int, str]:
        m = _SERIAL.search(p.name)
        return (int(m.group(1)) if m else -1, p.name)

    newest = max(files, key=serial)
    parts = []
    for p in files:
        size = p.stat().st_size
        if p == newest:
            good = _complete_prefix(p, size, last_logged_offset(paths.crawl_log, p.name))
            parts.append(WarcPart(p, good, size - good))
        else:
            parts.append(WarcPart(p, size))
    return tuple(w for w in parts if w.size > 0)


def find_sources(dirs: Sequence[Path], identity: CrawlIdentity | None = None) -> ExportSource:
    """The crawl directories ``dirs`` checked to be of one crawl (``identity`` when
    given), with their files; see the module docstring."""
    if not dirs:
        raise ExportError(
            "give the crawl directories to package: a crawl's directory, or every node's "
            "directory of a shared crawl (its WARC files stay in the nodes' directories)"
        )
    nodes: list[NodeFiles] = []
    crawl: CrawlIdentity | None = identity
    seen: dict[str, Path] = {}
    for root in dirs:
        found, node = _identity(root)
        if crawl is None:
            crawl = found
        elif found != crawl:
            raise ExportError(
                f"{root} belongs to {found.describe()}, not {crawl.describe()}: a WACZ packages "
                "one crawl"
            )
        if not crawl.store and nodes:
            raise ExportError(
                f"{root} and {nodes[0].root} are two crawls with their own frontier: a WACZ "
                "packages one crawl (several directories must be nodes of one shared crawl)"
            )
        paths = CrawlPaths(root, node if crawl.store else "")
        warcs = _warcs(paths)
        for w in warcs:
            if w.name in seen:
                raise ExportError(
                    f"the WARC file name {w.name} is in both {seen[w.name]} and {root}: "
                    "give each crawl directory once"
                )
            seen[w.name] = root
        nodes.append(NodeFiles(root, node, warcs, paths.cdxj, paths.crawl_log))
    if not seen:
        raise ExportError(
            "no WARC file in " + ", ".join(str(d) for d in dirs) + ": nothing to package"
        )
    assert crawl is not None
    return ExportSource(crawl, tuple(nodes))
