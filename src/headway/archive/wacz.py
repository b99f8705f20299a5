"""Writing a WACZ (Web Archive Collection Zipped, version 1.1.1) of one crawl.

Layout of the ZIP file (https://specs.webrecorder.net/wacz/1.1.1/)::

    archive/<name>.warc.gz     every node's WARC files, STORED (not compressed again:
                               replay reads records by offset)
    indexes/index.cdx          one CDXJ index of them all, sorted by bytes (the nodes'
                               indexes merged; pywb's WACZ import and ReplayWeb.page read
                               ``.cdx`` index files, which may hold CDXJ lines)
    pages/pages.jsonl          the page list (``archive.pages``)
    datapackage.json           profile, wacz_version, title, created, software,
                               mainPageUrl/-Date (the first seed page), and a resource
                               (name, path, sha256 hash, bytes) per file above
    datapackage-digest.json    the sha256 of datapackage.json

Contract of ``write_wacz``: streamed in constant memory whatever the crawl's size (each
WARC file is copied through a 1 MiB buffer and hashed as it is written; the index is a
merge of the nodes' sorted indexes, an unsorted one, as a killed crawl leaves it, sorted
through runs in a scratch directory beside the output; the page list is read one crawl
log line and one record at a time). Index lines whose record is not wholly in the
packaged bytes of its file (a killed crawl's partial last record, a file not packaged)
are left out and counted. The output is written as ``<out>.partial`` and renamed into
place when complete; an existing output is never overwritten. No crawl file is changed.
"""

from __future__ import annotations

import contextlib
import hashlib
import heapq
import os
import tempfile
import time
import zipfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

import orjson

from headway import __version__
from headway.archive.pages import PageCounts, RecordReader, page_lines
from headway.archive.sources import ExportSource
from headway.errors import ExportError
from headway.store.cdxj import record_extent
from headway.store.cdxjsort import sorted_lines

WACZ_VERSION = "1.1.1"
INDEX_PATH = "indexes/index.cdx"
PAGES_PATH = "pages/pages.jsonl"
_COPY = 1 << 20
#: ZIP64 records for an entry that may pass 4 GiB (an index or page list of unknown
#: size; a WARC file past 2 GiB).
_ZIP64_FROM = 1 << 31

#: Called with the number of source bytes just read (for a progress bar).
Progress = Callable[[int], None]


@dataclass(frozen=True, slots=True)
class Resource:
    """One file of the package, as ``datapackage.json`` lists it."""

    path: str
    sha256: str
    bytes: int

    def entry(self) -> dict[str, Any]:
        name = self.path.rsplit("/", 1)[-1].lower()  # Frictionless names are lower-case
        return {
            "name": name,
            "path": self.path,
            "hash": f"sha256:{self.sha256}",
            "bytes": self.bytes,
        }


@dataclass(frozen=True, slots=True)
class WaczSummary:
    """What ``write_wacz`` packaged."""

    path: Path
    bytes: int
    warc_files: int
    warc_bytes: int
    warc_bytes_cut: int  # partial records of a killed crawl, left out
    index_lines: int
    index_lines_dropped: int
    pages: int
    seeds: int
    log_lines_unreadable: int
    seconds: float


class _Hashing:
    """A writable that hashes (sha256) and counts what passes through to ``out``."""

    def __init__(self, out: IO[bytes]) -> None:
        self._out = out
        self.sha = hashlib.sha256()
        self.size = 0

    def write(self, data: bytes) -> None:
        self.sha.update(data)
        self.size += len(data)
        self._out.write(data)

    def resource(self, path: str) -> Resource:
        return Resource(path, self.sha.hexdigest(), self.size)


def _rfc3339(epoch: float) -> str:
    return datetime.fromtimestamp(int(epoch), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _info(path: str, when: float, *, stored: bool) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(path, time.gmtime(max(when, 315532800))[:6])  # ZIP dates from 1980
    info.compress_type = zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED
    info.external_attr = 0o644 << 16
    return info


class _Lines:
    """Counts the bytes of the lines it passes on, for the progress bar."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.pending = 0

    def count(self, lines: Iterable[bytes]) -> Iterator[bytes]:
        for line in lines:
            self.pending += len(line)
            if self.pending >= _COPY:
                self.progress(self.pending)
                self.pending = 0
            yield line

    def flush(self) -> None:
        if self.pending:
            self.progress(self.pending)
        self.pending = 0


def _index_line_ok(line: bytes, valid: dict[str, int]) -> bool:
    """The line names a record that lies whole within the bytes packaged of its file."""
    extent = record_extent(line)
    return extent is not None and extent[0] in valid and extent[1] <= valid[extent[0]]


def write_wacz(
    source: ExportSource,
    out: Path,
    *,
    title: str | None = None,
    description: str | None = None,
    progress: Progress | None = None,
) -> WaczSummary:
    """Package ``source`` as the WACZ file ``out``; see the module docstring."""
    started = time.monotonic()
    if out.exists():
        raise ExportError(f"{out} exists; give another name or remove it first")
    if not out.parent.is_dir():
        raise ExportError(f"cannot write {out}: {out.parent} is not a directory")
    partial = out.with_name(out.name + ".partial")
    try:
        with tempfile.TemporaryDirectory(prefix=".wacz-", dir=out.parent) as scratch:
            summary = _write(source, partial, Path(scratch), title, description, progress)
        os.replace(partial, out)
    except OSError as exc:
        partial.unlink(missing_ok=True)
        raise ExportError(f"cannot write {out}: {exc.strerror or exc}") from None
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    return WaczSummary(
        path=out,
        bytes=out.stat().st_size,
        seconds=time.monotonic() - started,
        **summary,
    )


def _write(
    source: ExportSource,
    path: Path,
    scratch: Path,
    title: str | None,
    description: str | None,
    progress: Progress | None,
) -> dict[str, Any]:
    tick: Progress = progress or (lambda _n: None)
    now = time.time()
    resources: list[Resource] = []
    valid = source.warc_sizes()
    files = {w.name: w.path for n in source.nodes for w in n.warcs}
    with zipfile.ZipFile(path, "w", allowZip64=True) as zf:
        for node in source.nodes:
            for warc in node.warcs:
                resources.append(_copy_warc(zf, warc.path, warc.size, tick))
        index, kept, dropped = _write_index(zf, source, valid, scratch, now, tick)
        resources.append(index)
        counts = PageCounts()
        reader = RecordReader(files)
        lines = _Lines(tick)
        logs = [n.crawl_log for n in source.nodes]
        try:
            with zf.open(_info(PAGES_PATH, now, stored=False), "w", force_zip64=True) as raw:
                sink = _Hashing(raw)
                main: dict[str, Any] | None = None
                for line in page_lines(logs, valid, reader, counts):
                    sink.write(line)
                    if main is None and b'"seed":true' in line:
                        main = orjson.loads(line)
                lines.pending += sum(_log_size(p) for p in logs)
                lines.flush()
        finally:
            reader.close()
        resources.append(sink.resource(PAGES_PATH))
        package: dict[str, Any] = {
            "profile": "data-package",
            "wacz_version": WACZ_VERSION,
            "title": title or "headway crawl",
            "description": description or f"A crawl by headway {__version__}.",
            "created": _rfc3339(now),
            "modified": _rfc3339(now),
            "software": f"headway/{__version__}",
        }
        if main is not None:
            package["mainPageUrl"] = main["url"]
            package["mainPageDate"] = main["ts"]
        package["resources"] = [r.entry() for r in resources]
        data = orjson.dumps(package, option=orjson.OPT_INDENT_2)
        zf.writestr(_info("datapackage.json", now, stored=False), data)
        digest = {"path": "datapackage.json", "hash": f"sha256:{hashlib.sha256(data).hexdigest()}"}
        zf.writestr(
            _info("datapackage-digest.json", now, stored=False),
            orjson.dumps(digest, option=orjson.OPT_INDENT_2),
        )
    with path.open("rb+") as fh:
        os.fsync(fh.fileno())
    return {
        "warc_files": len(valid),
        "warc_bytes": sum(valid.values()),
        "warc_bytes_cut": sum(w.cut for n in source.nodes for w in n.warcs),
        "index_lines": kept,
        "index_lines_dropped": dropped,
        "pages": counts.pages,
        "seeds": counts.seeds,
        "log_lines_unreadable": counts.unreadable_lines,
    }


def _log_size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def _copy_warc(zf: zipfile.ZipFile, src: Path, size: int, tick: Progress) -> Resource:
    name = f"archive/{src.name}"
    info = _info(name, src.stat().st_mtime, stored=True)
    with src.open("rb") as fh, zf.open(info, "w", force_zip64=size >= _ZIP64_FROM) as raw:
        sink = _Hashing(raw)
        left = size
        while left > 0:
            chunk = fh.read(min(_COPY, left))
            if not chunk:
                raise ExportError(f"{src} became shorter while it was packaged")
            sink.write(chunk)
            left -= len(chunk)
            tick(len(chunk))
    return sink.resource(name)


def _write_index(
    zf: zipfile.ZipFile,
    source: ExportSource,
    valid: dict[str, int],
    scratch: Path,
    now: float,
    tick: Progress,
) -> tuple[Resource, int, int]:
    kept = dropped = 0
    lines = _Lines(tick)
    with contextlib.ExitStack() as stack:
        streams = [
            lines.count(stack.enter_context(sorted_lines(n.index, scratch))) for n in source.nodes
        ]
        with zf.open(_info(INDEX_PATH, now, stored=False), "w", force_zip64=True) as raw:
            sink = _Hashing(raw)
            buf: list[bytes] = []
            for line in heapq.merge(*streams):
                if _index_line_ok(line, valid):
                    buf.append(line)
                    kept += 1
                    if len(buf) >= 4096:
                        sink.write(b"".join(buf))
                        buf.clear()
                else:
                    dropped += 1
            sink.write(b"".join(buf))
    lines.flush()
    return sink.resource(INDEX_PATH), kept, dropped
