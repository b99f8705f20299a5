"""Crash recovery of a crawl directory's store files, run once at start-up before any
store writer opens.

After ``kill -9`` (or a full disk) the newest WARC file may end in a partial gzip
member, the CDXJ index may end in a partial line or name records that never reached the
WARC file, and the crawl log may end in a partial line. ``recover_store`` makes them
consistent again:

- WARC files: each gzip member is inflated in turn; the file is truncated at the end of
  the last complete member. A file with no complete member is renamed ``*.corrupt``
  (its serial stays taken, so the writer never reuses the name).
- CDXJ: unreadable lines (a partial last line) are dropped, and so are lines whose record
  does not lie wholly inside its (recovered) WARC file or whose file was renamed corrupt.
  Lines naming a file that is not in the directory (moved away by the operator) are kept.
- Crawl log: cut back to its last complete line that is a JSON object (a last line
  without its newline goes, and so do lines after the last good one that are not JSON).

Walking WARC files inflates them fully: expect a few seconds per gigabyte.
"""

from __future__ import annotations

import json
import logging
import os
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from headway import crashpoints
from headway.crashpoints import CrashPoint
from headway.store.cdxj import parse_cdxj_line

log = logging.getLogger(__name__)

_CHUNK = 1 << 20


@dataclass(frozen=True, slots=True)
class RecoveryReport:
    warc_files_checked: int
    warc_bytes_cut: dict[str, int]  # file name -> bytes removed (whole size if renamed)
    cdxj_lines_dropped: int
    log_bytes_cut: int
    corrupt_files: tuple[str, ...] = field(default=())  # renamed to <name>.corrupt


def recover_store(
    directory: Path,
    *,
    warc_glob: str = "*.warc.gz",
    cdxj_name: str = "index.cdxj",
    log_name: str = "crawl.log.jsonl",
) -> RecoveryReport:
    """Repair the tails of the WARC files, the CDXJ index and the crawl log in place."""
    directory = Path(directory)
    paths = sorted(p for p in directory.glob(warc_glob) if p.is_file())
    sizes, cut, corrupt = recover_warc_files(paths)
    dropped = _recover_cdxj(directory / cdxj_name, sizes, set(corrupt))
    log_cut = _recover_log(directory / log_name)
    return RecoveryReport(len(paths), cut, dropped, log_cut, tuple(corrupt))


def recover_warc_files(paths: list[Path]) -> tuple[dict[str, int], dict[str, int], list[str]]:
    """Cut each file's torn tail (a file with no complete record renamed ``.corrupt``):
    (file name -> size kept, file name -> bytes cut, names renamed corrupt)."""
    sizes: dict[str, int] = {}
    cut: dict[str, int] = {}
    corrupt: list[str] = []
    for path in paths:
        size = path.stat().st_size
        good = complete_gzip_prefix(path)
        if good == 0:
            path.rename(path.with_name(path.name + ".corrupt"))
            corrupt.append(path.name)
            cut[path.name] = size
            log.warning("WARC file %s has no complete record; renamed to .corrupt", path.name)
        elif good < size:
            _truncate(path, good)
            crashpoints.reached(CrashPoint.RECOVERY_WARC_CUT)
            cut[path.name] = size - good
            sizes[path.name] = good
            log.warning("WARC file %s: cut %d bytes of a partial record", path.name, size - good)
        else:
            sizes[path.name] = size
    return sizes, cut, corrupt


def complete_gzip_prefix(path: Path, start: int = 0) -> int:
    """Byte length of the longest prefix of ``path`` made of complete gzip members; from
    ``start`` on (a member boundary the caller vouches for) only the bytes after it are
    read, and a ``start`` that is no member boundary gives ``start``."""
    good = start  # end of the last complete member
    pos = start  # end of the bytes read so far
    inflater: zlib._Decompress | None = None
    with open(path, "rb") as f:
        f.seek(start)
        while chunk := f.read(_CHUNK):
            pos += len(chunk)
            data = chunk
            while data:
                if inflater is None:
                    inflater = zlib.decompressobj(zlib.MAX_WBITS | 16)
                try:
                    inflater.decompress(data)
                except zlib.error:
                    return good
                if not inflater.eof:
                    break
                data = inflater.unused_data  # always a suffix of this chunk
                good = pos - len(data)
                inflater = None
    return good


def _truncate(path: Path, size: int) -> None:
    with open(path, "r+b") as f:
        f.truncate(size)
        f.flush()
        os.fsync(f.fileno())


def _recover_cdxj(path: Path, sizes: dict[str, int], corrupt: set[str]) -> int:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return 0
    lines = data.split(b"\n")
    partial = lines.pop()  # b"" when the file ends with a newline
    dropped = 1 if partial else 0
    kept: list[bytes] = []
    for raw in lines:
        if _cdxj_line_ok(raw, sizes, corrupt):
            kept.append(raw)
        else:
            dropped += 1
    if dropped:
        tmp = path.with_name(path.name + ".tmp")
        with open(tmp, "wb") as f:
            f.write(b"".join(line + b"\n" for line in kept))
            f.flush()
            os.fsync(f.fileno())
        crashpoints.reached(CrashPoint.RECOVERY_CDXJ_TMP)
        os.replace(tmp, path)
        _fsync_dir(path.parent)
        log.warning("CDXJ index %s: dropped %d lines", path.name, dropped)
    return dropped


def _cdxj_line_ok(raw: bytes, sizes: dict[str, int], corrupt: set[str]) -> bool:
    try:
        parsed = parse_cdxj_line(raw.decode("utf-8"))
    except UnicodeDecodeError:
        return False
    if parsed is None:
        return False
    fields = parsed[2]
    name = fields.get("filename")
    if name in corrupt:
        return False
    if not isinstance(name, str) or name not in sizes:
        return True  # a file moved away is not ours to judge
    try:
        end = int(str(fields["offset"])) + int(str(fields["length"]))
    except (KeyError, ValueError):
        return False
    return end <= sizes[name]


def _recover_log(path: Path) -> int:
    """Cut the crawl log back to its last line that is a JSON object with its newline:
    a partial last line and complete lines after it that are not JSON objects (a torn
    write, zeros after a power loss) go, so that a second recovery finds nothing to cut."""
    try:
        f = open(path, "r+b")  # noqa: SIM115
    except FileNotFoundError:
        return 0
    with f:
        size = f.seek(0, os.SEEK_END)
        keep = size
        while keep > 0:
            f.seek(keep - 1)
            if f.read(1) != b"\n":  # a partial last line
                keep = _rfind_newline(f, keep) + 1
                continue
            start = _rfind_newline(f, keep - 1) + 1
            f.seek(start)
            if _is_json_line(f.read(keep - start)):
                break
            keep = start
        if keep == size:
            return 0
        f.truncate(keep)
        f.flush()
        os.fsync(f.fileno())
    log.warning("crawl log %s: cut a partial last line (%d bytes)", path.name, size - keep)
    return size - keep


def _is_json_line(raw: bytes) -> bool:
    try:
        return isinstance(json.loads(raw), dict)
    except ValueError:
        return False


def _rfind_newline(f: BinaryIO, end: int) -> int:
    """Offset of the last newline before ``end`` in the open file, or -1."""
    pos = end
    while pos > 0:
        start = max(0, pos - _CHUNK)
        f.seek(start)
        block = f.read(pos - start)
        i = block.rfind(b"\n")
        if i >= 0:
            return start + i
        pos = start
    return -1


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
