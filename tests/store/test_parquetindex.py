"""The Parquet index: rows from crawl-log entries, parts written whole, offsets that
frame their records, and the repair of what a crash kept from a part."""

from __future__ import annotations

from pathlib import Path

import pytest

pq = pytest.importorskip("pyarrow.parquet")

from headway.store.crawllog import CrawlLogEntry, format_entry  # noqa: E402
from headway.store.parquetindex import (  # noqa: E402
    ParquetIndex,
    covered,
    member_length,
    repair_index,
    row_of,
)

ENTRY = CrawlLogEntry(
    time=1_700_000_000.123,
    url="https://www.example.co.uk/a/b?x=1",
    status=200,
    outcome="ok",
    bytes=10,
    content_type="text/html; charset=ISO-8859-1",
    digest="sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ",
    duration=0.1,
    depth=2,
    outlinks=3,
    truncated=None,
    error=None,
    warc_file="headway-1.warc.gz",
    warc_offset=0,
    via="https://www.example.co.uk/",
    languages=("eng", "sco"),
    text="written",
    ai_train="no",
)


def test_row_has_common_crawl_columns() -> None:
    row = row_of(ENTRY, 123)
    assert row["url_surtkey"] == "uk,co,example)/a/b?x=1"
    assert row["url_host_name"] == "www.example.co.uk"
    assert row["url_host_registered_domain"] == "example.co.uk"
    assert row["content_mime_type"] == "text/html"
    assert row["content_charset"] == "iso-8859-1"
    assert row["content_languages"] == "eng,sco"
    assert row["content_digest"] == "3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ"
    assert row["warc_filename"] == "warc/headway-1.warc.gz"
    assert (row["warc_record_offset"], row["warc_record_length"]) == (0, 123)
    assert row["warc_record_type"] == "response"
    assert (row["ai_train"], row["ai_input"], row["search"]) == ("no", None, None)
    assert row["fetch_time"] == 1_700_000_000_123


def test_parts_are_cut_by_rows_and_at_the_end(tmp_path: Path) -> None:
    index = ParquetIndex(tmp_path, "headway", part_rows=2, part_seconds=3600)
    for _ in range(2):
        index.add(ENTRY, 1)
    index.flushed(100)
    assert len(list(tmp_path.glob("*.parquet"))) == 1
    index.add(ENTRY, 1)
    index.flushed(150)  # one row: not due yet
    assert len(list(tmp_path.glob("*.parquet"))) == 1
    index.flushed(200, final=True)
    parts = sorted(tmp_path.glob("*.parquet"))
    assert [p.name for p in parts] == ["headway-00000.parquet", "headway-00001.parquet"]
    assert sum(pq.read_table(p).num_rows for p in parts) == 3
    assert covered(tmp_path, "headway") == 200
    assert not list(tmp_path.glob("*.tmp"))


def test_repair_writes_what_no_part_holds(tmp_path: Path) -> None:
    import gzip

    warc_dir = tmp_path / "warc"
    warc_dir.mkdir()
    members = [gzip.compress(b"record %d" % i * 50) for i in range(3)]
    (warc_dir / "headway-1.warc.gz").write_bytes(b"".join(members))
    offsets = [0, len(members[0]), len(members[0]) + len(members[1])]
    log = tmp_path / "crawl.log.jsonl"
    lines = [format_entry(ENTRY.__class__(**{**_fields(ENTRY), "warc_offset": o})) for o in offsets]
    log.write_text(lines[0])
    index_dir = tmp_path / "index"
    index_dir.mkdir()
    part = ParquetIndex(index_dir, "headway")
    part.add(ENTRY, len(members[0]))
    part.flushed(log.stat().st_size, final=True)
    # two more lines reached the log, then the process died before a part held them
    with log.open("a") as f:
        f.write(lines[1] + lines[2])
    (index_dir / "headway-00009.parquet.tmp").write_bytes(b"torn")
    assert repair_index(index_dir, "headway", log, warc_dir) == 2
    assert repair_index(index_dir, "headway", log, warc_dir) == 0  # never twice
    assert not list(index_dir.glob("*.tmp"))
    rows = sorted(
        (r["warc_record_offset"], r["warc_record_length"])
        for p in sorted(index_dir.glob("*.parquet"))
        for r in pq.read_table(p).to_pylist()
    )
    assert rows == [(o, len(m)) for o, m in zip(offsets, members, strict=True)]
    assert member_length(warc_dir / "headway-1.warc.gz", offsets[1]) == len(members[1])


def _fields(entry: CrawlLogEntry) -> dict[str, object]:
    return {name: getattr(entry, name) for name in entry.__dataclass_fields__}
