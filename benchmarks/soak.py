"""The soak: a shared crawl of a web shaped like the web, on a Redis Cluster of 3 masters
with a replica each, by 4 nodes, through faults on a schedule; measured from the
server's own request log and the graph (see the "Soak" section of docs/scaling.md).

Usage::

    python benchmarks/soak.py                      # full size: 50,000 hosts, 500,000 pages, 60 min
    python benchmarks/soak.py --minutes 6 --hosts 2000 --pages 40000 --delay 0.25

Writes a JSON result (``--result``, default docs/soak.json) and a plot (``--plot``,
default docs/soak.png; matplotlib is installed on demand, it is no dependency of
headway). Everything runs on 127.0.0.1; the work directory (``--work``) keeps the
nodes' crawl directories, the Redis directories and the request log.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import checkout_path  # noqa: F401  (tests/support on sys.path)
import redis
from redis.cluster import ClusterNode
from redis.exceptions import RedisClusterException
from tests.support.argv import headway_argv
from tests.support.redisproc import RedisCluster, RedisServer

from headway.bench.harness import free_port, wait_port
from headway.bench.proctree import all_stats, rss_bytes_of, tree_of
from headway.bench.soaklog import Fault, FaultKind
from headway.frontier.redis.keys import member
from headway.frontier.redis.status import read_crawl_status
from headway.testing.webshape import shaped_web

HERE = Path(__file__).resolve().parent
UA = "soakbot/1.0 (+https://example.org/soak; {name})"
TOKEN = "soakbot"
TOTAL_TIMEOUT = 10.0
LEASE_MARGIN = 5.0


@dataclass
class Node:
    name: str
    argv: list[str]
    proc: subprocess.Popen[bytes] | None = None
    frozen: bool = False
    stopped: bool = False  # stopped for good (a clean stop)
    exits: list[int] = field(default_factory=list)
    starts: list[float] = field(default_factory=list)

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None


class Soak:
    def __init__(self, args: argparse.Namespace, work: Path) -> None:
        self.args = args
        self.work = work
        self.seconds = args.minutes * 60.0
        self.rng = random.Random(args.seed)
        self.faults: list[Fault] = []
        self.samples: list[dict[str, Any]] = []
        self.nodes: dict[str, Node] = {}
        self.lock = threading.Lock()
        self.done = threading.Event()
        self.port = free_port()
        self.crawl = "soak"
        shape = shaped_web(args.hosts, args.pages, args.seed)
        self.largest = max(shape.host_pages(h) for h in range(args.hosts))
        self.budget = max(10_000, 2 * self.largest + 100)
        self.cluster = RedisCluster(work / "redis", replicas=1, appendonly=True)
        self.t0 = time.monotonic()
        self.web: subprocess.Popen[bytes] | None = None
        self.log = work / "requests.jsonl"
        self._rc: Any = None  # a cluster client for per-shard reads

    # -- processes -----------------------------------------------------------------------

    def node_argv(self, name: str, seeds: Path | None) -> list[str]:
        a = self.args
        return headway_argv(
            self.work / name,
            *("--delay", str(a.delay), "--shard-ttl", str(a.shard_ttl)),
            *("--shards", str(a.shards), "--connect-timeout", "2", "--read-timeout", "5"),
            *("--total-timeout", str(TOTAL_TIMEOUT), "--lease-margin", str(LEASE_MARGIN)),
            *("--host-budget", str(self.budget), "--max-depth", str(a.max_depth)),
            *("--bloom-capacity", str(max(100_000, 4 * a.pages))),
            user_agent=UA.format(name=name),
            seeds=seeds,
            store=self.cluster.url,
            crawl_id=self.crawl,
        )

    def start_node(self, node: Node) -> None:
        err = (self.work / f"{node.name}.err").open("ab")
        node.proc = subprocess.Popen(
            node.argv, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True
        )
        node.starts.append(time.monotonic())

    def add_node(self, name: str, seeds: Path | None) -> Node:
        node = Node(name, self.node_argv(name, seeds))
        with self.lock:
            self.nodes[name] = node
        self.start_node(node)
        return node

    def fault(self, kind: FaultKind, target: str, until: float | None = None) -> Fault:
        f = Fault(time.monotonic(), kind, target, until)
        self.faults.append(f)
        print(f"[{f.at - self.t0:7.1f}s] {kind} {target}", flush=True)
        return f

    def live_nodes(self) -> list[Node]:
        return [n for n in self.nodes.values() if n.running and not n.frozen and not n.stopped]

    # -- faults --------------------------------------------------------------------------

    def kill_node(self, restart_after: float) -> None:
        live = self.live_nodes()
        if not live:
            return
        node = self.rng.choice(live)
        assert node.proc is not None
        node.proc.send_signal(signal.SIGKILL)
        node.exits.append(node.proc.wait())
        self.fault(FaultKind.NODE_KILL, node.name)
        self.later(restart_after, lambda: self.restart_node(node))

    def restart_node(self, node: Node) -> None:
        if node.stopped or self.done.is_set():
            return
        self.start_node(node)
        self.fault(FaultKind.NODE_RESTART, node.name)

    def freeze_node(self, seconds: float) -> None:
        live = self.live_nodes()
        if not live:
            return
        node = self.rng.choice(live)
        assert node.proc is not None
        os.killpg(node.proc.pid, signal.SIGSTOP)
        node.frozen = True
        at = time.monotonic()
        time.sleep(seconds)
        os.killpg(node.proc.pid, signal.SIGCONT)
        node.frozen = False
        f = Fault(at, FaultKind.NODE_FREEZE, node.name, time.monotonic())
        self.faults.append(f)
        print(f"[{at - self.t0:7.1f}s] node-freeze {node.name} for {seconds:.0f}s", flush=True)

    def join_node(self) -> None:
        node = self.add_node(f"n{len(self.nodes) + 1}", None)
        self.fault(FaultKind.NODE_ADD, node.name)

    def stop_node(self) -> None:
        live = self.live_nodes()
        if len(live) < 2:
            return
        node = self.rng.choice(live)
        assert node.proc is not None
        node.stopped = True
        node.proc.send_signal(signal.SIGTERM)
        self.fault(FaultKind.NODE_STOP, node.name)

    def server(self, address: str) -> RedisServer:
        return next(s for s in self.cluster.servers if s.address == address)

    def kill_master(self, restart_after: float) -> None:
        masters = [a for a, r in self.cluster.roles().items() if r == "master"]
        if not masters:
            return
        victim = self.server(self.rng.choice(masters))
        victim.kill()
        self.fault(FaultKind.REDIS_KILL, victim.address)
        self.later(restart_after, lambda: self.restart_redis(victim))

    def restart_redis(self, *servers: RedisServer) -> None:
        for s in servers:
            s.start()
            self.fault(FaultKind.REDIS_RESTART, s.address)

    def restart_machine(self, down: float) -> None:
        """A master and the replica of another master, as if on one machine, stopped
        together (SIGTERM) and started again ``down`` seconds later."""
        roles = self.cluster.roles()
        masters = [a for a, r in roles.items() if r == "master"]
        if not masters:
            return
        master = self.rng.choice(masters)
        others = [a for a, r in roles.items() if r not in ("master", master)]
        pair = [self.server(master)] + ([self.server(others[0])] if others else [])
        for s in pair:
            s.stop()
        self.fault(FaultKind.REDIS_MACHINE, ",".join(s.address for s in pair))
        self.later(down, lambda: self.restart_redis(*pair))

    def later(self, seconds: float, action: Any) -> None:
        timer = threading.Timer(seconds, action)
        timer.daemon = True
        timer.start()

    def schedule(self) -> list[tuple[float, Any]]:
        """(seconds from the start, action): every fault once in a short run; the node
        kills repeat every tenth of a long one."""
        t = self.seconds
        down = max(15.0, 0.03 * t)
        freeze = max(3 * self.args.shard_ttl, TOTAL_TIMEOUT + LEASE_MARGIN + 5)
        plan: list[tuple[float, Any]] = [
            (0.20 * t, lambda: self.freeze_node(freeze)),
            (0.40 * t, lambda: self.kill_master(down)),
            (0.60 * t, lambda: self.restart_machine(10.0)),
            (0.75 * t, self.join_node),
            (0.85 * t, self.stop_node),
        ]
        kills = (0.10, 0.30, 0.50, 0.70, 0.90) if t < 1800 else [i / 12 for i in range(1, 12, 2)]
        plan += [(k * t, lambda: self.kill_node(down)) for k in kills]
        return sorted(plan, key=lambda p: p[0])

    # -- measuring -----------------------------------------------------------------------

    def sample(self) -> dict[str, Any]:
        now = time.monotonic()
        stats = all_stats()
        nodes = {}
        with self.lock:
            current = list(self.nodes.values())
        for node in current:
            if node.proc is None or node.proc.poll() is not None:
                continue
            pids = tree_of(node.proc.pid, stats)
            nodes[node.name] = {
                "pid": node.proc.pid,
                "cpu": round(sum(stats[p].cpu for p in pids if p in stats), 2),
                "rss": sum(rss_bytes_of(p) for p in pids),
                "main_rss": rss_bytes_of(node.proc.pid),
            }
        servers = {}
        for s in self.cluster.servers:
            try:
                info = redis.Redis(port=s.port, socket_timeout=1.0).info("all")
            except redis.RedisError:
                continue
            by_name = {k[8:]: v["calls"] for k, v in info.items() if k.startswith("cmdstat_")}
            servers[s.address] = {
                "role": info.get("role"),
                "run_id": info.get("run_id"),
                "mem": info.get("used_memory"),
                "calls": sum(by_name.values()),
                "by_name": by_name,  # left out of the result file
                "cpu": info.get("used_cpu_sys", 0) + info.get("used_cpu_user", 0),
            }
        frontier = None
        try:
            status = read_crawl_status(self.cluster.url, self.crawl, wait=1.0)
            c = status.frontier
            frontier = {"queued": c.queued, "leased": c.leased, "done": c.done, "seen": c.seen}
            frontier["failed"] = c.failed
            frontier["shard_queued_max"] = self.shard_queued_max()
        except Exception as exc:
            frontier = {"error": str(exc)[:200]}
        return {"t": round(now, 3), "nodes": nodes, "redis": servers, "frontier": frontier}

    def shard_queued_max(self) -> int | None:
        """The most URLs queued in one shard (a huge or trap host filling its shard)."""
        try:
            if self._rc is None:
                nodes = [ClusterNode("127.0.0.1", s.port) for s in self.cluster.servers]
                self._rc = redis.RedisCluster(startup_nodes=nodes, socket_timeout=1.0)
            pipe = self._rc.pipeline()
            for shard in range(self.args.shards):
                pipe.hget(f"hw:{{{self.crawl}:{shard}}}:totals", "queued")
            return max(int(v or 0) for v in pipe.execute())
        except (redis.RedisError, RedisClusterException):
            self._rc = None
            return None

    def sampler(self) -> None:
        while not self.done.wait(self.args.sample):
            s = self.sample()
            self.samples.append(s)
            f = s["frontier"]
            print(f"[{s['t'] - self.t0:7.1f}s] nodes {sorted(s['nodes'])} frontier {f}", flush=True)

    # -- the run -------------------------------------------------------------------------

    def run(self) -> None:
        a = self.args
        print(f"work directory {self.work}; largest host {self.largest} pages", flush=True)
        if self.largest * a.delay < self.seconds:
            print(
                f"note: the largest host takes about {self.largest * a.delay:.0f} s at "
                f"--delay {a.delay}; the crawl may finish before the faults end",
                flush=True,
            )
        self.cluster.start()
        self.t0 = time.monotonic()
        self.web = subprocess.Popen(
            [
                sys.executable,
                str(HERE / "soak_web.py"),
                *("--hosts", str(a.hosts), "--pages", str(a.pages), "--seed", str(a.seed)),
                *("--port", str(self.port), "--log", str(self.log)),
                *("--t0", str(self.t0), "--seconds", str(self.seconds)),
            ],
            stderr=(self.work / "web.err").open("wb"),
        )
        wait_port(self.port, timeout=300)
        seeds = self.work / "seeds.txt"
        seeds.write_text("".join(f"http://site{h}.sim:{self.port}/\n" for h in range(a.hosts)))
        self.t0 = time.monotonic()
        self.add_node("n1", seeds)
        time.sleep(2.0)
        for i in range(2, a.nodes + 1):
            self.add_node(f"n{i}", None)
        threading.Thread(target=self.sampler, daemon=True).start()
        for at, action in self.schedule():
            time.sleep(max(0.0, self.t0 + at - time.monotonic()))
            action()
        time.sleep(max(0.0, self.t0 + self.seconds - time.monotonic()))
        self.fault_end = time.monotonic()
        print(f"[{self.fault_end - self.t0:7.1f}s] faults over; waiting for the crawl to finish")
        deadline = time.monotonic() + a.drain_minutes * 60
        while time.monotonic() < deadline:
            if not any(n.running for n in self.nodes.values()):
                break
            time.sleep(2.0)
        self.finished = not any(n.running for n in self.nodes.values())
        self.end = time.monotonic()

    def stop(self) -> None:
        self.done.set()
        for node in self.nodes.values():
            if node.proc is not None and node.proc.poll() is None:
                os.killpg(node.proc.pid, signal.SIGCONT)
                node.proc.send_signal(signal.SIGTERM)
                try:
                    node.proc.wait(30)
                except subprocess.TimeoutExpired:
                    node.proc.kill()
                    node.proc.wait()
            if node.proc is not None:
                node.exits.append(node.proc.returncode)
        if self.web is not None:
            self.web.send_signal(signal.SIGTERM)
            self.web.wait(60)

    def final_redis(self) -> dict[str, Any]:
        return self.sample()


def save_state(soak: Any, final: dict[str, Any], out: Path) -> None:
    """What the report reads from a run, so that it can be made again from the work
    directory alone (``python benchmarks/soak_report.py WORK``)."""
    state = {
        "args": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(soak.args).items()},
        "port": soak.port,
        "budget": soak.budget,
        "t0": soak.t0,
        "end": soak.end,
        "finished": soak.finished,
        "faults": [[f.at, str(f.kind), f.target, f.until] for f in soak.faults],
        "exits": {name: n.exits for name, n in soak.nodes.items()},
        "samples": soak.samples,
        "final": final,
    }
    out.write_text(json.dumps(state))


def frontier_urls(client: Any, crawl: str) -> Iterator[str]:
    """The URLs still in the crawl's frontier (queued, leased or parked), read from the
    keys of the layout in ``headway/frontier/redis/keys.py``: a queued URL is ``M+R`` (a
    15-digit member, then its JSON record) in one of its host's level lists
    (``lv:H|P``) or its waiting set (``nb:H``); a leased or parked one is a record in the
    shard's ``urls`` hash."""
    width = len(member(0))
    for key in client.scan_iter(match=f"hw:{{{crawl}:*}}:*", count=1000):
        kind = key.split("}:", 1)[1]
        if kind.startswith("lv:") and "|" in kind:
            entries = client.lrange(key, 0, -1)
        elif kind.startswith("nb:"):
            entries = client.zrange(key, 0, -1)
        elif kind == "urls":
            yield from (json.loads(r)[0] for r in client.hvals(key))
            continue
        else:
            continue
        yield from (json.loads(e[width:])[0] for e in entries)


def dump_frontier(cluster: RedisCluster, crawl: str, out: Path) -> None:
    """The URLs still in the crawl's frontier, one a line (``frontier_urls``)."""
    nodes = [ClusterNode("127.0.0.1", s.port) for s in cluster.servers if s.cli("PING")]
    client = redis.RedisCluster(startup_nodes=nodes, decode_responses=True)
    try:
        out.write_text("".join(url + "\n" for url in frontier_urls(client, crawl)))
    finally:
        client.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=60.0, help="length of the fault phase")
    ap.add_argument("--drain-minutes", type=float, default=None, help="then wait at most this")
    ap.add_argument("--hosts", type=int, default=50_000)
    ap.add_argument("--pages", type=int, default=500_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--nodes", type=int, default=4)
    ap.add_argument("--delay", type=float, default=0.05, help="--delay of the nodes")
    ap.add_argument("--shard-ttl", type=float, default=5.0)
    ap.add_argument("--shards", type=int, default=64)
    ap.add_argument("--max-depth", type=int, default=50)
    ap.add_argument("--sample", type=float, default=5.0, help="seconds between samples")
    ap.add_argument("--work", type=Path, default=None, help="work directory (default: a temp)")
    ap.add_argument("--result", type=Path, default=HERE.parent / "docs" / "soak.json")
    ap.add_argument("--plot", type=Path, default=HERE.parent / "docs" / "soak.png")
    args = ap.parse_args()
    if args.drain_minutes is None:
        args.drain_minutes = max(5.0, args.minutes / 2)
    work = args.work or Path(tempfile.mkdtemp(prefix="headway-soak-"))
    work.mkdir(parents=True, exist_ok=True)
    soak = Soak(args, work)
    try:
        soak.run()
        final = soak.final_redis()
    finally:
        soak.stop()
        try:
            dump_frontier(soak.cluster, soak.crawl, work / "frontier.txt")
        finally:
            soak.cluster.stop()
    save_state(soak, final, work / "state.json")  # first: the report can be made again
    import soak_report

    result = soak_report.report(soak, final)
    args.result.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result["summary"], indent=1))
    soak_report.plot(soak, result, args.plot)
    print(f"result {args.result}; plot {args.plot}; work directory {work}")


if __name__ == "__main__":
    main()
