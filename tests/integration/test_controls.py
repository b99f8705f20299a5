"""The controls on running crawls of the simulated web, asserted from the server's own
request log: ``headway pause`` stops new fetches and ``resume`` starts them again,
``stop`` ends the crawl cleanly with its summary, ``seed`` adds a host to a running
crawl, ``opt-out`` and ``host --exclude`` stop a host's fetches (its queued URLs
dropped and counted) also after a restart; the same pause and resume for a shared crawl
of two nodes on Redis, one node paused alone; ``headway report`` on both."""

from __future__ import annotations

import csv
import io
import itertools
import json
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from headway.testing.simweb import HostSpec, SimWeb, SimWebSpec
from tests.integration.helpers import TRANSIT_SLACK, ThreadedSimWeb, crawl_argv, page_requests
from tests.integration.test_distributed import Nodes, wait_for_node_pages
from tests.support.redisproc import RedisServer

pytestmark = pytest.mark.slow

#: Seconds from a control being recorded to its node acting on it: the control task
#: reads the log every second, and a fetch handed out just before may still start.
APPLY = 1.6
#: Seconds a test watches the request log for a fetch that must not come.
WATCH = 3.0


def _spec(hosts: int) -> SimWebSpec:
    return SimWebSpec(hosts=hosts, host_spec=HostSpec(pages=400, links_per_page=4), cross_links=0)


def headway(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "headway.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def control(*args: str) -> float:
    """Run a control command that must succeed; the time it returned."""
    done = headway(*args)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("recorded #"), done.stdout
    assert len(done.stdout.strip().splitlines()) == 1
    return time.time()


def wait_until(cond: Callable[[], bool], what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.02)


def pages_after(web: SimWeb, t: float, host: str | None = None) -> list[str]:
    return [
        f"{r.host}{r.path}"
        for r in page_requests(list(web.log))
        if r.wall > t and (host is None or r.host == host)
    ]


def start_crawl(tmp: Path, web: SimWeb, seeds: list[str]) -> tuple[Path, subprocess.Popen[str]]:
    seeds_file = tmp / "seeds.txt"
    seeds_file.write_text("\n".join(seeds) + "\n")
    out = tmp / "c"
    proc = subprocess.Popen(
        crawl_argv(seeds_file, out, "--delay", "0.1"),
        stdout=subprocess.PIPE,
        stderr=(tmp / "err.txt").open("w"),
        text=True,
    )
    return out, proc


def finish(proc: subprocess.Popen[str], tmp: Path, timeout: float = 40) -> str:
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)
        pytest.fail(f"the crawl did not stop: {(tmp / 'err.txt').read_text()[-2000:]}")
    return out


def test_pause_resume_and_stop_a_running_crawl(tmp_path: Path) -> None:
    with ThreadedSimWeb(_spec(2)) as web:
        out, proc = start_crawl(tmp_path, web, web.seeds())
        try:
            wait_until(lambda: len(pages_after(web, 0)) >= 10, "the first pages")
            paused = control("pause", str(out))
            time.sleep(APPLY + WATCH)
            assert pages_after(web, paused + APPLY) == [], "a fetch started after the pause"
            assert proc.poll() is None, "a paused crawl must keep running"
            resumed = control("resume", str(out))
            wait_until(lambda: len(pages_after(web, resumed)) >= 5, "fetches after resume", 15)
            stopped = control("stop", str(out))
            summary = finish(proc, tmp_path)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)
        assert proc.returncode == 0, (tmp_path / "err.txt").read_text()
        assert "headway: stop-control:" in summary
        assert pages_after(web, stopped + APPLY + 5.0) == []  # in flight finish; no more
        err = (tmp_path / "err.txt").read_text()
        assert "paused by control #1" in err and "resumed by control #2" in err
        # a pause given while no node runs holds the next start: nothing is fetched
        done = headway("pause", str(out))
        assert "no node runs there now" in done.stdout
        restarted = time.time()
        again = subprocess.run(
            crawl_argv(tmp_path / "seeds.txt", out, "--delay", "0.1", "--max-duration", "3"),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert again.returncode == 0, again.stderr
        assert "the crawl was left paused" in again.stderr
        assert [r for r in web.log if r.wall > restarted] == []
    report = json.loads(headway("report", str(out), "--format", "json").stdout)
    assert [c["kind"] for c in report["controls"]] == ["pause", "resume", "stop", "pause"]
    assert report["frontier"]["queued"] > 0  # stopped, not finished


def test_seeds_opt_out_and_exclude_on_a_running_crawl_and_after_a_restart(
    tmp_path: Path,
) -> None:
    with ThreadedSimWeb(_spec(3)) as web:
        h0, h1, h2 = web.hosts
        out, proc = start_crawl(tmp_path, web, [web.url(h0), web.url(h1)])
        try:
            wait_until(lambda: len(pages_after(web, 0, h1)) >= 10, "pages of the opted-out host")
            assert pages_after(web, 0, h2) == []  # not linked: only a seed brings it in
            control("seed", str(out), web.url(h2))
            wait_until(lambda: len(pages_after(web, 0, h2)) >= 3, "the added seed's host", 45)
            opted = control("opt-out", str(out), h1)
            excluded = control("host", str(out), f"{h0}:{web.port}", "--exclude")
            time.sleep(APPLY + WATCH)
            assert pages_after(web, opted + APPLY, h1) == []
            assert pages_after(web, excluded + APPLY, h0) == []
            assert pages_after(web, excluded + APPLY, h2) != []  # the crawl goes on
            control("stop", str(out))
            summary = finish(proc, tmp_path)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)
        assert proc.returncode == 0, (tmp_path / "err.txt").read_text()
        found = re.search(r"(\d+)\s+dropped\s+by\s+opt-out\s+controls", summary)
        assert found is not None, summary
        dropped = int(found.group(1))
        assert dropped > 0
        # the report counts them and lists the controls
        report = json.loads(headway("report", str(out), "--format", "json").stdout)
        assert report["extra"]["URLs dropped by opt-out controls"] == dropped
        kinds = [c["kind"] for c in report["controls"]]
        assert kinds == ["add-seeds", "opt-out", "host-exclude", "stop"]
        seeds = {s["seed"]: s for s in report["seeds"]}
        assert seeds[web.url(h2)]["first_status"] == 200 and seeds[web.url(h2)]["pages"] >= 3
        assert {h["host"] for h in report["hosts"]} >= {f"{h}:{web.port}" for h in web.hosts}
        assert report["frontier"]["failed"] >= dropped  # dropped URLs are settled failed
        text = headway("report", str(out)).stdout
        assert f"URLs dropped by opt-out controls: {dropped}" in text
        assert f"#2 opt-out {h1} by cli " in text and "Seeds (3)" in text
        table = headway("report", str(out), "--format", "csv").stdout
        rows = list(csv.reader(io.StringIO(table)))
        assert ["extra", "", "URLs dropped by opt-out controls", str(dropped)] in rows
        assert ["controls", "3", "kind", "host-exclude"] in rows
        # a restart folds the log again: the opt-out and the exclusion still hold
        restarted = time.time()
        again = subprocess.run(
            crawl_argv(tmp_path / "seeds.txt", out, "--delay", "0.1", "--max-duration", "4"),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert again.returncode == 0, again.stderr
        assert pages_after(web, restarted, h2) != []
        assert pages_after(web, restarted, h1) == []
        assert pages_after(web, restarted, h0) == []


def _node_id(out: Path) -> str:
    return str(json.loads((out / "headway.json").read_text())["node_id"])


def _node_lines_after(nodes: Nodes, name: str, t: float) -> int:
    (log,) = (nodes.tmp / name).glob("crawl-*.log.jsonl")
    lines = [json.loads(x) for x in log.read_text().splitlines() if x.strip()]
    from headway.store.crawllog import parse_time

    return sum(1 for e in lines if parse_time(e["time"]) > t)


def test_pause_resume_one_node_and_report_a_shared_crawl(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    with ThreadedSimWeb(_spec(6)) as web:
        nodes = Nodes(redis_server.url, tmp_path, web)
        nodes.seeds.write_text("\n".join(web.seeds()[:5]) + "\n")  # the last one comes later
        shared = ["--store", redis_server.url, "--crawl-id", nodes.crawl]
        try:
            nodes.start("n0")
            nodes.start("n1")
            wait_for_node_pages(nodes, "n0", 3)
            wait_for_node_pages(nodes, "n1", 3)
            paused = control("pause", *shared)
            time.sleep(APPLY + WATCH)
            assert pages_after(web, paused + APPLY) == [], "a fetch after the crawl's pause"
            live = json.loads(headway("report", *shared, "--format", "json").stdout)
            assert len(live["nodes"]) == 2
            resumed = control("resume", *shared)
            wait_until(lambda: len(pages_after(web, resumed)) >= 5, "fetches after resume", 15)
            one = control("pause", *shared, "--node", _node_id(tmp_path / "n1"))
            time.sleep(APPLY + WATCH)
            assert _node_lines_after(nodes, "n1", one + APPLY) == 0, "n1 fetched after its pause"
            assert _node_lines_after(nodes, "n0", one + APPLY) > 0, "n0 must go on"
            assert all(p.poll() is None for p in nodes.procs.values())
            control("stop", *shared)
            nodes.wait(60)
        finally:
            nodes.stop_all()
        for name, proc in nodes.procs.items():
            assert proc.returncode == 0, nodes.stderr(name)
    bare = headway("report", *shared, "--format", "json")
    assert bare.returncode == 0, bare.stderr
    data: dict[str, Any] = json.loads(bare.stdout)
    kinds = [c["kind"] for c in data["controls"]]
    assert kinds == ["pause", "resume", "pause", "stop"]
    assert data["controls"][2]["node"] == _node_id(tmp_path / "n1")
    assert data["frontier"]["done"] > 0 and len(data["seeds"]) == 5
    assert data["hosts"] == [] and any("--logs" in n for n in data["notes"])
    logs = ["--logs", str(tmp_path / "n0"), "--logs", str(tmp_path / "n1")]
    full = json.loads(headway("report", *shared, *logs, "--format", "json").stdout)
    logged = sum(h["fetches"] for h in full["hosts"])
    assert logged == len(nodes.pages_logged("n0")) + len(nodes.pages_logged("n1"))
    assert all(s["first_status"] == 200 for s in full["seeds"])
    rows = list(
        csv.reader(io.StringIO(headway("report", *shared, *logs, "--format", "csv").stdout))
    )
    assert rows[0] == ["section", "key", "field", "value"] and len(rows) > 20
    text = headway("report", *shared, *logs).stdout
    assert "Control log (4)" in text and f"crawl {nodes.crawl} in redis://" in text


def test_a_seed_added_to_a_running_shared_crawl_is_fetched(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    """Both nodes apply the control (each reads the log every second); the node holding
    the seed's shard may lease it before its own control task has read it: the seed's
    links must still be in scope there (failed about one run in three before)."""
    with ThreadedSimWeb(_spec(6)) as web:
        nodes = Nodes(redis_server.url, tmp_path, web)
        late = web.hosts[5]
        nodes.seeds.write_text("\n".join(web.seeds()[:5]) + "\n")  # the last one comes later
        shared = ["--store", redis_server.url, "--crawl-id", nodes.crawl]
        try:
            nodes.start("n0")
            nodes.start("n1")
            wait_for_node_pages(nodes, "n0", 3)
            wait_for_node_pages(nodes, "n1", 3)
            assert pages_after(web, 0, late) == []
            control("seed", *shared, web.url(late))
            wait_until(lambda: len(pages_after(web, 0, late)) >= 3, "the added seed's host", 45)
            control("stop", *shared)
            nodes.wait(60)
        finally:
            nodes.stop_all()
        for name, proc in nodes.procs.items():
            assert proc.returncode == 0, nodes.stderr(name)


def test_a_delay_override_changes_a_running_hosts_gap_and_clears(tmp_path: Path) -> None:
    with ThreadedSimWeb(_spec(1)) as web:
        (host,) = web.hosts
        out, proc = start_crawl(tmp_path, web, web.seeds())
        name = f"{host}:{web.port}"
        try:
            wait_until(lambda: len(pages_after(web, 0)) >= 10, "the first pages")
            slowed = control("host", str(out), name, "--delay", "1.0")
            wait_until(lambda: len(pages_after(web, slowed + APPLY)) >= 4, "slowed fetches", 20)
            slow = [r.wall for r in page_requests(list(web.log)) if r.wall > slowed + APPLY]
            cleared = control("host", str(out), name, "--clear")
            wait_until(lambda: len(pages_after(web, cleared + APPLY)) >= 10, "fast fetches", 20)
            fast = [r.wall for r in page_requests(list(web.log)) if r.wall > cleared + APPLY]
            control("stop", str(out))
            finish(proc, tmp_path)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)
        slow_gaps = [b - a for a, b in itertools.pairwise(slow[:4])]
        assert min(slow_gaps) >= 1.0 - TRANSIT_SLACK, slow_gaps
        fast_gaps = [b - a for a, b in itertools.pairwise(fast[:10])]
        assert max(fast_gaps) < 0.9, fast_gaps  # back to --delay 0.1


def _excluded_lines(nodes: Nodes, name: str) -> list[str]:
    (log,) = (nodes.tmp / name).glob("crawl-*.log.jsonl")
    lines = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    return [e["url"] for e in lines if e["outcome"] == "skipped" and e["note"] == "excluded"]


def test_an_exclusion_added_mid_crawl_on_two_nodes_drops_the_queued_urls_on_both(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    odd = re.compile(r"/p/\d*[13579]$")
    with ThreadedSimWeb(_spec(6)) as web:
        nodes = Nodes(redis_server.url, tmp_path, web)
        shared = ["--store", redis_server.url, "--crawl-id", nodes.crawl]
        try:
            nodes.start("n0")
            nodes.start("n1")
            wait_for_node_pages(nodes, "n0", 3)
            wait_for_node_pages(nodes, "n1", 3)
            # the crawl fetches odd pages before the control (which pages go first depends
            # on the crawl order and the machine's pace: wait for one, bounded)
            deadline = time.monotonic() + 30
            while not any(odd.search(p) for p in pages_after(web, 0)):
                assert time.monotonic() < deadline, "no odd page fetched before the control"
                time.sleep(0.1)
            added = control("exclude", *shared, odd.pattern)
            time.sleep(APPLY + WATCH)
            late = [p for p in pages_after(web, added + APPLY) if odd.search(p)]
            assert late == [], f"fetched after the exclusion: {late[:5]}"
            assert len(pages_after(web, added + APPLY)) > 5, "the crawl goes on"
            for name in ("n0", "n1"):  # queued before the control, dropped when leased
                dropped = _excluded_lines(nodes, name)
                assert dropped and all(odd.search(u) for u in dropped), name
            control("stop", *shared)
            nodes.wait(60)
        finally:
            nodes.stop_all()
        for name, proc in nodes.procs.items():
            assert proc.returncode == 0, nodes.stderr(name)
            assert "excluded from now on: " in nodes.stderr(name)
    data = json.loads(headway("report", *shared, "--format", "json").stdout)
    assert [c["kind"] for c in data["controls"]] == ["exclude", "stop"]
