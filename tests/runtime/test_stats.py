"""``NodeStats`` JSON: written once where statistics leave the process, read back by
``headway status`` whichever version wrote it, never with a traceback."""

from __future__ import annotations

import fcntl
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from headway.runtime.crawldir import MARKER
from headway.runtime.stats import NodeStats, RecrawlStats, from_json
from headway.runtime.status import _running, decode_record, read_status, record_note
from tests.test_docs import _sample_stats


def test_json_round_trip_gives_the_same_value() -> None:
    stats = _sample_stats()
    text = json.dumps(stats.to_json())
    decoded = from_json(json.loads(text))
    assert decoded.complete, decoded.missing
    assert decoded.stats == stats
    assert decoded.stats.fetch.errors == 5
    assert decoded.stats.fetch.retry_ratio == pytest.approx(4 / 130)


def test_unknown_fields_from_a_newer_version_are_ignored() -> None:
    obj = _sample_stats().to_json()
    obj["future"] = {"anything": [1, 2]}
    obj["stages"][0]["future"] = 3
    decoded = from_json(obj)
    assert decoded.complete and decoded.stats == _sample_stats()


def test_record_of_an_older_version_reads_with_its_missing_fields_named() -> None:
    # what nodes published before the statistics record existed
    decoded = from_json({"pages": 3, "pages_per_second": 1.5, "errors": 0})
    assert decoded.stats.fetch.fetches == 0
    assert decoded.stats.fetch.pages_per_second == 1.5
    assert decoded.stats.frontier is None
    assert {"fetches", "requests", "stages", "hosts.known", "leases.held"} <= set(decoded.missing)
    assert "pages_per_second" not in decoded.missing
    assert record_note(decoded).startswith("written by another version: ")


def test_a_first_record_without_frontier_counts_is_complete() -> None:
    obj = _sample_stats().to_json()
    obj["frontier"] = {}
    obj["shed"] = {}
    decoded = from_json(obj)
    assert decoded.complete and decoded.stats.frontier is None


@pytest.mark.parametrize(
    "obj",
    [
        None,
        [],
        "stats",
        3,
        {"fetches": "many", "stages": [1, {"name": 5}], "frontier": [], "hosts": 7},
        {"fetches": True, "outcomes": {"ok": "x", "timeout": 2}, "throttled_hosts": {}},
        {"pages_per_second": float("nan"), "leases": {"held": -1.5}},
    ],
)
def test_bad_records_read_as_empty_fields_never_raise(obj: Any) -> None:
    decoded = from_json(obj)
    assert isinstance(decoded.stats, NodeStats)
    assert decoded.missing
    assert decoded.stats.fetch.fetches == 0
    assert decoded.stats.fetch.pages_per_second == 0.0


def test_mistyped_fields_are_named_with_their_path() -> None:
    decoded = from_json(
        {"fetches": "many", "stages": [1, {"name": 5}], "outcomes": {"ok": "x", "timeout": 2}}
    )
    assert {"fetches", "stages[0].", "stages[1].name"} <= set(decoded.missing)
    assert dict(decoded.stats.fetch.outcomes) == {"timeout": 2}
    assert decoded.stats.stages[1].name == ""


def test_status_reads_text_that_is_not_json_as_no_record() -> None:
    for text in (None, "", "{not json", "\x00\xff"):
        decoded = decode_record(text)
        assert decoded.missing == ("(top level)",)
        assert record_note(decoded) == "no statistics record"


def test_status_of_a_recrawl_shows_its_revisit_counts(tmp_path: Path) -> None:
    (tmp_path / MARKER).write_text(json.dumps({"format": 2, "node_id": "n1"}))
    recrawl = RecrawlStats(revisits=7, changed=2, unchanged=5, not_modified=4, scheduled=9)
    lines = [NodeStats(time=1.0), NodeStats(time=2.0, recrawl=recrawl)]
    metrics = tmp_path / "metrics.jsonl"
    metrics.write_text("".join(json.dumps(s.to_json()) + "\n" for s in lines))
    last = read_status(tmp_path)["last_metrics"]
    assert isinstance(last, dict)
    assert last["recrawl"] == {"revisits": 7, "changed": 2, "unchanged": 5, "not_modified": 4}
    metrics.write_text(json.dumps(NodeStats(time=3.0).to_json()) + "\n")
    last = read_status(tmp_path)["last_metrics"]
    assert isinstance(last, dict) and "recrawl" not in last, "a run without recrawl"


def test_status_says_whether_a_node_holds_the_directory(tmp_path: Path) -> None:
    (tmp_path / MARKER).write_text(json.dumps({"format": 2, "node_id": "n1"}))
    assert read_status(tmp_path)["running"] == "no"  # no lock file yet
    with open(tmp_path / "lock", "a+") as held:
        assert read_status(tmp_path)["running"] == "no"  # a lock file nobody holds
        fcntl.flock(held.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert read_status(tmp_path)["running"] == f"yes (pid {os.getpid()})"
        fcntl.flock(held.fileno(), fcntl.LOCK_UN)
    assert read_status(tmp_path)["running"] == "no"
    assert _running(tmp_path / "lock", tmp_path / "no-such-table") == "unknown"


def test_status_shows_the_age_of_the_last_metrics_record(tmp_path: Path) -> None:
    (tmp_path / MARKER).write_text(json.dumps({"format": 2, "node_id": "n1"}))
    written = time.time() - 30.0
    (tmp_path / "metrics.jsonl").write_text(json.dumps(NodeStats(time=written).to_json()) + "\n")
    last = read_status(tmp_path)["last_metrics"]
    assert isinstance(last, dict)
    assert isinstance(last["age_seconds"], float) and 29.0 <= last["age_seconds"] <= 60.0


def test_pages_per_second_is_the_rate_over_a_window_not_the_last_burst() -> None:
    """Ten hosts at a 3 s gap: ten pages arrive together every 3 s (3.3 pages/s). Read
    four times a second, the rate stays near 3.3 instead of swinging between 0 and the
    burst."""
    from headway.runtime.metrics import RATE_WINDOW, Counters

    counters = Counters()
    rates = []
    for step in range(4 * 60):  # a minute of readings every 0.25 s
        now = step * 0.25
        if step % 12 == 0:  # every 3 s a burst of ten pages
            counters.fetches += 10
            counters.bytes += 10_000
        st = counters.statistics(in_flight=0, mono=now)
        if now >= RATE_WINDOW:
            rates.append((st.pages_per_second, st.bytes_per_second))
    assert rates
    assert all(2.9 <= pages <= 3.8 for pages, _ in rates), (min(rates), max(rates))
    assert all(2900 <= b <= 3800 for _, b in rates)


def test_rate_follows_a_stop_within_the_window() -> None:
    from headway.runtime.metrics import RATE_WINDOW, Counters

    counters = Counters()
    for step in range(40):  # 20 s at 2 pages/s
        counters.fetches += 1
        counters.statistics(in_flight=0, mono=step * 0.5)
    assert counters.statistics(in_flight=0, mono=20.0).pages_per_second > 1.5
    # no page for a whole window: the rate is 0, and few readings are kept
    assert counters.statistics(in_flight=0, mono=20.0 + RATE_WINDOW + 1).pages_per_second == 0
    assert len(counters._marks) <= RATE_WINDOW / 0.5 + 2


def test_the_control_section_round_trips_and_a_bad_override_is_left_out() -> None:
    from dataclasses import replace

    from headway.control.applier import ControlStats
    from headway.policy.overrides import HostOverride

    control = ControlStats(
        seq=7,
        paused=True,
        seeds_added=2,
        optout_domains=1,
        optout_dropped=40,
        overrides={
            "a.example": HostOverride(delay=2.0),
            "b.example:81": HostOverride(exclude=True),
        },
    )
    stats = replace(_sample_stats(), control=control)
    obj = json.loads(json.dumps(stats.to_json()))
    decoded = from_json(obj)
    assert decoded.complete and decoded.stats == stats
    obj["control"]["overrides"]["bad.example"] = {"delay": -5}
    obj["control"]["overrides"]["worse.example"] = "fast"
    assert dict(from_json(obj).stats.control.overrides) == dict(control.overrides)
