"""Builders and readers shared by the store tests."""

from __future__ import annotations

import base64
import hashlib
import io
from pathlib import Path
from typing import Any

from warcio.archiveiterator import ArchiveIterator

from headway.fetch.result import FetchResult
from headway.policy.outcome import Outcome

T0 = 1_700_000_000.25  # 2023-11-14T22:13:20.25Z
HTML = b"<html><body><a href='/next'>next</a></body></html>"


def fetch_result(**overrides: Any) -> FetchResult:
    values: dict[str, Any] = {
        "url": "http://example.com/a?b=1",
        "started_at": T0,
        "duration": 0.05,
        "outcome": Outcome.OK,
        "status": 200,
        "reason": "OK",
        "request_headers": (("User-Agent", "headway-test/1"), ("Accept", "text/html")),
        "response_headers": (("Content-Type", "text/html; charset=utf-8"),),
        "raw_body": HTML,
        "body": HTML,
        "ip": "127.0.0.1",
    }
    values.update(overrides)
    return FetchResult(**values)


def sha1_b32(data: bytes) -> str:
    return "sha1:" + base64.b32encode(hashlib.sha1(data).digest()).decode()


def read_records(path: Path) -> list[dict[str, Any]]:
    """Every record of a WARC file, read with digest checks that raise, as plain dicts.

    ``block`` is the record block as stored (HTTP headers + payload), ``payload`` the
    entity body as stored, ``content`` the body after warcio's content decoding.
    """
    out = []
    with open(path, "rb") as f:
        it = ArchiveIterator(f, check_digests="raise")
        for rec in it:
            http_buf = b""
            if rec.http_headers is not None and rec.rec_type != "warcinfo":
                http_buf = rec.http_headers.to_bytes()
            payload = rec.raw_stream.read()
            out.append(
                {
                    "type": rec.rec_type,
                    "version": rec.rec_headers.protocol,
                    "headers": rec.rec_headers,
                    "http": rec.http_headers,
                    "http_bytes": http_buf,
                    "payload": payload,
                    "offset": it.get_record_offset(),
                }
            )
    return out


def record_at(path: Path, offset: int, length: int) -> dict[str, Any]:
    """The single record in ``length`` bytes at ``offset`` of a WARC file."""
    with open(path, "rb") as f:
        f.seek(offset)
        member = f.read(length)
    recs = list(ArchiveIterator(io.BytesIO(member), check_digests="raise"))
    assert len(recs) == 1
    rec = recs[0]
    return {"type": rec.rec_type, "headers": rec.rec_headers}


def gzip_members(data: bytes) -> list[tuple[int, int, bytes]]:
    """(offset, compressed length, inflated bytes) of each gzip member, parsed by hand."""
    import zlib

    members = []
    pos = 0
    while pos < len(data):
        d = zlib.decompressobj(zlib.MAX_WBITS | 16)
        inflated = d.decompress(data[pos:])
        assert d.eof, f"partial gzip member at {pos}"
        end = len(data) - len(d.unused_data)
        members.append((pos, end - pos, inflated))
        pos = end
    return members


def raw_records(path: Path) -> list[dict[str, Any]]:
    """Each record split by hand: WARC headers as a dict, and its block bytes."""
    out = []
    for offset, length, inflated in gzip_members(path.read_bytes()):
        head, _, rest = inflated.partition(b"\r\n\r\n")
        lines = head.decode().split("\r\n")
        headers = dict(line.split(": ", 1) for line in lines[1:])
        size = int(headers["Content-Length"])
        block = rest[:size]
        assert rest[size:] == b"\r\n\r\n", "record must end with two CRLF"
        out.append(
            {"version": lines[0], "headers": headers, "block": block,
             "offset": offset, "length": length}
        )  # fmt: skip
    return out
