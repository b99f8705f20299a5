"""``kill -9`` during a recrawl loses no due time: after the kill every fetched page is
either waiting in the frontier with its due time and validators, or was in flight; the
same command again revisits each page with its stored validators, never before its due
time. Asserted from the frontier file and the simulated web's own log."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from headway.crashpoints import ENV, CrashPoint
from headway.frontier.store import UrlState
from headway.policy.revisit import decode
from headway.testing.freshness import changes
from headway.testing.simweb import HostSpec, LoggedRequest, SimWebSpec
from tests.integration.helpers import ThreadedSimWeb, crawl_argv, frontier_rows, page_requests

pytestmark = pytest.mark.slow

KILLED = -9
SPEC = SimWebSpec(
    hosts=2,
    host_spec=HostSpec(
        pages=5, links_per_page=2, validators=True, change_every=2, change_period=0.5
    ),
    cross_links=0.0,
    seed=5,
)


def _argv(seeds: Path, out: Path, seconds: float) -> list[str]:
    return crawl_argv(
        seeds,
        out,
        "--delay",
        "0.02",
        "--recrawl",
        "--revisit-min",
        "0.5",
        "--revisit-max",
        "1.5",
        "--max-duration",
        str(seconds),
    )


def _run(argv: list[str], crash_at: str | None) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if k != ENV}
    if crash_at is not None:
        env[ENV] = crash_at
    return subprocess.run(argv, env=env, capture_output=True, timeout=60)


@pytest.mark.parametrize(
    "crash_at", [f"{CrashPoint.SETTLED}:40", f"{CrashPoint.FRONTIER_UNCOMMITTED}:90"], ids=str
)
def test_kill_during_recrawl_loses_no_due_time(tmp_path: Path, crash_at: str) -> None:
    seeds = tmp_path / "seeds.txt"
    out = tmp_path / "crawl"
    with ThreadedSimWeb(SPEC) as web:
        seeds.write_text("\n".join(web.seeds()) + "\n")
        proc = _run(_argv(seeds, out, 30), crash_at)
        assert proc.returncode == KILLED, proc.stderr.decode()[-2000:]
        first_run = page_requests(list(web.log))
        served = {web.url(r.host, r.path) for r in first_run if r.status == 200}
        assert any(r.if_none_match for r in first_run), "revisits happened before the kill"

        rows = frontier_rows(out)
        waiting: dict[str, tuple[float, str]] = {}
        for url in served:
            state, not_before, validators, fetches = rows[url]
            if state == UrlState.LEASED:
                continue  # in flight at the kill: put back at the restart
            # settled: waiting for its revisit, with its due time and validators
            assert state == UrlState.QUEUED and fetches >= 1, (url, rows[url])
            revisit = decode(validators)
            assert revisit is not None and revisit.etag, (url, validators)
            assert not_before > 0
            waiting[url] = (not_before, revisit.etag)
        assert waiting
        assert not [u for u, r in rows.items() if r[0] in (UrlState.DONE, UrlState.FAILED)]

        mark = len(web.log)
        proc = _run(_argv(seeds, out, 4), None)
        assert proc.returncode == 0, proc.stderr.decode()[-2000:]
        second = page_requests(web.log[mark:])

    firsts: dict[str, LoggedRequest] = {}
    for r in second:
        firsts.setdefault(web.url(r.host, r.path), r)
    for url, (due, etag) in waiting.items():
        r = firsts.get(url)
        # every waiting page is revisited (the run lasts longer than the longest
        # interval), with the validators stored before the kill, never before its due
        # time (the server's wall clock; same machine)
        assert r is not None, f"{url} never revisited after the restart"
        assert r.if_none_match == etag and r.if_modified_since is not None, (url, r)
        assert r.wall >= due - 0.05, (url, r.wall, due)
    stable = [u for u in waiting if not changes(SPEC.host_spec, urlsplit(u).path)]
    assert stable and all(firsts[u].status == 304 for u in stable)
