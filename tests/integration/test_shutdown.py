"""Ctrl-C with fetches in flight: a fetch that finishes within the grace period is kept,
one that outlives it is cancelled and its lease released, so nothing stays leased."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import pytest

from headway.frontier.store import UrlState
from headway.testing.simweb import HostSpec, SimWebSpec
from tests.integration.crashcheck import frontier_urls
from tests.integration.helpers import ThreadedSimWeb, crawl_argv, read_crawl_log

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
