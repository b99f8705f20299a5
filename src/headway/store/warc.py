"""WARC/1.1 writer: one request + response (or revisit) pair per fetch, gzip per record.

Contract:

- ``WarcWriter.write_exchange`` takes a ``FetchResult`` that has a response and appends,
  to the current file, a ``response`` record (status line, headers and ``raw_body`` as
  received) or, when a non-empty payload with the same digest is in the ``payloads`` map
  the caller passes (digest -> first capture: the crawl's shared payload digests, see
  ``FrontierStore.find_payloads``), a ``revisit`` record (identical-payload-digest
  profile, headers only); a new non-empty digest is added to that map. A ``304`` answer
  to a conditional revisit, given the earlier capture (``not_modified_of``), is a
  ``revisit`` record with the server-not-modified profile, referring to that capture
  (target URI, date and, when known, record id) and carrying its payload digest. Then the
  ``request`` record. Both are linked with ``WARC-Concurrent-To``. It returns where the
  response/revisit record landed, for the CDXJ index.
- Each record is its own standard gzip member (RFC 1952, read by every WARC and gzip
  reader), deflated with ISA-L (``isal``), 5-10x faster than zlib at a similar size.
  ``compress_level`` 1-9 keeps zlib's meaning of fast-to-small and maps onto ISA-L's
  levels (``ISAL_LEVEL``: 1-2 -> 0, 3-5 -> 1, 6-8 -> 2, 9 -> 3; on HTML, ISA-L 0 is
  about 15% larger than zlib 1, ISA-L 2 about zlib 1 and ISA-L 3 about zlib 6). The
  pair is never split across files. A new file is started when the pair would push the
  current one past ``max_file_size``; every file opens with a ``warcinfo`` record.
  Files are never reopened: a restarted writer starts a new file whose serial follows
  the highest one in the directory.
- ``WARC-Date`` is the fetch start (``FetchResult.started_at``) at second precision, so
  the 14-digit CDXJ timestamp restores it exactly for revisits written after a restart.
- ``write_conversion`` appends one ``conversion`` record (the text output, Common Crawl's
  WET layout): ``WARC-Refers-To`` the response record the text was made from, the same
  ``WARC-Date`` and ``WARC-Target-URI``, ``WARC-Block-Digest``, ``Content-Type:
  text/plain`` (UTF-8) and ``WARC-Identified-Content-Language`` (comma-separated ISO
  639-3 codes, most likely first; absent when unknown). Files rotate as for exchanges.
  ``write_metadata`` appends a ``metadata`` record about a response the same way (the
  outlinks output: JSON, as Common Crawl's WAT files carry).
- Not thread-safe: the runtime calls it from one dedicated thread, never the event loop.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import io
import logging
import os
import re
import time
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass
from datetime import UTC, datetime
from http import HTTPStatus
from pathlib import Path
from typing import Any, BinaryIO
from urllib.parse import urlsplit

from isal import isal_zlib
from warcio.statusandheaders import StatusAndHeaders
from warcio.utils import Digester
from warcio.warcwriter import WARCWriter

from headway import crashpoints
from headway.crashpoints import CrashPoint
from headway.errors import StoreError
from headway.fetch.result import FetchResult, Headers

log = logging.getLogger(__name__)

REVISIT_PROFILE = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"
NOT_MODIFIED_PROFILE = "http://netpreserve.org/warc/1.1/revisit/server-not-modified"
WARC_VERSION = "1.1"
#: ``compress_level`` (zlib's 1-9 scale) -> ISA-L level (0-3). On HTML: ISA-L 0 is the
#: fastest and about 15% larger than 1; 1 and 2 are about zlib 1 in size; 3 about zlib 6.
ISAL_LEVEL = {1: 0, 2: 0, 3: 1, 4: 1, 5: 1, 6: 2, 7: 2, 8: 2, 9: 3}
#: wbits for a gzip wrapper (header and CRC-32 trailer) around a deflate stream.
GZIP_WBITS = 31
#: aiohttp has already removed the chunked framing from ``raw_body``; keeping the header
#: would make WARC readers try to de-chunk a body that is not chunked.
RENAMED_HEADERS = {"transfer-encoding": "X-Headway-Transfer-Encoding"}
#: FetchResult.truncated -> WARC-Truncated. A cut decoded body may also mean the raw read
#: stopped early, so it is marked as a length cut rather than risk an unmarked short record.
_TRUNCATED = {"length": "length", "decoded-length": "length", "time": "time"}
#: WARC-Payload-Digest of an empty payload (a request record's, as warcio writes it).
EMPTY_DIGEST = "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ"
_CONFORMS_TO = "https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/"


@dataclass(frozen=True, slots=True)
class EarlierCapture:
    """The capture a revisit record refers to: target URI, WARC-Date, and the record id
    when known (it is not for a capture found by payload digest)."""

    uri: str
    date: str
    record_id: str | None = None
    profile: str = REVISIT_PROFILE


@dataclass(frozen=True, slots=True)
class WrittenRecord:
    """Where a response (or revisit) record landed."""

    filename: str  # basename of the WARC file
    offset: int  # byte offset of the record's gzip member
    length: int  # compressed length of that member
    payload_digest: str  # "sha1:<BASE32>" of raw_body
    revisit: bool
    record_id: str  # WARC-Record-ID of the response/revisit record
    refers_to: EarlierCapture | None = None  # the capture a revisit record refers to


@dataclass(frozen=True, slots=True)
class WarcStats:
    """Snapshot of a writer's totals since it was opened."""

    files: int  # files opened
    records: int  # every record written, warcinfo and request records included
    bytes_written: int  # compressed bytes
    revisits: int
    not_modified: int = 0  # revisits recording a 304 (server-not-modified)


def payload_digest(body: bytes) -> str:
    """``sha1:<BASE32>`` of ``body``, the form used in WARC-Payload-Digest and CDXJ."""
    digester = Digester("sha1")
    digester.update(body)
    return str(digester)


def warc_date(epoch: float) -> str:
    """WARC-Date for a wall-clock time: ISO-8601 UTC at second precision."""
    return datetime.fromtimestamp(int(epoch), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def warc_file_name(prefix: str, now: float, serial: int) -> str:
    """``{prefix}-{yyyymmddHHMMSS}-{serial:05d}.warc.gz`` (UTC)."""
    stamp = datetime.fromtimestamp(now, UTC).strftime("%Y%m%d%H%M%S")
    return f"{prefix}-{stamp}-{serial:05d}.warc.gz"


def next_serial(directory: Path, prefix: str) -> int:
    """One past the highest serial among ``prefix`` WARC files (corrupt ones included)."""
    pattern = re.compile(re.escape(prefix) + r"-\d{14}-(\d{5,})\.warc\.gz(\.corrupt)?$")
    serials = [int(m.group(1)) for p in directory.iterdir() if (m := pattern.match(p.name))]
    return max(serials) + 1 if serials else 0


def _clean(value: str) -> str:
    # Header values may carry surrogate escapes (undecodable bytes) or stray line breaks;
    # either would break the record or warcio's header encoder.
    if not value.isascii():
        value = value.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return value.replace("\r", " ").replace("\n", " ")


def _http_response_headers(result: FetchResult) -> StatusAndHeaders:
    assert result.status is not None
    reason = result.reason
    if not reason:
        try:
            reason = HTTPStatus(result.status).phrase
        except ValueError:
            reason = ""
    headers = [(RENAMED_HEADERS.get(k.lower(), k), _clean(v)) for k, v in result.response_headers]
    statusline = f"{result.status} {_clean(reason)}".rstrip()
    return StatusAndHeaders(statusline, headers, protocol=f"HTTP/{result.http_version}")


def _http_request_headers(url: str, method: str, request_headers: Headers) -> StatusAndHeaders:
    parts = urlsplit(url)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    headers = [(k, _clean(v)) for k, v in request_headers]
    if not any(k.lower() == "host" for k, _ in headers):
        # The client sends Host itself; record it so the request record is complete.
        headers.insert(0, ("Host", parts.netloc.rpartition("@")[2]))
    return StatusAndHeaders(f"{target} HTTP/1.1", headers, protocol=method)


def _warc_headers(
    rec_type: str, rec_id: str, date: str, url: str, ip: str | None, concurrent_to: str
) -> dict[str, str]:
    # warcio keeps these in place, so records open with the conventional header order
    headers = {"WARC-Type": rec_type, "WARC-Record-ID": rec_id, "WARC-Date": date}
    headers["WARC-Target-URI"] = url
    if ip:
        headers["WARC-IP-Address"] = ip
    headers["WARC-Concurrent-To"] = concurrent_to
    return headers


class WarcWriter:
    """Appends fetch exchanges to rotating ``.warc.gz`` files in ``directory``."""

    def __init__(
        self,
        directory: Path,
        *,
        prefix: str = "headway",
        max_file_size: int = 1_000_000_000,
        software: str = "headway/0.1.0",
        info: Mapping[str, str] | None = None,
        compress_level: int = 6,
    ) -> None:
        if max_file_size <= 0:
            raise ValueError("max_file_size must be positive")
        if not 1 <= compress_level <= 9:
            raise ValueError("compress_level must be 1..9")
        self._dir = Path(directory)
        self._dir.mkdir(parents=True, exist_ok=True)
        self._prefix = prefix
        self._max = max_file_size
        self._software = software
        self._info = dict(info or {})
        self._serial = next_serial(self._dir, prefix)
        self._file: BinaryIO | None = None
        self._name: str | None = None
        self._size = 0  # bytes in the current file
        self._exchanges = 0  # exchanges in the current file
        self._warcinfo_id: str | None = None  # record id of the current file's warcinfo
        self._files = self._records = self._bytes = self._revisits = 0
        self._not_modified = 0
        self._level = ISAL_LEVEL[compress_level]
        # warcio serializes records (headers, digests, lengths); the gzip member is made
        # here because warcio always deflates with zlib at level 9, 5-10x slower than
        # ISA-L for about 1-3% smaller files.
        self._builder = WARCWriter(io.BytesIO(), gzip=False, warc_version=WARC_VERSION)

    @property
    def current_file(self) -> str | None:
        """Basename of the file being written, None before the first write or after close."""
        return self._name

    def statistics(self) -> WarcStats:
        return WarcStats(
            self._files, self._records, self._bytes, self._revisits, self._not_modified
        )

    def write_exchange(
        self,
        result: FetchResult,
        payloads: MutableMapping[str, tuple[str, str]] | None = None,
        *,
        digest: str | None = None,
        not_modified_of: EarlierCapture | None = None,
    ) -> WrittenRecord:
        """Write the request and response/revisit records of one exchange. ``payloads``:
        payload digest -> (target URI, WARC-Date) of the first capture (None: never a
        revisit); ``digest``: the payload digest when the caller computed it already
        (for a 304: the digest of the earlier capture's payload); ``not_modified_of``:
        the earlier capture a 304 confirms (ignored for any other status)."""
        if result.status is None:
            raise ValueError(f"no response to write for {result.url}")
        if digest is None:
            digest = payload_digest(result.raw_body)
        first: EarlierCapture | None = None
        if result.status == 304 and not_modified_of is not None:
            first = dataclasses.replace(not_modified_of, profile=NOT_MODIFIED_PROFILE)
        elif result.raw_body and payloads is not None and (known := payloads.get(digest)):
            first = EarlierCapture(known[0], known[1])
        data, resp_len, resp_id = self._encode_exchange(result, digest, first)
        if self._file is not None and self._exchanges and self._size + len(data) > self._max:
            self._close_file()
            crashpoints.reached(CrashPoint.WARC_ROTATED)
        if self._file is None:
            self._open_file()
            # re-encode so the records name this file's warcinfo record
            data, resp_len, resp_id = self._encode_exchange(result, digest, first)
        assert self._file is not None and self._name is not None
        offset = self._size
        self._append(data, records=2)
        self._exchanges += 1
        if first is not None:
            self._revisits += 1
            self._not_modified += int(first.profile == NOT_MODIFIED_PROFILE)
        elif result.raw_body and payloads is not None and digest not in payloads:
            payloads[digest] = (result.url, warc_date(result.started_at))
        return WrittenRecord(
            self._name, offset, resp_len, digest, first is not None, resp_id, first
        )

    def write_conversion(
        self,
        *,
        url: str,
        date: str,
        refers_to: str,
        text: str,
        languages: tuple[str, ...] = (),
    ) -> WrittenRecord:
        """Write one ``conversion`` record of ``text`` made from the record ``refers_to``
        (its WARC-Record-ID) of ``url`` dated ``date`` (a WARC-Date)."""
        extra = {"WARC-Identified-Content-Language": ",".join(languages)} if languages else {}
        block = text.encode("utf-8", "replace")
        return self._write_derived("conversion", url, date, refers_to, block, "text/plain", extra)

    def write_metadata(
        self, *, url: str, date: str, refers_to: str, payload: bytes, content_type: str
    ) -> WrittenRecord:
        """Write one ``metadata`` record about the record ``refers_to`` of ``url``."""
        return self._write_derived("metadata", url, date, refers_to, payload, content_type, {})

    def _write_derived(
        self,
        kind: str,
        url: str,
        date: str,
        refers_to: str,
        block: bytes,
        content_type: str,
        extra: dict[str, str],
    ) -> WrittenRecord:
        if self._file is not None and self._exchanges and self._size + len(block) > self._max:
            self._close_file()
        if self._file is None:
            self._open_file()
        assert self._file is not None and self._name is not None
        rec_id = self._builder._make_warc_id()
        headers = {"WARC-Type": kind, "WARC-Record-ID": rec_id, "WARC-Date": date}
        headers["WARC-Target-URI"] = _clean(url)
        headers["WARC-Refers-To"] = refers_to
        if self._warcinfo_id:
            headers["WARC-Warcinfo-ID"] = self._warcinfo_id
        digest = base64.b32encode(hashlib.sha1(block).digest()).decode("ascii")
        headers["WARC-Block-Digest"] = "sha1:" + digest
        headers.update(extra)
        headers["Content-Type"] = content_type
        headers["Content-Length"] = str(len(block))
        warc = StatusAndHeaders("", list(headers.items()), protocol=f"WARC/{WARC_VERSION}")
        data = self._gzip(b"".join((warc.to_bytes(encoding="utf-8"), block, b"\r\n\r\n")))
        offset = self._size
        self._append(data, records=1)
        self._exchanges += 1
        return WrittenRecord(self._name, offset, len(data), "sha1:" + digest, False, rec_id)

    def flush(self, *, sync: bool = True) -> None:
        """Hand written records to the operating system (enough for them to survive
        the death of this process); with ``sync`` also fsync them to the device."""
        if self._file is not None:
            self._file.flush()
            if sync:
                os.fsync(self._file.fileno())

    def close(self) -> None:
        """Flush and close the current file; a later write opens a new one."""
        self._close_file()

    def _encode_exchange(
        self, result: FetchResult, digest: str, first: EarlierCapture | None
    ) -> tuple[bytes, int, str]:
        """Gzip members of the response/revisit + request records, the first one's length
        and its record id."""
        date = warc_date(result.started_at)
        builder = self._builder
        resp_id = builder._make_warc_id()
        req_id = builder._make_warc_id()
        resp_type = "revisit" if first is not None else "response"
        resp_headers = _warc_headers(resp_type, resp_id, date, result.url, result.ip, req_id)
        http = _http_response_headers(result)
        if first is not None:  # rare: warcio builds the revisit record
            resp = builder.create_revisit_record(
                result.url,
                digest,
                first.uri,
                first.date,
                http_headers=http,
                warc_headers_dict=resp_headers,
            )
            resp.rec_headers.replace_header("WARC-Profile", first.profile)
            if first.record_id:
                resp.rec_headers.add_header("WARC-Refers-To", first.record_id)
            if self._warcinfo_id:
                resp.rec_headers.add_header("WARC-Warcinfo-ID", self._warcinfo_id)
            resp_bytes = self._gzip_record(resp)
        else:
            if result.truncated:
                resp_headers["WARC-Truncated"] = _TRUNCATED.get(result.truncated, "unspecified")
            resp_headers["WARC-Payload-Digest"] = digest
            resp_bytes = self._gzip(self._record(resp_headers, http, result.raw_body, "response"))
        req_http = _http_request_headers(result.url, result.method, result.request_headers)
        req_headers = _warc_headers("request", req_id, date, result.url, result.ip, resp_id)
        req_headers["WARC-Payload-Digest"] = EMPTY_DIGEST
        req_bytes = self._gzip(self._record(req_headers, req_http, b"", "request"))
        return resp_bytes + req_bytes, len(resp_bytes), resp_id

    def _record(
        self, headers: dict[str, str], http: StatusAndHeaders, payload: bytes, msgtype: str
    ) -> bytes:
        """One ``response`` or ``request`` record, serialized as warcio serializes it
        (same header order, encodings and digests), without its per-record buffers and
        streams: the block is the HTTP header block and ``payload``."""
        head = http.to_ascii_bytes()
        block = hashlib.sha1(head)
        block.update(payload)
        if self._warcinfo_id:
            headers["WARC-Warcinfo-ID"] = self._warcinfo_id
        headers["WARC-Block-Digest"] = "sha1:" + base64.b32encode(block.digest()).decode("ascii")
        headers["Content-Type"] = f"application/http; msgtype={msgtype}"
        headers["Content-Length"] = str(len(head) + len(payload))
        warc = StatusAndHeaders("", list(headers.items()), protocol=f"WARC/{WARC_VERSION}")
        return b"".join((warc.to_bytes(encoding="utf-8"), head, payload, b"\r\n\r\n"))

    def _gzip(self, data: bytes) -> bytes:
        deflater = isal_zlib.compressobj(self._level, isal_zlib.DEFLATED, GZIP_WBITS)
        return deflater.compress(data) + deflater.flush()

    def _gzip_record(self, record: Any) -> bytes:
        out = io.BytesIO()
        self._builder.out = out
        self._builder.write_record(record)
        return self._gzip(out.getvalue())

    def _open_file(self) -> None:
        name = warc_file_name(self._prefix, time.time(), self._serial)
        self._serial += 1
        try:
            self._file = open(self._dir / name, "xb")  # noqa: SIM115 - owned by the writer
        except OSError as e:
            raise StoreError(f"cannot create WARC file {name}: {e}") from e
        self._name, self._size, self._exchanges = name, 0, 0
        self._files += 1
        fields = {
            "software": self._software,
            "format": "WARC File Format 1.1",
            "conformsTo": _CONFORMS_TO,
            **self._info,
        }
        info = self._builder.create_warcinfo_record(name, fields)
        self._warcinfo_id = info.rec_headers.get_header("WARC-Record-ID")
        self._append(self._gzip_record(info), records=1)
        log.info("opened WARC file %s", name)

    def _append(self, data: bytes, *, records: int) -> None:
        assert self._file is not None
        if records == 2 and crashpoints.hit(CrashPoint.WARC_PARTIAL):
            self._file.write(data[: len(data) // 2])  # a torn record on disk, then death
            self._file.flush()
            crashpoints.crash()
        try:
            self._file.write(data)
        except OSError as e:
            raise StoreError(f"cannot write WARC file {self._name}: {e}") from e
        self._size += len(data)
        self._bytes += len(data)
        self._records += records

    def _close_file(self) -> None:
        if self._file is None:
            return
        self.flush()
        self._file.close()
        log.info("closed WARC file %s (%d bytes)", self._name, self._size)
        self._file, self._name, self._warcinfo_id = None, None, None
