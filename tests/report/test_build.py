"""The report built from crawl log entries (pure) and rendered as text, CSV and JSON."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from headway.control.log import Control, ControlKind
from headway.frontier.store import FrontierCounts
from headway.report.build import NO_RESPONSE, CountRow, ReportBuilder
from headway.report.render import render
from headway.store.crawllog import CrawlLogEntry


def e(url: str, t: float, status: int | None = 200, **kw: Any) -> CrawlLogEntry:
    values: dict[str, Any] = {
        "time": t,
        "url": url,
        "status": status,
        "outcome": "ok" if status == 200 else kw.pop("outcome", "client_error"),
        "bytes": 100 if status is not None else 0,
        "content_type": "text/html; charset=utf-8" if status == 200 else None,
        "digest": None,
        "duration": 0.1,
        "depth": 0,
        "outlinks": 0,
        "truncated": None,
        "error": None,
    }
    values.update(kw)
    return CrawlLogEntry(**values)


A, B, C = "http://a.example/", "http://b.example/", "http://c.example/"
ENTRIES = [
    e("http://a.example/robots.txt", 1.0, note="robots.txt allow-all"),
    e(A, 2.0),
    e("http://a.example/1", 3.0, depth=1, via=A),
    e("http://a.example/2", 4.0, 404, depth=2, via="http://a.example/1"),
    e("http://a.example/3", 5.0, None, outcome="timeout", depth=1, via=A),
    e("http://a.example/3", 6.0, depth=1, via=A, attempt=2),  # its retry
    e("http://b.example/robots.txt", 1.5, 404, note="robots.txt allow-all"),
    e(B, 2.5, 503, outcome="unavailable"),
    e(B, 7.0),
    e("http://b.example/x", 8.0, None, outcome="disallowed", note="robots-disallowed", via=B),
    e("http://x.example/", 9.0, depth=1, via=A),  # another host reached from A
]
COUNTS = FrontierCounts(1, 0, 6, 1, 8, 1, {"host-budget": 2, "frontier-full": 0})
CONTROL = Control(1, ControlKind.PAUSE, None, {}, "cli a@h", 5.0)


def build() -> Any:
    b = ReportBuilder()
    for entry in reversed(ENTRIES):  # any order
        b.add(entry)
    return b.build(
        source="t",
        seeds=[A, B, C],
        frontier=COUNTS,
        controls=[CONTROL],
        extra={"URLs dropped by opt-out controls": 3},
    )


def test_seeds_robots_first_fetch_and_reach() -> None:
    r = build()
    got = [(s.seed, s.robots, s.first_status, s.first_outcome, s.pages) for s in r.seeds]
    assert got == [
        (A, "robots.txt allow-all", 200, "ok", 5),  # A, /1, /2, /3 (two lines: one URL), x
        (B, "robots.txt allow-all", 503, "unavailable", 2),  # B and the disallowed /x
        (C, "not fetched", None, "not fetched", 0),
    ]


def test_hosts_errors_by_kind_and_codes() -> None:
    r = build()
    rows = {h.host: (h.fetches, h.bytes, dict(h.statuses), dict(h.errors)) for h in r.hosts}
    assert rows == {
        "a.example": (4, 400, {200: 3, 404: 1}, {"client_error": 1, "timeout": 1}),
        "b.example": (2, 200, {200: 1, 503: 1}, {"robots-disallowed": 1, "unavailable": 1}),
        "x.example": (1, 100, {200: 1}, {}),
    }
    assert [h.host for h in r.hosts] == ["a.example", "b.example", "x.example"]  # busiest first


def test_mime_types_codes_and_totals() -> None:
    r = build()
    assert r.mime_types == (CountRow("text/html", 5, 500), CountRow("unknown", 2, 200))
    assert {c.key: c.count for c in r.status_codes} == {
        "200": 5,
        "404": 1,
        "503": 1,
        NO_RESPONSE: 2,
    }
    assert (r.lines, r.fetches, r.bytes, r.first_time, r.last_time) == (11, 7, 700, 1.0, 9.0)


def test_root_urls_are_the_depth_zero_urls_no_page_led_to() -> None:
    b = ReportBuilder()
    for entry in ENTRIES:
        b.add(entry)
    assert b.root_urls() == [A, B]


def test_the_three_formats_carry_the_same_figures() -> None:
    r = build()
    data = json.loads(render(r, "json"))
    assert data["totals"]["fetches"] == 7
    assert data["seeds"][0]["pages"] == 5
    assert data["hosts"][0]["statuses"] == {"200": 3, "404": 1}
    assert data["frontier"]["shed"] == {"host-budget": 2, "frontier-full": 0}
    assert data["controls"] == [CONTROL.to_json()]
    assert data["extra"] == {"URLs dropped by opt-out controls": 3}
    rows = list(csv.reader(io.StringIO(render(r, "csv"))))
    assert rows[0] == ["section", "key", "field", "value"]
    assert ["hosts", "a.example", "status 404", "1"] in rows
    assert ["seeds", A, "pages", "5"] in rows
    assert ["controls", "1", "kind", "pause"] in rows
    assert ["frontier", "", "shed host-budget", "2"] in rows
    text = render(r, "text")
    assert "Seeds (3)" in text and "Hosts (3)" in text and "Control log (1)" in text
    assert "#1 pause (every node) by cli a@h" in text
    assert "URLs dropped by opt-out controls: 3" in text
    short = render(r, "text", text_hosts=1)
    assert "Hosts (3, the 1 busiest shown)" in short and "x.example" not in short.split("MIME")[0]


def test_a_report_without_crawl_logs_says_unknown_not_zero() -> None:
    """``headway report --store ... --crawl-id ...`` without ``--logs``: what comes from
    the crawl logs is unknown; the frontier's figures are still given."""
    counts = FrontierCounts(3, 1, 40, 2, 46, 1, {})
    r = ReportBuilder().build(
        source="crawl news",
        seeds=["https://a.example/"],
        frontier=counts,
        controls=[],
        logs_read=False,
    )
    text = render(r, "text")
    assert "crawl log lines, fetches, bytes: unknown (no crawl log read)" in text
    assert "0 fetches" not in text and "not fetched" not in text
    seed_row = next(line for line in text.splitlines() if "https://a.example/" in line)
    assert seed_row.split() == ["https://a.example/", "unknown", "unknown", "unknown"]
    assert "Hosts (unknown)" in text
    assert text.count("unknown: no crawl log read (give the nodes' directories") == 3
    assert "queued 3, leased 1, done 40" in text
    data = json.loads(render(r, "json"))
    assert data["logs_read"] is False
    assert data["totals"]["fetches"] is None and data["totals"]["lines"] is None
    assert data["seeds"][0]["pages"] is None
    assert data["seeds"][0]["first_outcome"] == "unknown"
    # with logs read, the same seed with no line is "not fetched", 0 pages
    known = render(
        ReportBuilder().build(
            source="d", seeds=["https://a.example/"], frontier=counts, controls=[]
        ),
        "json",
    )
    assert json.loads(known)["seeds"][0]["pages"] == 0
    assert json.loads(known)["seeds"][0]["first_outcome"] == "not fetched"
