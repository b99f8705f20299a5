"""A crawl killed at each named crash point, then the same command again: nothing lost,
only what was in flight fetched twice, every index line framing a complete record.

Each case runs the crawler as a subprocess with ``HEADWAY_CRASH_AT`` armed; the process
must die there (by SIGKILL: exit status -9), and the unarmed restart must finish the
crawl. The invariants are read from the crawl directory and the simulated web's log.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from headway.crashpoints import ENV, CrashPoint
from headway.frontier.store import UrlState
from headway.testing.simweb import HostSpec, SimWeb, SimWebSpec
from tests.integration.crashcheck import check_crawl_dir, frontier_urls
from tests.integration.helpers import TOKEN, ThreadedSimWeb, crawl_argv, read_crawl_log

pytestmark = pytest.mark.slow

KILLED = -9


def _spec() -> SimWebSpec:
    return SimWebSpec(
        hosts=2,
        host_spec=HostSpec(pages=14, links_per_page=4, features=frozenset({"duplicates"})),
        cross_links=0.2,
        seed=11,
    )


def _run(argv: list[str], crash_at: str | None) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if k != ENV}
    if crash_at is not None:
        env[ENV] = crash_at
    return subprocess.run(argv, env=env, capture_output=True, timeout=120)


def _crash(argv: list[str], crash_at: str) -> None:
    proc = _run(argv, crash_at)
    assert proc.returncode == KILLED, (
        f"{crash_at}: expected death by SIGKILL, got {proc.returncode}: "
        f"{proc.stderr.decode()[-2000:]}"
    )


def _finish(argv: list[str]) -> None:
    proc = _run(argv, None)
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    assert b"Traceback" not in proc.stderr


def _leased(out: Path) -> set[str]:
    if not (out / "frontier.sqlite3").exists():
        return set()
    return frontier_urls(out, UrlState.LEASED)


def _argv(seeds: Path, out: Path) -> list[str]:
    # small WARC files: several per crawl, so rotation and recovery of the newest one
    # are part of every case
    return crawl_argv(
        seeds, out, "--delay", "0", "--concurrency", "4", "--warc-max-size", str(16 * 1024)
    )


#: point -> which reach of it kills (mid-crawl for per-page points)
CASES: dict[CrashPoint, int] = {
    CrashPoint.LEASES_RELEASED: 1,
    CrashPoint.LEASED: 6,
    CrashPoint.FETCHED: 6,
    CrashPoint.WARC_PARTIAL: 6,
    CrashPoint.WARC_WRITTEN: 6,
    CrashPoint.CDXJ_WRITTEN: 6,
    CrashPoint.LOG_WRITTEN: 6,
    CrashPoint.WARC_ROTATED: 1,
    CrashPoint.STORE_FLUSHED: 2,
    CrashPoint.SETTLED: 2,
    CrashPoint.FRONTIER_UNCOMMITTED: 12,
    CrashPoint.INDEX_SORTING: 1,
    CrashPoint.STORE_CLOSED: 1,
    CrashPoint.BLOOM_SAVED: 1,
}


def _crawl_with_crashes(tmp_path: Path, crashes: list[str], web: SimWeb) -> None:
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("\n".join(web.seeds()) + "\n")
    out = tmp_path / "crawl"
    argv = _argv(seeds, out)
    in_flight: set[str] = set()
    for crash_at in crashes:
        _crash(argv, crash_at)
        in_flight |= _leased(out)
    _finish(argv)
    check_crawl_dir(out, web, web.log, web.expected_pages(TOKEN), in_flight)


@pytest.mark.parametrize("point", list(CASES), ids=str)
def test_crash_point_then_restart_keeps_every_invariant(tmp_path: Path, point: CrashPoint) -> None:
    with ThreadedSimWeb(_spec()) as web:
        _crawl_with_crashes(tmp_path, [f"{point}:{CASES[point]}"], web)


def test_crash_during_recovery_of_a_torn_record(tmp_path: Path) -> None:
    """Killed mid-record, then killed again right after recovery cut the torn tail (the
    index not yet repaired), then restarted."""
    with ThreadedSimWeb(_spec()) as web:
        crashes = [f"{CrashPoint.WARC_PARTIAL}:6", f"{CrashPoint.RECOVERY_WARC_CUT}:1"]
        _crawl_with_crashes(tmp_path, crashes, web)


def test_crash_while_the_repaired_index_is_put_in_place(tmp_path: Path) -> None:
    """The index repair writes the repaired index aside and then swaps it in; killed
    between the two, the next start repairs again from the original."""
    with ThreadedSimWeb(_spec()) as web:
        seeds = tmp_path / "seeds.txt"
        seeds.write_text("\n".join(web.seeds()) + "\n")
        out = tmp_path / "crawl"
        argv = _argv(seeds, out)
        _crash(argv, f"{CrashPoint.CDXJ_WRITTEN}:6")
        in_flight = _leased(out)
        # what a buffer flushed mid-line leaves: a torn last index line
        with (out / "index.cdxj").open("ab") as fh:
            fh.write(b"(com,example)/torn 2026")
        _crash(argv, f"{CrashPoint.RECOVERY_CDXJ_TMP}:1")
        assert (out / "index.cdxj").read_bytes().endswith(b"torn 2026")  # not yet replaced
        _finish(argv)
        check_crawl_dir(out, web, web.log, web.expected_pages(TOKEN), in_flight)


def test_a_parser_process_killed_mid_batch_is_replaced(tmp_path: Path) -> None:
    """Each parser process dies at its 5th page: the pages of that batch are recorded as
    parse errors, a new parser process takes over, and the crawl finishes."""
    with ThreadedSimWeb(_spec()) as web:
        seeds = tmp_path / "seeds.txt"
        seeds.write_text("\n".join(web.seeds()) + "\n")
        out = tmp_path / "crawl"
        # pages paced by a gap: without one they arrive in bursts, every batch then holds
        # a replacement process's 5th page and no page is ever parsed after a death
        proc = _run([*_argv(seeds, out), "--delay", "0.05"], f"{CrashPoint.PARSE}:5")
        assert proc.returncode == 0, proc.stderr.decode()[-2000:]
        assert b"Traceback" not in proc.stderr
    entries = [e for e in read_crawl_log(out) if not e["url"].endswith("/robots.txt")]
    died = [i for i, e in enumerate(entries) if e["error"] == "parser process died"]
    assert died, "no parser process was killed"
    parsed_after = [e for e in entries[died[0] + 1 :] if e["error"] is None and e["outlinks"]]
    assert parsed_after, "no page was parsed after the first parser process died"
    assert frontier_urls(out, UrlState.LEASED) == set()
    assert frontier_urls(out, UrlState.QUEUED) == set()


def test_unknown_crash_point_is_a_clear_error(tmp_path: Path) -> None:
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("http://site0.sim/\n")
    proc = _run(_argv(seeds, tmp_path / "c"), "no-such-point")
    assert proc.returncode == 2
    assert b"HEADWAY_CRASH_AT='no-such-point'" in proc.stderr
    assert b"Traceback" not in proc.stderr
