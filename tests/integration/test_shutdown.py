"""Ctrl-C with fetches in flight: a fetch that finishes within the grace period is kept,
one that outlives it is cancelled and its lease released, so nothing stays leased; pages
waiting for a parser are parsed within the stop's grace."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import time
from pathlib import Path

import pytest

from headway.frontier.store import UrlState
from headway.runtime.node import Node
from headway.runtime.parsepool import PARSE_SLEEP_ENV
from headway.runtime.summary import StopReason
from headway.testing.simweb import HostSpec, SimWeb, SimWebSpec
from tests.integration.crashcheck import frontier_urls
from tests.integration.helpers import (
    ThreadedSimWeb,
    crawl_argv,
    crawl_settings,
    page_requests,
    read_crawl_log,
)

pytestmark = pytest.mark.slow

SLOW = 2.0  # seconds the slow host takes to answer: inside the 5 s grace


def test_ctrl_c_keeps_fetches_that_land_in_the_grace_and_releases_the_rest(
    tmp_path: Path,
) -> None:
    spec = SimWebSpec(hosts=2, host_spec=HostSpec(pages=3, links_per_page=2), cross_links=0.0)
    with ThreadedSimWeb(spec) as web:
        slow, hung = web.hosts
        web.set_delay(slow, SLOW)  # robots.txt and pages alike
        web.set_timeout(hung, True)  # its pages never answer; its robots.txt does
        seeds = tmp_path / "seeds.txt"
        seeds.write_text("\n".join(web.seeds()) + "\n")
        out = tmp_path / "c"
        proc = subprocess.Popen(
            crawl_argv(seeds, out, "--delay", "0"),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        try:
            deadline = time.monotonic() + 60
            # the slow host's robots.txt answered: its home page is now being fetched;
            # the hung host's home page is hanging
            while not (
                any(r.host == slow and r.path == "/robots.txt" for r in web.log)
                and any(r.host == hung and r.status == 0 for r in web.log)
            ):
                assert proc.poll() is None, "the crawl ended early"
                assert time.monotonic() < deadline, "the crawl made no progress"
                time.sleep(0.02)
            time.sleep(0.3)
            proc.send_signal(signal.SIGINT)
            _, stderr = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)
        assert proc.returncode == 130, stderr.decode()
        slow_home, hung_home = web.url(slow, "/"), web.url(hung, "/")

    # the slow fetch, in flight at Ctrl-C, landed within the grace: stored and settled
    logged = {e["url"]: e for e in read_crawl_log(out)}
    assert logged.get(slow_home, {}).get("status") == 200, "the fetch in the grace was lost"
    assert slow_home in frontier_urls(out, UrlState.DONE)
    # the hung fetch outlived the grace: cancelled, its lease released, queued again
    assert frontier_urls(out, UrlState.LEASED) == set()
    assert hung_home in frontier_urls(out, UrlState.QUEUED)


async def test_a_stop_lets_pages_waiting_for_a_parser_be_parsed_within_its_grace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pages fetched faster than one slow parser can take them wait in the parse queue
    when the crawl is stopped from outside: they are parsed, stored and settled within
    the stop's grace, not sent back to be fetched again."""
    spec = SimWebSpec(hosts=3, host_spec=HostSpec(pages=10, links_per_page=3), seed=7)
    out = tmp_path / "c"
    monkeypatch.setenv(PARSE_SLEEP_ENV, "0.2")
    settings = crawl_settings(out, delay=0.0, max_duration=60)
    async with SimWeb(spec) as web:
        node = Node(settings, web.seeds())
        run = asyncio.create_task(node.run())
        waiting = 0
        deadline = time.monotonic() + 30
        while waiting < 3:  # pages waiting for the parser
            assert not run.done() and time.monotonic() < deadline, "no parse backlog"
            await asyncio.sleep(0.01)
            parts = getattr(node, "parts", None)  # built once the node runs
            waiting = parts.parse_stage.statistics().depth if parts is not None else 0
        node.request_stop(StopReason.INTERRUPTED)
        summary = await run
        fetched = {web.url(r.host, r.path) for r in page_requests(web.log)}
    assert summary.stopped_by == "interrupted"
    log = read_crawl_log(out)
    assert not [e["url"] for e in log if e["note"] == "requeued: not parsed"]
    # every page the server answered was parsed and settled: none is queued again
    pages = {e["url"] for e in log if e["status"] == 200 and not e["url"].endswith(".txt")}
    assert pages == fetched and all(
        e["outlinks"] for e in log if e["url"] in pages and e["status"] == 200
    )
    assert not fetched & frontier_urls(out, UrlState.QUEUED)
