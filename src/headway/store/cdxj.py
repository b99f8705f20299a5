"""CDXJ index of the WARC files: one line per response or revisit record.

Line format (the pywb/OutbackCDX convention)::

    <SURT key> <yyyymmddHHMMSS> {"url": ..., "mime": ..., "status": "200",
                                 "digest": "sha1:...", "length": "...", "offset": "...",
                                 "filename": "..."}

``status``, ``length`` and ``offset`` are strings, as the common indexers write them.
``mime`` is the Content-Type without parameters (``unk`` when absent), or
``warc/revisit`` for revisit records. Lines are appended in capture order; the store sorts
the file when it closes (``store.cdxjsort``).

``load_digests`` rebuilds, from an existing index, the payload digest -> first capture map
the WARC writer needs to keep writing revisits across restarts.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from pathlib import Path

from headway.fetch.result import FetchResult
from headway.store.linefile import LineFile
from headway.store.warc import WrittenRecord
from headway.urls.surt import surt

log = logging.getLogger(__name__)

REVISIT_MIME = "warc/revisit"


def timestamp14(epoch: float) -> str:
    """``yyyymmddHHMMSS`` (UTC) of a wall-clock time."""
    return datetime.fromtimestamp(int(epoch), UTC).strftime("%Y%m%d%H%M%S")


def mime_type(content_type: str | None) -> str:
    """Content-Type without parameters, lower-cased; ``unk`` when absent or empty."""
    mime = (content_type or "").split(";", 1)[0].strip().lower()
    return mime or "unk"


def cdxj_line(result: FetchResult, rec: WrittenRecord, languages: tuple[str, ...] = ()) -> str:
    """The index line (with its newline) for one written record; ``languages`` (ISO
    639-3, known with --text) is written, comma-separated, as Common Crawl's index
    writes it, and left out when empty."""
    fields = {
        "url": result.url,
        "mime": REVISIT_MIME if rec.revisit else mime_type(result.header("content-type")),
        "status": str(result.status),
        "digest": rec.payload_digest,
        "length": str(rec.length),
        "offset": str(rec.offset),
        "filename": rec.filename,
    }
    if languages:
        fields["languages"] = ",".join(languages)
    body = json.dumps(fields, separators=(", ", ": "))
    return f"{surt(result.url)} {timestamp14(result.started_at)} {body}\n"


def parse_cdxj_line(line: str) -> tuple[str, str, dict[str, object]] | None:
    """(key, timestamp, fields) of a line, or None when it is not a complete CDXJ line."""
    parts = line.rstrip("\n").split(" ", 2)
    if len(parts) != 3 or len(parts[1]) != 14 or not parts[1].isdigit():
        return None
    try:
        fields = json.loads(parts[2])
    except ValueError:
        return None
    if not isinstance(fields, dict):
        return None
    return parts[0], parts[1], fields


def record_extent(raw: bytes) -> tuple[str, int] | None:
    """(WARC file name, end offset of the record) of an index line read as bytes; None
    when the line is not a complete CDXJ line naming its record's file, offset and
    length."""
    try:
        parsed = parse_cdxj_line(raw.decode("utf-8"))
    except UnicodeDecodeError:
        return None
    if parsed is None:
        return None
    fields = parsed[2]
    name = fields.get("filename")
    if not isinstance(name, str):
        return None
    try:
        return name, int(str(fields["offset"])) + int(str(fields["length"]))
    except (KeyError, ValueError):
        return None


class CdxjWriter(LineFile):
    """Appends index lines to ``path`` (created if missing)."""

    def __init__(self, path: Path) -> None:
        super().__init__(path, "CDXJ index")

    def append(
        self, result: FetchResult, rec: WrittenRecord, languages: tuple[str, ...] = ()
    ) -> None:
        self.write_line(cdxj_line(result, rec, languages))


def load_digests(path: Path) -> dict[str, tuple[str, str]]:
    """Payload digest -> (url, WARC-Date) of the first non-revisit capture in the index.

    Missing file: empty map. Unreadable lines (a partial last line after a crash) are
    skipped. The WARC-Date is rebuilt from the 14-digit timestamp, which is exact because
    the WARC writer dates records at second precision.
    """
    digests: dict[str, tuple[str, str]] = {}
    try:
        f = open(path, encoding="utf-8", errors="replace")  # noqa: SIM115
    except FileNotFoundError:
        return digests
    with f:
        for n, line in enumerate(f, 1):
            parsed = parse_cdxj_line(line)
            if parsed is None:
                if line.strip():
                    log.warning("%s:%d: skipping unreadable CDXJ line", path, n)
                continue
            _, stamp, fields = parsed
            digest, url = fields.get("digest"), fields.get("url")
            if fields.get("mime") == REVISIT_MIME or not isinstance(digest, str):
                continue
            if isinstance(url, str) and digest not in digests:
                digests[digest] = (url, iso_from_timestamp14(stamp))
    return digests


def iso_from_timestamp14(stamp: str) -> str:
    """The WARC-Date (``YYYY-MM-DDThh:mm:ssZ``) of a 14-digit CDXJ timestamp."""
    return f"{stamp[0:4]}-{stamp[4:6]}-{stamp[6:8]}T{stamp[8:10]}:{stamp[10:12]}:{stamp[12:14]}Z"
