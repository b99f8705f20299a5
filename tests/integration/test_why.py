"""``headway why URL DIR`` on a small crawl of the simulated web: each verdict from the
crawl's own records, checked against what the server logged."""

from __future__ import annotations

import base64
import hashlib
import sqlite3
from pathlib import Path

import pytest

from headway.cli import main
from headway.cli.commands import asyncio_run_crawl
from headway.testing.simweb import HostSpec, SimWebSpec
from tests.integration.helpers import ThreadedSimWeb, crawl_settings

pytestmark = pytest.mark.slow

ROBOTS = "User-agent: *\nDisallow: /p/1\n"


def _why(capsys: pytest.CaptureFixture[str], url: str, crawl: Path) -> list[str]:
    capsys.readouterr()
    assert main(["why", url, str(crawl)]) == 0
    return capsys.readouterr().out.splitlines()


def _queued(crawl: Path) -> list[tuple[str, int, int]]:
    con = sqlite3.connect(crawl / "frontier.sqlite3")
    try:
        rows = con.execute("SELECT url, depth, priority FROM urls WHERE state = 0").fetchall()
    finally:
        con.close()
    return [(str(u), int(d), int(p)) for u, d, p in rows]


def test_why_says_what_the_crawl_did_with_a_url(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = SimWebSpec(hosts=1, host_spec=HostSpec(pages=12, links_per_page=4, robots=ROBOTS))
    crawl = tmp_path / "c"
    with ThreadedSimWeb(spec) as web:
        seed = web.seeds()[0]
        root = seed.rstrip("/")
        host = seed.split("/")[2]
        settings = crawl_settings(crawl, max_pages=2, exclude=[r"/p/7$"])
        asyncio_run_crawl(settings, [seed], None)
        queued = [q for q in _queued(crawl) if not q[0].endswith(("/p/7", "/p/1"))]
        assert queued
        url, depth, priority = queued[0]
        assert _why(capsys, url, crawl)[0] == (
            f"queued at depth {depth} (priority {priority}, 0 attempts before)"
        )
        asyncio_run_crawl(crawl_settings(crawl, exclude=[r"/p/7$"]), [seed], None)
        log = list(web.log)
    paths = [r.path for r in log]
    robots_fetches = [r for r in log if r.path == "/robots.txt"]
    assert robots_fetches and "/p/1" not in paths
    # fetched: the status and time the crawl log has, for a page the server served
    assert "/p/0" in paths
    first = _why(capsys, f"{root}/p/0", crawl)
    assert first[0].startswith("fetched 200 at ") and "(depth 1, ok)" in first[0]
    # disallowed: the robots.txt version that decided, by the digest of what was served
    digest = "sha1:" + base64.b32encode(hashlib.sha1(ROBOTS.encode()).digest()).decode()
    said = _why(capsys, f"{root}/p/1", crawl)[0]
    assert said.startswith(f"disallowed by robots.txt of host {host} (version fetched at ")
    assert f"digest {digest})" in said
    # out of scope, by the rule that decided
    assert _why(capsys, f"{root}/p/7", crawl)[0] == (
        "out of scope: rule --exclude '/p/7$' matches it"
    )
    assert "/p/7" not in paths
    assert _why(capsys, "http://elsewhere.example/a", crawl)[0] == (
        "out of scope: rule --scope seed-domains: elsewhere.example is not a seed's host "
        "and its registered domain elsewhere.example is not a seed's"
    )
    # never seen: in scope, never linked; the form given is canonicalized first
    lines = _why(capsys, f"{root.upper()}/never/linked#frag", crawl)
    assert lines[0].startswith("never seen: in scope by the crawl's rules")
    assert lines[-1] == f"(canonical form: {root}/never/linked)"
    # opted out by a control: named with the control
    capsys.readouterr()
    assert main(["opt-out", str(crawl), "elsewhere.example"]) == 0
    said = _why(capsys, "http://www.elsewhere.example/", crawl)[0]
    assert said.startswith("opted out: domain elsewhere.example (control #1 at ")
