"""``kill -9`` in the middle of a crawl, then the same command again: nothing lost, at most
the in-flight URLs fetched twice, WARC files readable."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from warcio.archiveiterator import ArchiveIterator

from headway.testing.simweb import HostSpec, SimWebSpec
from tests.integration.helpers import (
    TOKEN,
    ThreadedSimWeb,
    crawl_argv,
    fetched_urls,
    read_crawl_log,
)

pytestmark = pytest.mark.slow

CONCURRENCY = 8


def _spec() -> SimWebSpec:
    return SimWebSpec(
        hosts=6,
        host_spec=HostSpec(pages=40, links_per_page=5, features=frozenset({"duplicates"})),
        cross_links=0.2,
        seed=3,
    )


def _leased_urls(out: Path) -> set[str]:
    """URLs in flight (leased) in the frontier as the killed process left it."""
    con = sqlite3.connect(f"file:{out / 'frontier.sqlite3'}?mode=ro", uri=True)
    try:
        return {row[0] for row in con.execute("SELECT url FROM urls WHERE state = 1")}
    finally:
        con.close()


def _kill_after(argv: list[str], web_log: list[object], pages: int, timeout: float = 60) -> None:
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    start = len(web_log)
    deadline = time.monotonic() + timeout
    while len(web_log) - start < pages:
        if proc.poll() is not None:
            err = proc.stderr.read().decode() if proc.stderr else ""
            pytest.fail(f"crawl ended before it could be killed (rc {proc.returncode}): {err}")
        if time.monotonic() > deadline:
            proc.kill()
            pytest.fail("crawl made no progress")
        time.sleep(0.005)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)
    # stderr ends once the node's helper processes (forkserver, parsers, resource tracker)
    # are gone too; none of them prints over the terminal after the kill
    _, err = proc.communicate(timeout=20)
    assert b"leaked" not in err and b"Traceback" not in err, err.decode()


def test_kill_minus_9_then_restart_completes_the_same_crawl(tmp_path: Path) -> None:
    seeds_file = tmp_path / "seeds.txt"
    with ThreadedSimWeb(_spec()) as web:
        seeds_file.write_text("\n".join(web.seeds()) + "\n")
        expected = web.expected_pages(TOKEN)
        out = tmp_path / "killed"
        argv = crawl_argv(seeds_file, out, "--delay", "0.01", "--concurrency", str(CONCURRENCY))
        in_flight: list[set[str]] = []
        for _ in range(2):
            _kill_after(argv, web.log, 60)
            in_flight.append(_leased_urls(out))
        done = subprocess.run(argv, capture_output=True, timeout=120)
        assert done.returncode == 0, done.stderr.decode()
        killed_fetches = fetched_urls(web, web.log)

        # the same crawl, uninterrupted
        web.log.clear()
        clean = subprocess.run(
            crawl_argv(
                seeds_file, tmp_path / "clean", "--delay", "0.01", "--concurrency", str(CONCURRENCY)
            ),
            capture_output=True,
            timeout=120,
        )
        assert clean.returncode == 0, clean.stderr.decode()
        clean_fetches = fetched_urls(web, web.log)

    assert set(killed_fetches) == set(clean_fetches)
    assert set(killed_fetches) >= expected
    # only URLs in flight (leased, not yet settled) at a kill were fetched again, and each
    # at most once more per kill it was in flight for
    counts = Counter(killed_fetches)
    leased_total = Counter(u for leased in in_flight for u in leased)
    assert all(in_flight), "each kill happened mid-crawl, with URLs in flight"
    for url, n in counts.items():
        assert n <= 1 + leased_total[url], (url, n, leased_total[url])

    # the crawl log of the killed crawl has every expected page, and no partial line
    logged = {e["url"] for e in read_crawl_log(out) if e["status"] == 200}
    assert logged >= expected
    # every WARC file reads cleanly to its end with valid digests
    for path in sorted((out / "warc").glob("*.warc.gz")):
        with path.open("rb") as fh:
            for rec in ArchiveIterator(fh, check_digests="raise"):
                rec.content_stream().read()


def test_ctrl_c_stops_cleanly_and_the_same_command_continues(tmp_path: Path) -> None:
    seeds_file = tmp_path / "seeds.txt"
    spec = SimWebSpec(hosts=3, host_spec=HostSpec(pages=30, links_per_page=4), seed=5)
    with ThreadedSimWeb(spec) as web:
        seeds_file.write_text("\n".join(web.seeds()) + "\n")
        out = tmp_path / "c"
        argv = crawl_argv(seeds_file, out, "--delay", "0.05")
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while len(web.log) < 15 and time.monotonic() < deadline:
            time.sleep(0.01)
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=60)
        assert proc.returncode == 130, stderr.decode()
        assert b"interrupted" in stdout  # the summary says why it stopped
        assert b"Traceback" not in stderr
        # a clean stop leaves nothing leased and nothing for recovery to cut
        assert _leased_urls(out) == set()
        status = subprocess.run(
            [sys.executable, "-m", "headway.cli", "status", str(out), "--json"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert status.returncode == 0, status.stderr
        state = json.loads(status.stdout)
        assert state["frontier"]["queued"] > 0 and state["frontier"]["done"] > 0
        first_run = {e["url"]: e for e in read_crawl_log(out)}
        done = subprocess.run(argv, capture_output=True, timeout=120)
        assert done.returncode == 0, done.stderr.decode()
        fetched = fetched_urls(web, web.log)
        assert set(fetched) >= web.expected_pages(TOKEN)
        # pages fetched before Ctrl-C (parsed within the stop's grace) are not fetched again
        twice = [u for u, n in Counter(fetched).items() if n > 1]
        assert not twice, [(u, first_run.get(u)) for u in twice]
