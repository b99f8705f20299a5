"""Several nodes crawling one simulated web through one shared frontier in Redis (a
redis-server, or a 3-master Redis Cluster): every reachable page fetched exactly once
across nodes, per-host politeness across nodes (from the server's own log), a node killed
with SIGKILL, Redis stopped and started again, and a node joining mid-crawl."""

from __future__ import annotations

import itertools
import json
import re
import subprocess
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import redis

from headway.testing.simweb import HostSpec, LoggedRequest, SimWeb, SimWebSpec
from tests.integration.crashcheck import warc_captures
from tests.integration.helpers import (
    TOKEN,
    UA,
    ThreadedSimWeb,
    fetched_urls,
    page_requests,
    short_gap,
)
from tests.support.argv import headway_argv
from tests.support.redisproc import RedisCluster, RedisServer

pytestmark = pytest.mark.slow

DELAY = 0.05
SHARD_TTL = 1.5
_crawls = itertools.count()


def _spec(hosts: int = 8, pages: int = 20) -> SimWebSpec:
    return SimWebSpec(
        hosts=hosts,
        host_spec=HostSpec(pages=pages, links_per_page=4),
        cross_links=0.3,
        seed=11,
    )


def node_argv(store: str, crawl: str, out: Path, seeds: Path | None, *extra: str) -> list[str]:
    """``headway crawl SEEDS`` (seeds is a file) or ``headway node`` for a shared crawl."""
    return headway_argv(
        out,
        "--delay",
        str(DELAY),
        "--shard-ttl",
        str(SHARD_TTL),
        "--shards",
        "16",
        "--connect-timeout",
        "1",
        "--read-timeout",
        "2",
        "--total-timeout",
        "2",
        "--lease-margin",
        "1",
        *extra,
        user_agent=UA,
        seeds=seeds,
        store=store,
        crawl_id=crawl,
    )


class Nodes:
    """Node processes of one shared crawl, started and waited for by the test."""

    def __init__(self, store: str, tmp: Path, web: SimWeb) -> None:
        self.store = store
        self.crawl = f"it{next(_crawls)}"
        self.tmp = tmp
        self.seeds = tmp / "seeds.txt"
        self.seeds.write_text("\n".join(web.seeds()) + "\n")
        self.procs: dict[str, subprocess.Popen[bytes]] = {}

    def start(
        self, name: str, *, seeds: bool = True, extra: Sequence[str] = ()
    ) -> subprocess.Popen[bytes]:
        argv = node_argv(
            self.store, self.crawl, self.tmp / name, self.seeds if seeds else None, *extra
        )
        err = (self.tmp / f"{name}.err").open("wb")
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err)
        self.procs[name] = proc
        return proc

    def wait(self, timeout: float = 90) -> None:
        deadline = time.monotonic() + timeout
        for name, proc in self.procs.items():
            try:
                proc.wait(max(1.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                for p in self.procs.values():
                    p.kill()
                pytest.fail(f"node {name} did not finish: {self.stderr(name)[-2000:]}")

    def stderr(self, name: str) -> str:
        return (self.tmp / f"{name}.err").read_text(errors="replace")

    def pages_logged(self, name: str) -> list[str]:
        (log,) = (self.tmp / name).glob("crawl-*.log.jsonl")
        lines = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
        return [
            e["url"] for e in lines if e["status"] == 200 and not e["url"].endswith("/robots.txt")
        ]

    def stop_all(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)


def wait_for_pages(web: SimWeb, pages: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while len(fetched_urls(web, web.log)) < pages:
        if time.monotonic() > deadline:
            pytest.fail("the crawl made no progress")
        time.sleep(0.01)


def wait_for_node_pages(nodes: Nodes, name: str, pages: int, timeout: float = 60) -> None:
    """Wait until node ``name`` has logged ``pages`` fetched pages (nodes start at their
    own pace: a slow start must not leave one without work when the test acts on it)."""
    deadline = time.monotonic() + timeout
    while True:
        logs = list((nodes.tmp / name).glob("crawl-*.log.jsonl"))
        if logs and len(nodes.pages_logged(name)) >= pages:
            return
        if time.monotonic() > deadline:
            pytest.fail(f"node {name} fetched no page")
        time.sleep(0.01)


def check_exactly_once(web: SimWeb, nodes: Nodes, names: list[str]) -> None:
    expected = web.expected_pages(TOKEN)
    fetched = Counter(fetched_urls(web, web.log))
    assert set(fetched) == expected
    twice = {u: n for u, n in fetched.items() if n > 1}
    assert twice == {}, f"fetched more than once: {sorted(twice)[:5]}"
    logged = Counter(u for n in names for u in nodes.pages_logged(n))
    assert set(logged) == expected
    assert max(logged.values()) == 1


def cross_node_violations(web: SimWeb, nodes: Nodes, names: list[str]) -> list[str]:
    """Per host, from the server's own log: two requests in flight at once (from any
    nodes), or two requests from different nodes closer than the delay. The gap between
    requests of one node is its limiter's rule (tests/integration/test_crawl.py checks
    it); what a shared crawl adds is that a host handed from node to node keeps it.
    Requests are attributed to nodes by their crawl logs (robots.txt by the nearest
    logged fetch of that host's robots.txt)."""
    page_node: dict[str, str] = {}
    robots: dict[str, list[tuple[float, str]]] = defaultdict(list)
    for name in names:
        (log,) = (nodes.tmp / name).glob("crawl-*.log.jsonl")
        for line in log.read_text().splitlines():
            e = json.loads(line)
            if e["url"].endswith("/robots.txt"):
                when = datetime.fromisoformat(e["time"].replace("Z", "+00:00")).timestamp()
                robots[e["url"].split("/")[2].split(":")[0]].append((when, name))
            else:
                page_node[e["url"]] = name
    by_host: dict[str, list[tuple[LoggedRequest, str]]] = defaultdict(list)
    for r in web.log:
        if r.path == "/robots.txt":
            near = min(robots[r.host], key=lambda t: abs(t[0] - r.wall), default=(0.0, "?"))
            node = near[1]
        else:
            node = page_node.get(web.url(r.host, r.path), "?")
        by_host[r.host].append((r, node))
    problems = []
    for host, reqs in by_host.items():
        reqs.sort(key=lambda x: x[0].arrival)
        for (a, na), (b, nb) in itertools.pairwise(reqs):
            if b.arrival < a.end - 0.001:
                problems.append(f"{host}: {b.path} ({nb}) arrived before {a.path} ({na}) ended")
            elif na != nb and (gap := short_gap(a, b, DELAY)) is not None:
                problems.append(f"{host}: {a.path} ({na}) -> {b.path} ({nb}) gap {gap:.3f}s")
    return problems


def run_crawl(store: str, tmp: Path, count: int) -> tuple[SimWeb, Nodes]:
    with ThreadedSimWeb(_spec()) as web:
        nodes = Nodes(store, tmp, web)
        try:
            for i in range(count):
                nodes.start(f"n{i}")
            nodes.wait()
        finally:
            nodes.stop_all()
        for name, proc in nodes.procs.items():
            assert proc.returncode == 0, nodes.stderr(name)
        return web, nodes


@pytest.mark.parametrize("count", [2, 3])
def test_nodes_share_one_crawl_on_redis(
    redis_server: RedisServer, tmp_path: Path, count: int
) -> None:
    web, nodes = run_crawl(redis_server.url, tmp_path, count)
    names = list(nodes.procs)
    check_exactly_once(web, nodes, names)
    assert cross_node_violations(web, nodes, names) == []
    # the pages were spread: more than one node fetched some
    assert sum(1 for n in names if nodes.pages_logged(n)) >= 2
    # every node's output names the node (a node that got no shard before the crawl
    # ended has fetched nothing and written no WARC file)
    for n in (n for n in names if nodes.pages_logged(n)):
        warcs = list((tmp_path / n / "warc").glob("*.warc.gz"))
        assert warcs and all(_node_id(tmp_path / n) in w.name for w in warcs)


def test_three_nodes_share_one_crawl_on_a_cluster(
    redis_cluster: RedisCluster, tmp_path: Path
) -> None:
    web, nodes = run_crawl(redis_cluster.url, tmp_path, 3)
    check_exactly_once(web, nodes, list(nodes.procs))
    assert cross_node_violations(web, nodes, list(nodes.procs)) == []


def _node_id(out: Path) -> str:
    return str(json.loads((out / "headway.json").read_text())["node_id"])


def _in_flight_of(client: Any, crawl: str, node: str, shards: int = 16) -> set[str]:
    urls = set()
    for s in range(shards):
        for m in client.zrange(f"hw:{{{crawl}:{s}}}:leases", 0, -1):
            url_id, owner = m.split("|", 1)
            if owner == node:
                rec = client.hget(f"hw:{{{crawl}:{s}}}:urls", url_id)
                if rec is not None:
                    urls.add(json.loads(rec)[0])
    return urls


def test_kill_minus_9_of_one_node_moves_its_shards(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    client = redis.Redis(port=redis_server.port, decode_responses=True)
    with ThreadedSimWeb(_spec(pages=30)) as web:
        nodes = Nodes(redis_server.url, tmp_path, web)
        try:
            # the victim first, crawling before the others join: a node started last on
            # a loaded machine could find the small crawl done before it took a shard
            nodes.start("n2")
            wait_for_node_pages(nodes, "n2", 1)
            nodes.start("n0")
            nodes.start("n1")
            wait_for_pages(web, 40)
            victim = nodes.procs["n2"]
            victim.kill()
            victim.wait(10)
            dead = _node_id(tmp_path / "n2")
            in_flight = _in_flight_of(client, nodes.crawl, dead)
            nodes.wait()
        finally:
            nodes.stop_all()
        for name in ("n0", "n1"):
            assert nodes.procs[name].returncode == 0, nodes.stderr(name)
        expected = web.expected_pages(TOKEN)
        fetched = Counter(fetched_urls(web, web.log))
    assert set(fetched) == expected  # nothing lost
    twice = {u for u, n in fetched.items() if n > 1}
    assert twice <= in_flight, sorted(twice - in_flight)[:5]
    assert all(n <= 2 for n in fetched.values())
    assert nodes.pages_logged("n2"), "the killed node had fetched pages"


def _restart_mid_crawl(
    server: RedisServer, tmp_path: Path, web: ThreadedSimWeb, pause: float
) -> tuple[Nodes, int]:
    """Two nodes crawl ``web``; Redis is stopped (SIGTERM) after 40 pages, once both
    nodes are crawling (a node still starting when Redis goes away stops at start-up,
    which is another test), and started again ``pause`` seconds later; the nodes are
    waited for. Returns them and the number of requests the server had seen when Redis
    stopped."""
    nodes = Nodes(server.url, tmp_path, web)
    try:
        nodes.start("n0")
        nodes.start("n1")
        wait_for_pages(web, 40)
        wait_for_node_pages(nodes, "n0", 1)
        wait_for_node_pages(nodes, "n1", 1)
        server.stop()  # with AOF on, Redis writes it and exits
        stopped_at = len(web.log)
        time.sleep(pause)
        server.start()
        nodes.wait()
    finally:
        nodes.stop_all()
    return nodes, stopped_at


def test_redis_restart_mid_crawl_loses_no_url(tmp_path: Path) -> None:
    server = RedisServer(tmp_path / "redis", appendonly=True)
    server.start()
    try:
        with ThreadedSimWeb(_spec(pages=30)) as web:
            nodes, stopped_at = _restart_mid_crawl(server, tmp_path, web, pause=3)
            for name in ("n0", "n1"):
                err = nodes.stderr(name)
                assert nodes.procs[name].returncode == 0, err
                assert "unreachable" in err
                # a restart that kept every write (AOF, clean stop) kept the seeds: none
                # is offered again (every seed was, after every failover, before)
                assert re.search(r"offered again, and 0 of [1-9]\d* seeds", err), err
            expected = web.expected_pages(TOKEN)
            fetched = Counter(fetched_urls(web, web.log))
        assert stopped_at < len(web.log), "the crawl went on after the restart"
        assert set(fetched) == expected
    finally:
        server.stop()


def test_a_restart_that_lost_the_crawl_stops_every_node_with_one_line(tmp_path: Path) -> None:
    server = RedisServer(tmp_path / "redis", appendonly=False)  # a restart keeps nothing
    server.start()
    try:
        with ThreadedSimWeb(_spec(pages=30)) as web:
            nodes, _ = _restart_mid_crawl(server, tmp_path, web, pause=2)
            for name in ("n0", "n1"):
                err = nodes.stderr(name)
                assert nodes.procs[name].returncode == 2, err
                errors = [line for line in err.splitlines() if line.startswith("headway:")]
                assert len(errors) == 1, err
                assert "no longer holds crawl" in errors[0], err
                assert "restarted with AOF off" in errors[0] and "--appendonly yes" in err, err
                assert "Traceback" not in err and "stopping: finished" not in err, err
            # what the nodes fetched before the loss stays in their crawl logs
            assert sum(len(nodes.pages_logged(name)) for name in ("n0", "n1")) >= 20
    finally:
        server.stop()


def test_a_flush_of_a_live_redis_stops_every_node_and_keeps_what_was_fetched(
    tmp_path: Path,
) -> None:
    server = RedisServer(tmp_path / "redis", appendonly=True)
    server.start()
    try:
        with ThreadedSimWeb(_spec(pages=30)) as web:
            nodes = Nodes(server.url, tmp_path, web)
            try:
                nodes.start("n0")
                nodes.start("n1")
                wait_for_pages(web, 40)
                wait_for_node_pages(nodes, "n1", 1)
                wait_for_node_pages(nodes, "n0", 1)
                assert server.cli("FLUSHALL") == "OK"  # the server keeps running
                nodes.wait()
            finally:
                nodes.stop_all()
            answered = {web.url(r.host, r.path) for r in page_requests(web.log) if r.status}
            expected = web.expected_pages(TOKEN)
        assert answered < expected, "the crawl had finished before the flush"
        logged: set[str] = set()
        stored: set[str] = set()
        for name in ("n0", "n1"):
            err = nodes.stderr(name)
            assert nodes.procs[name].returncode == 2, err
            errors = [line for line in err.splitlines() if line.startswith("headway:")]
            assert len(errors) == 1, err
            assert "no longer holds crawl" in errors[0] and server.address in errors[0], err
            assert "AOF was on" in errors[0] and "--appendonly" not in errors[0], err
            assert "could not release" not in err, err  # nothing to release: no noise
            assert "Traceback" not in err and "finished" not in err, err
            (log,) = (tmp_path / name).glob("crawl-*.log.jsonl")
            logged |= {json.loads(line)["url"] for line in log.read_text().splitlines()}
            stored |= set(warc_captures(tmp_path / name))
        # every page the server answered is in a crawl log and a WARC file
        assert answered <= logged, sorted(answered - logged)[:5]
        assert answered <= stored, sorted(answered - stored)[:5]
    finally:
        server.stop()


def status_json(*args: str) -> tuple[int, dict[str, Any], str]:
    done = subprocess.run(
        [sys.executable, "-m", "headway.cli", "status", *args, "--json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    return done.returncode, json.loads(done.stdout) if done.returncode == 0 else {}, done.stderr


def test_status_of_a_shared_crawl_and_a_masked_password(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    with ThreadedSimWeb(_spec(hosts=4, pages=60)) as web:
        nodes = Nodes(redis_server.url, tmp_path, web)
        try:
            nodes.start("a")
            nodes.start("b", seeds=False)
            deadline = time.monotonic() + 30
            rows: list[dict[str, Any]] = []
            while time.monotonic() < deadline:
                rc, st, err = status_json("--store", redis_server.url, "--crawl-id", nodes.crawl)
                if rc == 0:  # (before the first node has created the crawl: an error)
                    rows = st["nodes"]
                if len(rows) == 2 and all(r["software"] for r in rows):
                    break  # both have published their statistics
                time.sleep(0.2)
            assert len(rows) == 2, rows  # a row per live node
            # each row read back from the node's statistics record, nothing missing
            assert all(r["note"] == "" and r["software"].startswith("headway/") for r in rows)
            assert {r["node"] for r in rows} == {_node_id(tmp_path / n) for n in ("a", "b")}
            assert all(r["last_heartbeat_age"] < 5 for r in rows)
            assert sum(r["shards_held"] for r in rows) + st["unowned_shards"] == 16
            nodes.wait()
        finally:
            nodes.stop_all()
        rc, st, err = status_json("--store", redis_server.url, "--crawl-id", nodes.crawl)
        assert rc == 0, err
        assert st["frontier"]["done"] == len(web.expected_pages(TOKEN))
        assert (st["frontier"]["queued"], st["frontier"]["leased"], st["nodes"]) == (0, 0, [])
        # a store URL with a password (this server accepts any): printed masked only
        secret = f"redis://:hunter2secret@127.0.0.1:{redis_server.port}/0"
        shown = f"redis://:***@127.0.0.1:{redis_server.port}/0"
        for args in (
            ["status", "--store", secret, "--crawl-id", nodes.crawl],
            [
                *("node", "--store", secret, "--crawl-id", nodes.crawl),
                *("--out", str(tmp_path / "c"), "--user-agent", UA),
            ],
        ):
            done = subprocess.run(
                [sys.executable, "-m", "headway.cli", *args],
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert done.returncode == 0, done.stderr
            assert "hunter2secret" not in done.stdout + done.stderr
            assert shown in done.stdout + done.stderr
            if args[0] == "status":  # the finished crawl said so, in words
                assert "finished: nothing queued or in flight" in done.stdout


def test_node_joining_mid_crawl_gets_shards_and_fetches(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    # long enough (per host: pages x delay) that the first node cannot finish before a
    # late node has started, however fast the first one crawls
    with ThreadedSimWeb(_spec(pages=120)) as web:
        nodes = Nodes(redis_server.url, tmp_path, web)
        try:
            nodes.start("first")
            wait_for_pages(web, 30)
            nodes.start("late", seeds=False)
            nodes.wait()
        finally:
            nodes.stop_all()
        for name in ("first", "late"):
            assert nodes.procs[name].returncode == 0, nodes.stderr(name)
        assert nodes.pages_logged("late"), "the late node fetched nothing"
        check_exactly_once(web, nodes, ["first", "late"])
        assert cross_node_violations(web, nodes, ["first", "late"]) == []
