"""The Parquet index of a node's WARC records (``--parquet-index``), in ``index/``.

Contract:

- One row per record the crawl log names (``warc_file`` and ``warc_offset`` set: every
  response and revisit record, robots.txt ones included), made from the crawl-log line
  and the record's compressed length (``row_of``). Column names are those of Common
  Crawl's columnar index where one exists (``COLUMNS``), then headway's own.
- Rows are written in parts, ``index/<prefix>-<serial:05d>.parquet``, one row group
  each: a part is written aside (``.tmp``), fsynced and renamed, so a part on disk is
  always whole. A part is cut every ``part_rows`` rows, every ``part_seconds`` seconds
  that have rows, and at close. Each part's key-value metadata holds
  ``headway.log_end``: the crawl log's size once its rows' lines were written.
- ``repair_index`` (at start, after the crawl log's tail was repaired) deletes
  ``.tmp`` leftovers and writes, from the crawl-log lines past the largest
  ``headway.log_end`` of this prefix's parts, the rows a ``kill -9`` kept from reaching
  a part, reading each record's length from its WARC file: no row is lost, none is
  written twice.
- ``warc_filename`` is the WARC file's path inside the crawl directory
  (``warc/<name>``), ``warc_record_offset`` and ``warc_record_length`` frame its gzip
  member; ``content_digest`` is the SHA-1 in base32 without its ``sha1:`` prefix, as
  Common Crawl writes it; ``content_mime_detected`` is null (headway does not sniff
  types); ``fetch_time`` is UTC, in milliseconds.
"""

from __future__ import annotations

import logging
import os
import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from headway import crashpoints
from headway.crashpoints import CrashPoint
from headway.store.crawllog import CrawlLogEntry, parse_entry
from headway.urls.domain import registered_domain
from headway.urls.surt import surt

log = logging.getLogger(__name__)

LOG_END = b"headway.log_end"
_CHUNK = 1 << 16


def _schema() -> Any:
    import pyarrow as pa

    s, i32, i64 = pa.string(), pa.int32(), pa.int64()
    return pa.schema(
        [
            ("url", s),
            ("url_surtkey", s),
            ("url_host_name", s),
            ("url_host_registered_domain", s),
            ("fetch_time", pa.timestamp("ms", tz="UTC")),
            ("fetch_status", pa.int16()),
            ("fetch_redirect", s),
            ("content_mime_type", s),
            ("content_mime_detected", s),
            ("content_charset", s),
            ("content_languages", s),
            ("content_digest", s),
            ("content_truncated", s),
            ("warc_filename", s),
            ("warc_record_offset", i64),
            ("warc_record_length", i32),
            ("warc_record_type", s),
            # headway's own
            ("depth", i32),
            ("priority", i32),
            ("via", s),
            ("outcome", s),
            ("simhash", s),
            ("near_dup_of", s),
            ("ai_train", s),
            ("ai_input", s),
            ("search", s),
        ]
    )


def _param(content_type: str | None, name: str) -> str | None:
    for part in (content_type or "").split(";")[1:]:
        key, _, value = part.partition("=")
        if key.strip().lower() == name:
            return value.strip().strip('"').lower() or None
    return None


def row_of(entry: CrawlLogEntry, length: int) -> dict[str, Any]:
    """The index row of one crawl-log entry whose record is ``length`` bytes long."""
    host = (urlsplit(entry.url).hostname or "").lower()
    redirect = None
    if entry.note is not None and entry.note.startswith("redirect -> "):
        redirect = entry.note.removeprefix("redirect -> ")
    mime = (entry.content_type or "").split(";", 1)[0].strip().lower() or None
    return {
        "url": entry.url,
        "url_surtkey": surt(entry.url),
        "url_host_name": host,
        "url_host_registered_domain": registered_domain(host) if host else None,
        "fetch_time": round(entry.time * 1000),
        "fetch_status": entry.status,
        "fetch_redirect": redirect,
        "content_mime_type": mime,
        "content_mime_detected": None,
        "content_charset": _param(entry.content_type, "charset"),
        "content_languages": ",".join(entry.languages) if entry.languages else None,
        "content_digest": (entry.digest or "").removeprefix("sha1:") or None,
        "content_truncated": entry.truncated,
        "warc_filename": f"warc/{entry.warc_file}",
        "warc_record_offset": entry.warc_offset,
        "warc_record_length": length,
        "warc_record_type": "revisit" if entry.revisit else "response",
        "depth": entry.depth,
        "priority": entry.priority,
        "via": entry.via,
        "outcome": entry.outcome,
        "simhash": entry.simhash,
        "near_dup_of": entry.near_dup_of,
        "ai_train": entry.ai_train,
        "ai_input": entry.ai_input,
        "search": entry.search,
    }


def _serial(directory: Path, prefix: str) -> int:
    serials = []
    for p in directory.glob(f"{prefix}-*.parquet"):
        tail = p.name.removeprefix(f"{prefix}-").removesuffix(".parquet")
        if tail.isdigit():
            serials.append(int(tail))
    return max(serials) + 1 if serials else 0


def _write_part(directory: Path, prefix: str, rows: list[dict[str, Any]], log_end: int) -> Path:
    """One whole part: written aside, fsynced, renamed into place."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = _schema().with_metadata({LOG_END: str(log_end).encode()})
    table = pa.Table.from_pylist(rows, schema=schema)
    path = directory / f"{prefix}-{_serial(directory, prefix):05d}.parquet"
    tmp = path.with_name(path.name + ".tmp")
    pq.write_table(table, tmp, compression="zstd")
    fd = os.open(tmp, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    crashpoints.reached(CrashPoint.INDEX_PART_TMP)
    os.replace(tmp, path)
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    return path


def write_rows(path: Path, rows: list[dict[str, Any]]) -> None:
    """``rows`` as one whole Parquet file at ``path`` (written aside, then renamed)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    tmp = path.with_name(path.name + ".tmp")
    pq.write_table(pa.Table.from_pylist(rows, schema=_schema()), tmp, compression="zstd")
    os.replace(tmp, path)


def covered(directory: Path, prefix: str) -> int:
    """The crawl-log bytes this prefix's parts cover (0: none)."""
    import pyarrow.parquet as pq

    end = 0
    for p in directory.glob(f"{prefix}-*.parquet"):
        meta = pq.read_schema(p).metadata or {}
        end = max(end, int(meta.get(LOG_END, b"0")))
    return end


def member_length(path: Path, offset: int) -> int:
    """Compressed length of the gzip member that starts at ``offset`` of ``path``."""
    inflater = zlib.decompressobj(zlib.MAX_WBITS | 16)
    read = 0
    with open(path, "rb") as f:
        f.seek(offset)
        while chunk := f.read(_CHUNK):
            read += len(chunk)
            inflater.decompress(chunk)
            if inflater.eof:
                return read - len(inflater.unused_data)
    raise ValueError(f"{path.name}: no whole gzip member at {offset}")


def _entries_after(log_path: Path, start: int) -> Iterator[CrawlLogEntry]:
    with open(log_path, "rb") as f:
        f.seek(start)
        for raw in f:
            try:
                yield parse_entry(raw.decode("utf-8"))
            except ValueError:
                log.warning("parquet index: skipped an unreadable crawl-log line")


def repair_index(directory: Path, prefix: str, log_path: Path, warc_dir: Path) -> int:
    """Write the rows no part holds yet (see the module contract); rows written."""
    directory.mkdir(parents=True, exist_ok=True)
    for leftover in directory.glob(f"{prefix}-*.parquet.tmp"):
        leftover.unlink()
    if not log_path.exists():
        return 0
    start, end = covered(directory, prefix), log_path.stat().st_size
    if start >= end:
        return 0
    rows = []
    for entry in _entries_after(log_path, start):
        if entry.warc_file is None or entry.warc_offset is None:
            continue
        warc = warc_dir / entry.warc_file
        try:
            length = member_length(warc, entry.warc_offset)
        except (OSError, ValueError) as exc:
            log.warning("parquet index: record of %s not readable: %s", entry.url, exc)
            continue
        rows.append(row_of(entry, length))
    _write_part(directory, prefix, rows, end)
    if rows:
        log.warning("parquet index: %d rows rebuilt from the crawl log and WARC files", len(rows))
    return len(rows)


class ParquetIndex:
    """Collects rows on the store thread and writes them in parts (module contract)."""

    def __init__(
        self, directory: Path, prefix: str, *, part_rows: int = 10_000, part_seconds: float = 60
    ) -> None:
        self._dir = directory
        self._prefix = prefix
        self._part_rows = part_rows
        self._part_seconds = part_seconds
        self._rows: list[dict[str, Any]] = []
        self._since = time.monotonic()
        self.parts = 0

    def add(self, entry: CrawlLogEntry, length: int) -> None:
        self._rows.append(row_of(entry, length))

    def flushed(self, log_end: int, *, final: bool = False) -> None:
        """The batch's crawl-log lines are flushed and the log is ``log_end`` bytes:
        cut a part if it is due (or ``final``)."""
        due = len(self._rows) >= self._part_rows or (
            time.monotonic() - self._since >= self._part_seconds
        )
        if self._rows and (due or final):
            _write_part(self._dir, self._prefix, self._rows, log_end)
            self.parts += 1
            self._rows = []
            self._since = time.monotonic()
