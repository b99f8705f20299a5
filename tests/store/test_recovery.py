"""recover_store: a crawl directory left by kill -9 becomes readable and consistent."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest

from headway.store.cdxj import CdxjWriter
from headway.store.crawllog import CrawlLog, CrawlLogEntry
from headway.store.recovery import complete_gzip_prefix, recover_store
from headway.store.warc import WarcWriter, WrittenRecord
from tests.store.factory import fetch_result, read_records


def entry(i: int) -> CrawlLogEntry:
    return CrawlLogEntry(
        time=1_700_000_000.0 + i, url=f"http://example.com/{i}", status=200, outcome="ok",
        bytes=10, content_type="text/html", digest=None, duration=0.1, depth=1, outlinks=0,
        truncated=None, error=None,
    )  # fmt: skip


def make_crawl(directory: Path, n: int = 4, max_file_size: int = 1_000_000) -> list[WrittenRecord]:
    directory.mkdir(parents=True, exist_ok=True)
    w = WarcWriter(directory, max_file_size=max_file_size)
    idx = CdxjWriter(directory / "index.cdxj")
    log = CrawlLog(directory / "crawl.log.jsonl")
    written = []
    for i in range(n):
        r = fetch_result(url=f"http://example.com/{i}", raw_body=os.urandom(300))
        rec = w.write_exchange(r)
        idx.append(r, rec)
        log.write(entry(i))
        written.append(rec)
    w.close()
    idx.close()
    log.close()
    return written


def test_clean_directory_is_left_alone(tmp_crawl_dir: Path) -> None:
    make_crawl(tmp_crawl_dir)
    before = {p.name: p.read_bytes() for p in tmp_crawl_dir.iterdir()}
    report = recover_store(tmp_crawl_dir)
    assert report.warc_files_checked == 1
    assert (report.warc_bytes_cut, report.cdxj_lines_dropped, report.log_bytes_cut) == ({}, 0, 0)
    assert {p.name: p.read_bytes() for p in tmp_crawl_dir.iterdir()} == before


def test_half_member_and_half_lines_are_cut(tmp_crawl_dir: Path) -> None:
    [*_, last] = make_crawl(tmp_crawl_dir)
    warc = tmp_crawl_dir / last.filename
    size = warc.stat().st_size
    half = gzip.compress(b"WARC/1.1\r\nWARC-Type: response\r\n" + os.urandom(500))[:200]
    with open(warc, "ab") as f:
        f.write(half)
    with open(tmp_crawl_dir / "index.cdxj", "a") as f:
        f.write('com,example)/9 20231114221320 {"url": "http://ex')
    log_path = tmp_crawl_dir / "crawl.log.jsonl"
    log_lines = log_path.read_text().splitlines()
    with open(log_path, "a") as f:
        f.write('{"time": "2023-11-14T22:1')

    report = recover_store(tmp_crawl_dir)
    assert report.warc_bytes_cut == {warc.name: 200}
    assert report.cdxj_lines_dropped == 1
    assert report.log_bytes_cut == len('{"time": "2023-11-14T22:1')
    assert warc.stat().st_size == size
    types = [r["type"] for r in read_records(warc)]  # digests checked, raises on damage
    assert types == ["warcinfo"] + ["response", "request"] * 4
    assert len((tmp_crawl_dir / "index.cdxj").read_text().splitlines()) == 4
    assert log_path.read_text().splitlines() == log_lines
    assert recover_store(tmp_crawl_dir).cdxj_lines_dropped == 0  # idempotent


def test_garbage_tail_is_cut(tmp_crawl_dir: Path) -> None:
    [rec, *_] = make_crawl(tmp_crawl_dir, n=2)
    warc = tmp_crawl_dir / rec.filename
    size = warc.stat().st_size
    with open(warc, "ab") as f:
        f.write(b"\x00garbage" * 100)
    assert recover_store(tmp_crawl_dir).warc_bytes_cut == {warc.name: 800}
    assert warc.stat().st_size == size
    assert len(read_records(warc)) == 5


def test_index_lines_past_the_recovered_end_are_dropped(tmp_crawl_dir: Path) -> None:
    written = make_crawl(tmp_crawl_dir, n=5)
    warc = tmp_crawl_dir / written[0].filename
    cut_at = written[3].offset + written[3].length // 2  # kill during the 4th response
    with open(warc, "r+b") as f:
        f.truncate(cut_at)
    report = recover_store(tmp_crawl_dir)
    assert report.warc_bytes_cut == {warc.name: cut_at - written[3].offset}
    assert warc.stat().st_size == written[3].offset
    assert report.cdxj_lines_dropped == 2
    offsets = [
        int(json.loads(line.split(" ", 2)[2])["offset"])
        for line in (tmp_crawl_dir / "index.cdxj").read_text().splitlines()
    ]
    assert offsets == [w.offset for w in written[:3]]
    assert len(read_records(warc)) == 1 + 2 * 3


def test_all_garbage_file_is_renamed_and_its_lines_dropped(tmp_crawl_dir: Path) -> None:
    written = make_crawl(tmp_crawl_dir, n=6, max_file_size=1800)
    names = sorted({w.filename for w in written})
    assert len(names) >= 2
    bad = tmp_crawl_dir / names[-1]
    bad.write_bytes(b"not a gzip member at all" * 10)
    lines_in_bad = sum(w.filename == bad.name for w in written)
    # and an index line for a file moved away by the operator is kept
    with open(tmp_crawl_dir / "index.cdxj", "a") as f:
        f.write('com,example)/x 20231114221320 {"url": "http://example.com/x", '
                '"offset": "10", "length": "10", "filename": "moved.warc.gz"}\n')  # fmt: skip

    report = recover_store(tmp_crawl_dir)
    assert report.corrupt_files == (bad.name,)
    assert report.warc_bytes_cut == {bad.name: 240}
    assert report.cdxj_lines_dropped == lines_in_bad
    assert not bad.exists() and (tmp_crawl_dir / (bad.name + ".corrupt")).exists()
    remaining = (tmp_crawl_dir / "index.cdxj").read_text()
    assert bad.name not in remaining and "moved.warc.gz" in remaining
    # the writer never reuses the corrupt file's serial
    new = WarcWriter(tmp_crawl_dir).write_exchange(fetch_result())
    assert int(new.filename[-13:-8]) == int(bad.name[-13:-8]) + 1


def test_complete_line_that_is_not_json_is_cut(tmp_crawl_dir: Path) -> None:
    make_crawl(tmp_crawl_dir, n=2)
    log_path = tmp_crawl_dir / "crawl.log.jsonl"
    good = log_path.read_bytes()
    log_path.write_bytes(good + b"\x00\x00\x00\n")
    assert recover_store(tmp_crawl_dir).log_bytes_cut == 4
    assert log_path.read_bytes() == good


@pytest.mark.parametrize(
    "tail",
    [b"\n\x00", b"\n\n", b'not json\n{"time": "2023', b"\x00\x00\n\x00\x00\n[]\n"],
)
def test_a_second_recovery_finds_nothing_to_cut(tmp_crawl_dir: Path, tail: bytes) -> None:
    """Found by the fuzzer (tests/fuzz, target warc_recovery): a log ending in a blank
    or non-JSON line before its partial one lost one more line at each start."""
    make_crawl(tmp_crawl_dir, n=2)
    log_path = tmp_crawl_dir / "crawl.log.jsonl"
    good = log_path.read_bytes()
    log_path.write_bytes(good + tail)
    assert recover_store(tmp_crawl_dir).log_bytes_cut == len(tail)
    assert log_path.read_bytes() == good
    assert recover_store(tmp_crawl_dir).log_bytes_cut == 0


def test_missing_files_and_empty_directory(tmp_path: Path) -> None:
    report = recover_store(tmp_path)
    assert report.warc_files_checked == 0 and report.cdxj_lines_dropped == 0


def test_complete_gzip_prefix_counts_members(tmp_path: Path) -> None:
    a, b = gzip.compress(b"a" * 1000), gzip.compress(os.urandom(3000))
    p = tmp_path / "x.gz"
    for data, expected in [
        (a + b, len(a) + len(b)),
        (a + b[:-1], len(a)),
        (a + b"\x1f", len(a)),
        (b"", 0),
        (b"junk" + a, 0),
    ]:
        p.write_bytes(data)
        assert complete_gzip_prefix(p) == expected
