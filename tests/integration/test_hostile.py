"""Crawls of the hostile web, asserted from the server's own request log and the crawl
directory: politeness of robots.txt redirects, no hidden requests, no credentials at the
server or in any output, blocked hosts failed at once, every WARC readable by warcio."""

from __future__ import annotations

import itertools
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from warcio.archiveiterator import ArchiveIterator

from headway.runtime.node import Node
from tests.integration.helpers import crawl_settings, read_crawl_log, short_gap
from tests.support.hostile import SECRET, HostileRequest, HostileSpec, HostileWeb

pytestmark = pytest.mark.slow

DELAY = 0.15
#: outcomes recorded without any request reaching a server
NO_REQUEST = frozenset({"skipped", "blocked_address", "dns_error"})


def gap_violations(log: list[HostileRequest], delay: float) -> list[str]:
    by_host: dict[str, list[HostileRequest]] = defaultdict(list)
    for r in log:
        by_host[r.host].append(r)
    problems = []
    for host, reqs in by_host.items():
        reqs.sort(key=lambda r: r.arrival)
        for a, b in itertools.pairwise(reqs):
            if (gap := short_gap(a, b, delay)) is not None:
                problems.append(f"{host}: {a.path} -> {b.path} {gap:.3f}s")
    return problems


def warc_files(out: Path) -> list[Path]:
    return sorted((out / "warc").glob("*.warc.gz"))


def warc_requests(out: Path) -> list[str]:
    uris = []
    for path in warc_files(out):
        with path.open("rb") as fh:
            for rec in ArchiveIterator(fh):
                if rec.rec_type == "request":
                    uris.append(rec.rec_headers.get_header("WARC-Target-URI"))
    return uris


def outputs_without_payloads(out: Path) -> str:
    """Every byte headway wrote except the archived responses (the server's own words,
    a Location header included, kept verbatim): crawl log, index, metrics, WARC record
    headers and request records."""
    parts = [
        p.read_text(errors="replace")
        for p in out.iterdir()
        if p.is_file() and p.suffix in (".jsonl", ".cdxj", ".log")
    ]
    for path in warc_files(out):
        with path.open("rb") as fh:
            for rec in ArchiveIterator(fh):
                parts.append(str(rec.rec_headers.headers))
                if rec.rec_type == "request":
                    assert rec.http_headers is not None
                    parts.append(str(rec.http_headers.headers))
                    parts.append(rec.content_stream().read().decode("latin-1"))
    return "\n".join(parts)


async def test_hostile_hosts(tmp_path: Path) -> None:
    out = tmp_path / "c"
    web = HostileWeb(HostileSpec(control_hosts=2, control_pages=6))
    await web.start()
    try:
        settings = crawl_settings(
            out,
            delay=DELAY,
            resolve=web.resolve_rules(),
            retry_base=0.2,
            retry_budget=2,
            max_duration=60,
            robots_retry_base=600,
        )
        summary = await Node(settings, web.seeds()).run()
    finally:
        await web.stop()
    assert summary.stopped_by == "finished"
    log = read_crawl_log(out)

    # control hosts finished: every page fetched
    for host in web.control_hosts():
        urls = {e["url"] for e in log if e["status"] == 200 and f"//{host}." in e["url"]}
        assert len(urls) == 6, (host, sorted(urls))

    # politeness from the server's clock, robots.txt redirects included
    problems = gap_violations(web.log, DELAY)
    assert not problems, problems[:5]
    # a robots.txt redirecting to itself: the cap of 5 redirects, six requests in all
    loop = [r for r in web.log if r.host.startswith("robotsloop") and r.path == "/robots.txt"]
    assert len(loop) == 6
    # a chain of 10 redirects is cut after 5 hops too
    chain = [r for r in web.log if r.host.startswith("robotschain") and r.path != "/"]
    assert [r.path for r in chain] == ["/robots.txt", "/r/1", "/r/2", "/r/3", "/r/4", "/r/5"]

    # no hidden requests: what the server saw is what the crawl recorded (crawl log and
    # WARC request records), request for request
    at_server = Counter(f"http://{r.host}:{web.port}{r.path}" for r in web.log)
    recorded = Counter(e["url"] for e in log if e["outcome"] not in NO_REQUEST)
    assert at_server == recorded
    answered = Counter(e["url"] for e in log if e["status"] is not None)
    assert Counter(warc_requests(out)) == answered  # WARC records where there was a response
    reset = [r for r in web.log if r.host.startswith("reset")]
    assert any(e["outcome"] == "connection_error" for e in log if "//reset." in e["url"])
    assert len(reset) == sum(1 for e in log if "//reset." in e["url"])

    # credentials: never at the server, never in any output, the pages still fetched
    assert web.credential_leaks == []
    assert SECRET not in outputs_without_payloads(out)
    creds = {e["url"] for e in log if "//creds." in e["url"] and e["status"] == 200}
    assert {u.rsplit("/", 1)[1] for u in creds} >= {"private", "other", "after"}
    assert summary.requests == len(web.log)

    # blocked hosts: one robots.txt decision each, recorded once, their URLs failed at once
    for name in ("blocked4", "blocked6"):
        lines = [e for e in log if f"//{name}." in e["url"]]
        robots = [e for e in lines if e["url"].endswith("/robots.txt")]
        assert len(robots) == 1 and robots[0]["outcome"] == "blocked_address"
        assert robots[0]["note"] == "robots.txt blocked"
        seeds = [e for e in lines if not e["url"].endswith("/robots.txt")]
        assert [(e["outcome"], e["note"]) for e in seeds] == [("skipped", "blocked-address")]
        assert not [r for r in web.log if r.host.startswith(name)]

    # standard tools read every WARC file
    for path in warc_files(out):
        check = subprocess.run(
            [sys.executable, "-m", "warcio.cli", "check", str(path)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert check.returncode == 0, check.stdout + check.stderr
