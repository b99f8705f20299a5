"""The politeness ledger built from crawl log entries (pure), as text and JSON."""

from __future__ import annotations

import json
from typing import Any

import pytest

from headway.report.ledger_render import to_json, to_text
from headway.report.politeness import TOLERANCE, HostLedger, LedgerBuilder
from headway.store.crawllog import CrawlLogEntry

H = "http://a.example"


AFTER = -1.0  # sent 1 ms after ``t``


def e(path: str, t: float, sent: float | None = AFTER, **kw: Any) -> CrawlLogEntry:
    values: dict[str, Any] = {
        "time": t,
        "url": H + path,
        "status": 200,
        "outcome": "ok",
        "bytes": 10,
        "content_type": "text/html",
        "digest": None,
        "duration": 0.05,
        "depth": 1,
        "outlinks": 0,
        "truncated": None,
        "error": None,
        "sent": t + 0.001 if sent == AFTER else sent,
        "delay": 1.0,
    }
    values.update(kw)
    return CrawlLogEntry(**values)


def robots(t: float, digest: str) -> CrawlLogEntry:
    return e("/robots.txt", t, depth=0, digest=digest, note="robots.txt rules")


def skipped(path: str, t: float) -> CrawlLogEntry:
    return e(
        path, t, status=None, outcome="skipped", sent=None, delay=None, note="robots-disallowed"
    )


def host(*entries: CrawlLogEntry) -> HostLedger:
    b = LedgerBuilder()
    for x in entries:
        b.add(x)
    (only,) = b.build("test").hosts
    return only


def test_requests_and_the_smallest_gap_in_any_order_of_lines() -> None:
    lines = [robots(0.0, "sha1:R1"), e("/a", 1.0), e("/b", 2.5), e("/c", 3.7)]
    h = host(*reversed(lines))  # two nodes' logs read in any order
    assert h.requests == 4
    assert h.smallest_gap is not None
    assert h.smallest_gap.seconds == pytest.approx(1.0)
    assert (h.smallest_gap.before, h.smallest_gap.after) == (H + "/robots.txt", H + "/a")
    assert h.smallest_gap.delay == 1.0
    assert (h.delay_min, h.delay_max, h.short_gaps) == (1.0, 1.0, 0)


def test_a_send_closer_than_the_delay_then_is_a_short_gap() -> None:
    h = host(e("/a", 0.0), e("/b", 1.0 - 2 * TOLERANCE), e("/c", 2.0, delay=2.0), e("/d", 3.0))
    # /b comes 0.996 s after /a under a 1 s delay; /c 1.004 s after /b under 2 s
    assert h.short_gaps == 2
    assert h.delay_max == 2.0


def test_lines_without_a_send_time_are_not_requests_unless_answered() -> None:
    b = LedgerBuilder()
    b.add(_without_sent(e("/a", 5.0)))  # an earlier version's line: answered, no send time
    b.add(e("/b", 6.0, status=None, outcome="dns_error", sent=None))  # never left
    b.add(skipped("/private/1", 7.0))
    ledger = b.build("test")
    (h,) = ledger.hosts
    assert h.requests == 1 and ledger.estimated == 1
    assert h.first_sent == 5.0


def _asdict(x: CrawlLogEntry) -> dict[str, Any]:
    return {f: getattr(x, f) for f in x.__dataclass_fields__}


def _without_sent(x: CrawlLogEntry) -> CrawlLogEntry:
    d = _asdict(x)
    d["sent"] = None
    d["delay"] = None
    return CrawlLogEntry(**d)


def test_skipped_urls_name_the_robots_version_fetched_last_before_them() -> None:
    h = host(
        skipped("/x", 0.5),  # before any robots.txt in these logs
        robots(1.0, "sha1:R1"),
        skipped("/private/1", 2.0),
        robots(10.0, "sha1:R2"),
        skipped("/private/2", 10.0),
        skipped("/private/3", 11.0),
        robots(12.0, "sha1:R1"),
    )
    assert [(s.url.removeprefix(H), s.robots_digest) for s in h.skipped] == [
        ("/x", None),
        ("/private/1", "sha1:R1"),
        ("/private/2", "sha1:R2"),
        ("/private/3", "sha1:R2"),
    ]
    assert len(h.robots) == 3 and h.robots_versions == 2


def test_crawl_delay_waits_kept_and_broken() -> None:
    h = host(
        robots(-2.0, "sha1:R"),
        e("/a", 1.0, sent=1.0, crawl_delay=2.0, delay=2.0),
        e("/b", 3.0, sent=3.0, crawl_delay=2.0, delay=2.0),
        e("/c", 4.5, sent=4.5, crawl_delay=2.0, delay=2.0),  # 1.5 s: not kept
    )
    assert h.crawl_delay == 2.0
    assert (h.crawl_delay_waits, h.crawl_delay_kept) == (3, 2)


def test_retry_after_waits_from_the_end_of_the_answer() -> None:
    h = host(
        e("/a", 0.0, sent=0.0, status=429, duration=0.5, retry_after=3.0),
        e("/a", 3.5, sent=3.5),  # 3.0 s after the answer ended at 0.5
        e("/b", 4.0, sent=4.0, status=503, duration=0.1, retry_after=10.0),
        e("/b", 6.0, sent=6.0),  # 1.9 s: not kept
        e("/c", 7.0, sent=7.0, status=503, duration=0.1, retry_after=5.0),  # none follows
    )
    got = [(w.asked, w.waited, w.kept) for w in h.retry_after]
    assert got[0][0] == 3.0 and got[0][1] == pytest.approx(3.0) and got[0][2] is True
    assert got[1][0] == 10.0 and got[1][1] == pytest.approx(1.9) and got[1][2] is False
    assert got[2] == (5.0, None, None)


def test_hosts_are_apart_and_a_port_makes_another_host() -> None:
    b = LedgerBuilder()
    b.add(e("/a", 0.0))
    b.add(CrawlLogEntry(**{**_asdict(e("/a", 0.1)), "url": "http://a.example:8080/a"}))
    b.add(CrawlLogEntry(**{**_asdict(e("/a", 0.2)), "url": "http://B.example/a"}))
    assert [h.host for h in b.build("t").hosts] == ["a.example", "a.example:8080", "b.example"]


def test_text_and_json() -> None:
    b = LedgerBuilder()
    for x in (
        robots(0.0, "sha1:R1"),
        e("/a", 1.0, status=429, retry_after=2.0),
        e("/b", 3.5),
        *(skipped(f"/private/{i}", 4.0 + i) for i in range(25)),
    ):
        b.add(x)
    ledger = b.build("crawls/x", ("a note",))
    text = to_text(ledger)
    assert text.startswith("Politeness ledger: crawls/x\n")
    header, row = text.splitlines()[2:4]
    assert header.split()[:2] == ["host", "requests"]
    assert row.split()[:2] == ["a.example", "3"]
    assert "1 fetches, 1 versions" in row
    assert "robots.txt 1970-01-01T00:00:00.000Z 200 sha1:R1 (robots.txt rules)" in text
    assert "... 5 more disallowed URLs" in text
    assert "Retry-After 2 s at" in text and "waited" in text
    assert text.rstrip().endswith("note: a note")
    data = json.loads(json.dumps(to_json(ledger)))
    (h,) = data["hosts"]
    assert h["requests"] == 3 and len(h["skipped"]) == 25
    assert h["skipped"][0]["robots_digest"] == "sha1:R1"
    assert h["retry_after"][0]["kept"] is True
    assert h["robots"][0]["time_iso"] == "1970-01-01T00:00:00.000Z"
    assert data["notes"] == ["a note"] and data["tolerance"] == TOLERANCE
