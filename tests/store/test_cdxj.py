"""CDXJ index: line format, offsets that lead to the right record, digest reload."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from headway.fetch.result import FetchResult
from headway.store.cdxj import CdxjWriter, load_digests, mime_type, parse_cdxj_line
from headway.store.warc import WarcWriter, WrittenRecord, payload_digest
from headway.urls.surt import surt
from tests.store.factory import HTML, T0, fetch_result, read_records, record_at


def crawl(directory: Path, results: list[FetchResult], index: Path) -> list[WrittenRecord]:
    w = WarcWriter(directory, max_file_size=3000)
    idx = CdxjWriter(index)
    written = []
    payloads: dict[str, tuple[str, str]] = {}
    for r in results:
        rec = w.write_exchange(r, payloads)
        idx.append(r, rec)
        written.append(rec)
    w.close()
    idx.close()
    return written


def test_lines_have_surt_timestamp_and_fields_pointing_at_records(tmp_path: Path) -> None:
    results = [
        fetch_result(url=f"http://www.Example.com/p{i}?z=1&a=2", raw_body=b"body %d" % i * 200)
        for i in range(6)
    ]
    results.append(fetch_result(url="http://example.com/copy", raw_body=results[0].raw_body))
    index = tmp_path / "index.cdxj"
    written = crawl(tmp_path, results, index)
    lines = index.read_text().splitlines()
    assert len(lines) == len(results)
    for line, r, rec in zip(lines, results, written, strict=True):
        key, stamp, rest = line.split(" ", 2)
        fields = json.loads(rest)
        assert isinstance(surt(r.url), str)
        assert key == surt(r.url)
        assert stamp == "20231114221320"
        assert set(fields) == {"url", "mime", "status", "digest", "length", "offset", "filename"}
        assert fields["url"] == r.url and fields["status"] == "200"
        assert fields["digest"] == rec.payload_digest
        assert fields["mime"] == ("warc/revisit" if rec.revisit else "text/html")
        found = record_at(
            tmp_path / fields["filename"], int(fields["offset"]), int(fields["length"])
        )
        assert found["headers"].get_header("WARC-Record-ID") == rec.record_id
        assert found["headers"].get_header("WARC-Target-URI") == r.url
    assert written[-1].revisit
    assert len({rec.filename for rec in written}) > 1  # offsets checked across files


@pytest.mark.parametrize(
    ("content_type", "mime"),
    [
        ("text/html; charset=utf-8", "text/html"),
        ("Application/XHTML+XML", "application/xhtml+xml"),
        ("  text/plain ;q", "text/plain"),
        ("", "unk"),
        (None, "unk"),
    ],
)
def test_mime_type(content_type: str | None, mime: str) -> None:
    assert mime_type(content_type) == mime


@pytest.mark.parametrize(
    "line",
    ["", "com,example)/ 2023", "com,example)/ 20231114221320 {not json", "a 2023111422132x {}",
     "com,example)/ 20231114221320 [1]"],
)  # fmt: skip
def test_unreadable_lines_parse_to_none(line: str) -> None:
    assert parse_cdxj_line(line) is None


def test_load_digests_keeps_first_capture_and_tolerates_a_bad_last_line(tmp_path: Path) -> None:
    results = [
        fetch_result(url="http://example.com/first"),
        fetch_result(url="http://example.com/dup", started_at=T0 + 60),
        fetch_result(url="http://example.com/other", raw_body=b"other", started_at=T0 + 5),
    ]
    index = tmp_path / "index.cdxj"
    crawl(tmp_path, results, index)
    with open(index, "a") as f:
        f.write('com,example)/half 20231114221320 {"url": "http://exa')
    digests = load_digests(index)
    assert digests == {
        payload_digest(HTML): ("http://example.com/first", "2023-11-14T22:13:20Z"),
        payload_digest(b"other"): ("http://example.com/other", "2023-11-14T22:13:25Z"),
    }
    assert load_digests(tmp_path / "missing.cdxj") == {}


def test_revisit_across_restart_refers_to_the_exact_original_date(tmp_path: Path) -> None:
    index = tmp_path / "index.cdxj"
    [orig] = crawl(tmp_path, [fetch_result(url="http://example.com/orig")], index)
    orig_date = read_records(tmp_path / orig.filename)[1]["headers"].get_header("WARC-Date")

    # restart: a new writer seeded from the index on disk
    w = WarcWriter(tmp_path)
    rec = w.write_exchange(
        fetch_result(url="http://example.com/again", started_at=T0 + 99), load_digests(index)
    )
    w.close()
    assert rec.revisit and rec.filename != orig.filename
    h = read_records(tmp_path / rec.filename)[1]["headers"]
    assert h.get_header("WARC-Refers-To-Target-URI") == "http://example.com/orig"
    assert h.get_header("WARC-Refers-To-Date") == orig_date
