"""The page list of a WACZ (``pages/pages.jsonl``, WACZ 1.1.1 "Page" objects) from the
nodes' crawl logs, with each page's title read from its WARC record.

A page is a crawl log line with a WARC record that lies wholly in the packaged bytes of
its file (``valid``: file name -> bytes) and that is HTML, or a seed (depth 0, found on
no page, not a robots.txt) whatever its type. Each page is one JSON line: ``id``,
``url``, ``ts`` (the record's ``WARC-Date``, so replay finds that very capture),
``title`` (of a response record's HTML; a revisit record has no payload of its own and
no title), ``status``, ``mime``, ``depth``, and ``seed: true`` for seeds. Lines are in
fetch-time order across nodes (each crawl log is in time order). Memory is one line per
node and one record at a time; unreadable crawl log lines (a killed crawl's partial last
line) are skipped and counted. The crawl keeps no page text, so pages carry none.
"""

from __future__ import annotations

import hashlib
import heapq
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO
from urllib.parse import urlsplit

import orjson

from headway.fetch.decode import decode_content
from headway.parse.page import is_html
from headway.parse.title import html_title
from headway.store.crawllog import parse_entry

#: A page list's first line (WACZ 1.1.1, "pages.jsonl").
PAGES_HEADER = {"format": "json-pages-1.0", "id": "pages", "title": "All Pages"}
#: The most of one WARC record inflated to read its title: the head of a page is where
#: its title is.
RECORD_LIMIT = 4 << 20
_CHUNK = 16 << 10


@dataclass(frozen=True, slots=True)
class RecordHead:
    """What the page list needs of one WARC record."""

    warc_type: str
    date: str  # WARC-Date
    status: int | None
    content_type: str | None
    body: bytes  # the payload as received (content-coded), possibly cut at RECORD_LIMIT
    content_encoding: str | None


def _headers(block: bytes) -> tuple[str, dict[str, str]]:
    lines = block.decode("iso-8859-1").split("\r\n")
    fields: dict[str, str] = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if sep:
            fields.setdefault(name.strip().lower(), value.strip())
    return lines[0], fields


def parse_record(data: bytes) -> RecordHead | None:
    """The head of one inflated WARC record (response or revisit with an HTTP message);
    None when it is not one."""
    warc_end = data.find(b"\r\n\r\n")
    if warc_end < 0:
        return None
    first, warc = _headers(data[:warc_end])
    if not first.startswith("WARC/"):
        return None
    rest = data[warc_end + 4 :]
    http_end = rest.find(b"\r\n\r\n")
    if http_end < 0:
        return None
    status_line, http = _headers(rest[:http_end])
    parts = status_line.split(" ", 2)
    status = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else None
    body = rest[http_end + 4 :]
    length = warc.get("content-length", "")
    if length.isdigit():  # the record's block ends there; what follows is the trailer
        body = body[: max(0, int(length) - http_end - 4)]
    return RecordHead(
        warc_type=warc.get("warc-type", ""),
        date=warc.get("warc-date", ""),
        status=status,
        content_type=http.get("content-type"),
        body=body,
        content_encoding=http.get("content-encoding"),
    )


def _title_read(data: bytes) -> bool:
    """Enough of a record is inflated for its page list line: its headers and, unless the
    body is content-coded (then it is decoded whole), the end of its first title."""
    warc_end = data.find(b"\r\n\r\n")
    http_end = data.find(b"\r\n\r\n", warc_end + 4) if warc_end >= 0 else -1
    if http_end < 0:
        return False
    if b"\ncontent-encoding:" in data[warc_end:http_end].lower():
        return False
    return data.find(b"</title", http_end) >= 0 or data.find(b"</TITLE", http_end) >= 0


class RecordReader:
    """Reads single records out of the packaged WARC files (``files``: name -> path);
    keeps a file open while consecutive reads stay in it."""

    def __init__(self, files: dict[str, Path]) -> None:
        self._files = files
        self._name = ""
        self._fh: BinaryIO | None = None

    def read(self, name: str, offset: int, enough: Callable[[bytes], bool] = _title_read) -> bytes:
        """The record at ``offset`` of file ``name``, inflated until ``enough`` says so, the
        record ends or ``RECORD_LIMIT`` bytes; empty when it cannot be read."""
        if name != self._name:
            self.close()
            self._fh = open(self._files[name], "rb")  # noqa: SIM115 - kept for the next reads
            self._name = name
        assert self._fh is not None
        self._fh.seek(offset)
        inflater = zlib.decompressobj(zlib.MAX_WBITS | 16)
        out = bytearray()
        try:
            while len(out) < RECORD_LIMIT:
                data = self._fh.read(_CHUNK)
                if not data:
                    break
                while data:  # at most _CHUNK bytes inflated between two looks
                    out += inflater.decompress(data, min(_CHUNK, RECORD_LIMIT - len(out)))
                    data = inflater.unconsumed_tail
                    if inflater.eof or len(out) >= RECORD_LIMIT or enough(bytes(out)):
                        return bytes(out)
        except zlib.error:
            return b""
        return bytes(out)

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
        self._fh = None
        self._name = ""


@dataclass(slots=True)
class PageCounts:
    pages: int = 0
    seeds: int = 0
    unreadable_lines: int = 0
    outside: int = 0  # lines whose record is not in the packaged bytes


def _log_entries(path: Path, counts: PageCounts) -> Iterator[tuple[float, int, dict[str, Any]]]:
    try:
        fh = path.open("rb")
    except FileNotFoundError:
        return
    with fh:
        for n, raw in enumerate(fh):
            try:
                entry = parse_entry(raw.decode("utf-8"))
            except (ValueError, KeyError, TypeError):
                if raw.strip():
                    counts.unreadable_lines += 1
                continue
            yield (
                entry.time,
                n,
                {
                    "url": entry.url,
                    "status": entry.status,
                    "content_type": entry.content_type,
                    "depth": entry.depth,
                    "seed": entry.depth == 0
                    and entry.via is None
                    and urlsplit(entry.url).path != "/robots.txt",
                    "warc_file": entry.warc_file,
                    "warc_offset": entry.warc_offset,
                },
            )


def page_lines(
    logs: Sequence[Path], valid: dict[str, int], reader: RecordReader, counts: PageCounts
) -> Iterator[bytes]:
    """The page list's lines (each with its newline), header first; see the module
    docstring."""
    yield orjson.dumps(PAGES_HEADER) + b"\n"
    merged = heapq.merge(*(_log_entries(p, counts) for p in logs), key=lambda t: t[0])
    for _time, _n, e in merged:
        name, offset = e["warc_file"], e["warc_offset"]
        if name is None or offset is None:
            continue
        html = is_html(e["content_type"], b"") if e["content_type"] else False
        if not (html or e["seed"]):
            continue
        if name not in valid or offset >= valid[name]:
            counts.outside += 1
            continue
        head = parse_record(reader.read(name, offset))
        if head is None or not head.date:
            counts.outside += 1
            continue
        page: dict[str, Any] = {
            "id": hashlib.sha1(f"{head.date} {e['url']}".encode()).hexdigest()[:16],
            "url": e["url"],
            "ts": head.date,  # WARC-Date: RFC 3339 already
        }
        if head.warc_type == "response" and html:
            body, _cut, error = decode_content(head.body, head.content_encoding, RECORD_LIMIT)
            title = None if error else html_title(body, head.content_type)
            if title:
                page["title"] = title
        page["status"] = e["status"]
        page["mime"] = (e["content_type"] or "").split(";", 1)[0].strip().lower() or None
        page["depth"] = e["depth"]
        if e["seed"]:
            page["seed"] = True
            counts.seeds += 1
        counts.pages += 1
        yield orjson.dumps(page) + b"\n"
