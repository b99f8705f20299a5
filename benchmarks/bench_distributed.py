"""Benchmark of a shared crawl: 1, 2 or 3 nodes against one redis-server, crawling the
simulated web (served by its own process) with politeness gaps off.

For each node count: wall time, pages, pages/s, CPU seconds of the node process trees
(nodes and their parser processes, from the children's rusage), and from Redis' INFO:
commands (those run inside scripts included) and network bytes per crawled page and
per discovered URL, Redis CPU per 1,000 pages, and Redis memory per seen URL at the end.

Usage: ``python benchmarks/bench_distributed.py [--nodes 1,2,3] [--hosts 40] [--pages 100]``.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import checkout_path  # noqa: F401  (tests/support on sys.path)
import redis
from tests.support.argv import headway_argv
from tests.support.redisproc import RedisServer

from headway.bench.harness import free_port, wait_port

UA = "headway-bench/0.1 (+https://example.org/bench)"


def info(client: Any) -> dict[str, float]:
    i = client.info("all")
    return {
        "calls": sum(v["calls"] for k, v in i.items() if k.startswith("cmdstat_")),
        "scripts": i.get("cmdstat_evalsha", {}).get("calls", 0),
        "net": i["total_net_input_bytes"] + i["total_net_output_bytes"],
        "cpu": i["used_cpu_sys"] + i["used_cpu_user"],
        "mem": i["used_memory"],
        **{k[8:]: v["calls"] for k, v in i.items() if k.startswith("cmdstat_")},
    }


def node_argv(store: str, crawl: str, out: Path, seeds: Path | None) -> list[str]:
    return headway_argv(
        out,
        "--delay",
        "0",
        "--max-per-host",
        "8",
        "--concurrency",
        "64",
        "--shard-ttl",
        "3",
        user_agent=UA,
        seeds=seeds,
        store=store,
        crawl_id=crawl,
    )


def run(count: int, port: int, hosts: int, tmp: Path, server: RedisServer) -> dict[str, Any]:
    client = redis.Redis(port=server.port)
    crawl = f"bench{count}"
    seeds = tmp / f"seeds{count}.txt"
    seeds.write_text("".join(f"http://site{h}.sim:{port}/\n" for h in range(hosts)))
    before = info(client)
    cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    procs = [
        subprocess.Popen(
            node_argv(server.url, crawl, tmp / f"{crawl}-n{i}", seeds if i == 0 else None),
            stdout=subprocess.DEVNULL,
        )
        for i in range(count)
    ]
    for p in procs:
        p.wait(600)
    secs = time.perf_counter() - t0
    cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    after = info(client)
    pages = 0
    for i in range(count):
        for log in (tmp / f"{crawl}-n{i}").glob("crawl-*.log.jsonl"):
            for line in log.read_text().splitlines():
                entry = json.loads(line)
                if entry["status"] == 200 and not entry["url"].endswith("/robots.txt"):
                    pages += 1
    seen = sum(int(client.hget(f"hw:{{{crawl}:{s}}}:totals", "seen") or 0) for s in range(64))
    cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
    d = {k: after[k] - before.get(k, 0) for k in after}
    top = sorted(
        ((k, v) for k, v in d.items() if k not in ("calls", "scripts", "net", "cpu", "mem")),
        key=lambda kv: -kv[1],
    )[:8]
    return {
        "nodes": count,
        "seconds": round(secs, 1),
        "pages": pages,
        "pages_per_second": round(pages / secs, 1),
        "node_cpu_ms_per_page": round(cpu / max(1, pages) * 1000, 2),
        "redis_commands_per_page": round(d["calls"] / max(1, pages), 1),
        "redis_scripts_per_page": round(d["scripts"] / max(1, pages), 2),
        "redis_bytes_per_page": round(d["net"] / max(1, pages)),
        "redis_commands_per_seen_url": round(d["calls"] / max(1, seen), 1),
        "redis_bytes_per_seen_url": round(d["net"] / max(1, seen)),
        "redis_cpu_s_per_1000_pages": round(d["cpu"] / max(1, pages) * 1000, 3),
        "seen_urls": seen,
        "redis_memory_bytes_per_seen_url": round(d["mem"] / max(1, seen)),
        "commands_per_page_by_name": {k: round(v / max(1, pages), 2) for k, v in top},
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", default="1,2,3")
    ap.add_argument("--hosts", type=int, default=40)
    ap.add_argument("--pages", type=int, default=100, help="pages per host")
    ap.add_argument("--links", type=int, default=20)
    args = ap.parse_args()
    port = free_port()
    web = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "headway.cli",
            "simweb",
            "--hosts",
            str(args.hosts),
            "--pages",
            str(args.pages),
            "--links",
            str(args.links),
            "--port",
            str(port),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_port(port)
        with (
            tempfile.TemporaryDirectory(prefix="bench-dist-") as tmp,
            RedisServer(Path(tmp) / "redis") as server,
        ):
            for count in (int(n) for n in args.nodes.split(",")):
                print(json.dumps(run(count, port, args.hosts, Path(tmp), server)), flush=True)
    finally:
        web.terminate()
        web.wait(10)


if __name__ == "__main__":
    main()
