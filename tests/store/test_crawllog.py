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
    sent=1_700_000_000.123457,
    delay=1.5,
    crawl_delay=1.5,
    retry_after=None,
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


def test_a_line_of_an_earlier_version_reads_with_the_new_keys_unset() -> None:
    old = json.loads(format_entry(FULL))
    for key in ("sent", "delay", "crawl_delay", "retry_after"):
        del old[key]
    entry = parse_entry(json.dumps(old))
    assert (entry.sent, entry.delay, entry.crawl_delay, entry.retry_after) == (None,) * 4
    assert entry.url == FULL.url and entry.status == 200


def test_send_time_keeps_its_microseconds() -> None:
    assert parse_entry(format_entry(FULL)).sent == 1_700_000_000.123457


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("bytes", "12"),  # found by the fuzzer: the report added it to an int
        ("url", 5),
        ("status", "200"),
        ("status", True),
        ("duration", None),
        ("revisit", 1),
        ("sent", "now"),
        ("time", 1700000000),
        ("note", ["a"]),
    ],
)
def test_a_value_of_the_wrong_type_is_a_value_error(key: str, value: object) -> None:
    line = json.loads(format_entry(FULL))
    line[key] = value
    with pytest.raises(ValueError, match=key):
        parse_entry(json.dumps(line))


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_are_value_errors(constant: str) -> None:
    """Found by the fuzzer: a ``sent`` of NaN (Python's JSON reads it) broke the ledger."""
    line = format_entry(FULL).replace('"delay":1.5', f'"delay":{constant}')
    assert constant in line
    with pytest.raises(ValueError, match=constant):
        parse_entry(line)


@pytest.mark.parametrize(
    ("key", "value"),
    [("sent", 1e300), ("time", "9999-12-31T23:59:59.999Z")],
)
def test_times_out_of_any_calendar_still_make_a_ledger(key: str, value: object) -> None:
    from headway.report.ledger_render import to_json, to_text
    from headway.report.politeness import LedgerBuilder

    line = json.loads(format_entry(FULL))
    line[key] = value
    builder = LedgerBuilder()
    builder.add(parse_entry(json.dumps(line)))
    ledger = builder.build("x")
    assert ledger.hosts[0].requests == 1
    assert to_text(ledger).startswith("Politeness ledger: x")
    json.dumps(to_json(ledger))


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
    keys = [k for k in json.loads(line) if k in OPTIONAL]
    # the signals are there, null included, where the text verdict is
    assert keys == ["languages", "text", "ai_train", "ai_input", "search"]
    assert json.loads(line)["languages"] == ["deu", "nld"]
    assert json.loads(line)["ai_train"] is None
    assert parse_entry(line) == entry
    reserved = dataclasses.replace(FULL, ai_train="no")  # a signal without a verdict
    assert [k for k in json.loads(format_entry(reserved)) if k in OPTIONAL] == ["ai_train"]
