"""Crawl log: one JSON line per entry, keys exactly the field names, ms UTC time."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from headway.store.crawllog import (
    OPTIONAL,
    CrawlLog,
    CrawlLogEntry,
    format_entry,
    format_time,
    parse_entry,
    parse_time,
)

FULL = CrawlLogEntry(
    time=1_700_000_000.123,
    url="http://example.com/a",
    status=200,
    outcome="ok",
    bytes=1234,
    content_type="text/html",
    digest="sha1:AAAA",
    duration=0.25,
    depth=2,
    outlinks=17,
    truncated=None,
    error=None,
    attempt=2,
    revisit=True,
    warc_file="headway-20231114221320-00000.warc.gz",
    warc_offset=335,
    via="http://example.com/",
    note="redirect -> http://example.com/b",
)
FAILED = CrawlLogEntry(
    time=1_700_000_001.0,
    url="http://example.com/\u00e9",
    status=None,
    outcome="connection_error",
    bytes=0,
    content_type=None,
    digest=None,
    duration=3.5,
    depth=0,
    outlinks=0,
    truncated="time",
    error="reset by peer \u2013 twice",
)


def test_entries_round_trip_through_the_file(tmp_path: Path) -> None:
    path = tmp_path / "crawl.log.jsonl"
    log = CrawlLog(path)
    log.write(FULL)
    log.write(FAILED)
    log.close()
    log2 = CrawlLog(path)  # append mode: reopening keeps what is there
    log2.write(FULL)
    log2.close()
    lines = path.read_text().splitlines()
    assert [parse_entry(line) for line in lines] == [FULL, FAILED, FULL]
    # the output fields of docs/outputs.md are left out while they are None
    names = [f.name for f in dataclasses.fields(CrawlLogEntry) if f.name not in OPTIONAL]
    for line in lines:
        assert list(json.loads(line)) == names
    first = json.loads(lines[0])
    assert first["time"] == "2023-11-14T22:13:20.123Z"
    assert first["status"] == 200 and first["revisit"] is True and first["warc_offset"] == 335
    second = json.loads(lines[1])
    assert second["status"] is None and second["truncated"] == "time"


@pytest.mark.parametrize(
    ("epoch", "text"),
    [
        (0.0, "1970-01-01T00:00:00.000Z"),
        (1_700_000_000.0, "2023-11-14T22:13:20.000Z"),
        (1_700_000_000.9996, "2023-11-14T22:13:21.000Z"),
        (1_700_000_000.0004, "2023-11-14T22:13:20.000Z"),
        (1_700_000_000.5, "2023-11-14T22:13:20.500Z"),
    ],
)
def test_format_time(epoch: float, text: str) -> None:
    assert format_time(epoch) == text


@given(st.integers(min_value=0, max_value=4_000_000_000_000))
def test_time_round_trips_at_millisecond_precision(millis: int) -> None:
    text = format_time(millis / 1000)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", text)
    assert round(parse_time(text) * 1000) == millis


def test_bad_lines_are_value_errors() -> None:
    with pytest.raises(ValueError):
        parse_entry('{"time": "2023-11-14T22:13:20.000Z"}')
    with pytest.raises(ValueError):
        parse_entry(format_entry(FULL)[:-10])


def test_text_that_is_not_valid_unicode_still_makes_a_line() -> None:
    from headway.store.crawllog import CrawlLogEntry, format_entry, parse_entry

    entry = CrawlLogEntry(
        time=1.0,
        url="http://a.test/\udcff",
        status=None,
        outcome="x",
        bytes=0,
        content_type=None,
        digest=None,
        duration=0.0,
        depth=0,
        outlinks=0,
        truncated=None,
        error="caf\u00e9 \udc80",
    )
    line = format_entry(entry)
    assert line.endswith("\n") and line.count("\n") == 1
    assert parse_entry(line) == entry


def test_output_fields_are_written_when_known(tmp_path: Path) -> None:
    path = tmp_path / "crawl.log.jsonl"
    log = CrawlLog(path)
    entry = dataclasses.replace(FULL, languages=("deu", "nld"), text="written")
    log.write(entry)
    log.close()
    line = path.read_text()
    keys = list(json.loads(line))
    # the signals are there, null included, where the text verdict is
    assert keys[-5:] == ["languages", "text", "ai_train", "ai_input", "search"]
    assert json.loads(line)["languages"] == ["deu", "nld"]
    assert json.loads(line)["ai_train"] is None
    assert parse_entry(line) == entry
    reserved = dataclasses.replace(FULL, ai_train="no")  # a signal without a verdict
    assert list(json.loads(format_entry(reserved)))[-1] == "ai_train"
