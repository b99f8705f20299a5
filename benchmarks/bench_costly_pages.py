"""Peak memory of the whole process tree under the costly-page attack.

Serves the hostile web (64 hosts whose one page is about 20 KB of gzip decoding to 8 MB
of links, plus 2 control hosts of 21 pages) and crawls it with ``headway crawl`` as a
subprocess, sampling the resident memory of the crawler and every descendant (parser
processes included) from /proc every 50 ms. Prints the peak, the time, how the crawl
stopped, whether the control hosts finished and their pace (gaps between their
requests, as the server saw them). With ``--fanout N`` every costly page links to N more
costly pages of its host, so the costly hosts stay busy until ``--max-duration`` (30 s
unless given after ``--``): the control hosts' pace shows how they share the parser.
Usage: ``python benchmarks/bench_costly_pages.py [--hosts 64] [--decoded 8000000]
[--fanout 0] [-- --delay 0.2 ...]``.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import checkout_path  # noqa: F401  (tests/support on sys.path)
from tests.support.hostile import HostileSpec, HostileWeb

from headway.bench.proctree import TreeMemorySampler

UA = "costlybench/1.0 (+https://example.org/bench)"


class ServedInThread:
    def __init__(self, web: HostileWeb) -> None:
        self.web = web
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_until_complete(self.web.start())
        self.ready.set()
        self.loop.run_forever()

    def __enter__(self) -> HostileWeb:
        self.thread.start()
        self.ready.wait(30)
        return self.web

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self.web.stop(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


def crawl_command(web: HostileWeb, seeds: Path, out: Path, *extra: str) -> list[str]:
    argv = [sys.executable, "-m", "headway.cli", "crawl", str(seeds), "--out", str(out)]
    argv += ["--user-agent", UA, "--allow-loopback", "--quiet"]
    for rule in web.resolve_rules():
        argv += ["--resolve", rule]
    return argv + list(extra)


def run(hosts: int, decoded: int, fanout: int, out: Path, extra: list[str]) -> dict[str, object]:
    spec = HostileSpec(
        control_hosts=2,
        control_pages=21,
        costly_hosts=hosts,
        costly_decoded=decoded,
        costly_fanout=fanout,
        attacks=False,
    )
    if fanout and "--max-duration" not in extra:
        extra = [*extra, "--max-duration", "30"]
    with ServedInThread(HostileWeb(spec)) as web:
        seeds = out.parent / "seeds.txt"
        seeds.write_text("\n".join(web.seeds()) + "\n")
        argv = crawl_command(web, seeds, out, *extra)
        t0 = time.monotonic()
        proc = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True)
        with TreeMemorySampler(proc.pid) as sampler:
            _, err = proc.communicate(timeout=300)
        seconds = time.monotonic() - t0
        starts = {
            h: [r.start for r in web.log if r.host == f"{h}.hostile" and r.path != "/robots.txt"]
            for h in web.control_hosts()
        }
    control = {h: len(s) for h, s in starts.items()}
    gaps = {h: [b - a for a, b in itertools.pairwise(s)] for h, s in starts.items()}
    pace = {
        h: {"median_gap_s": round(statistics.median(g), 2), "max_gap_s": round(max(g), 2)}
        for h, g in gaps.items()
        if g
    }
    summary = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()][-1]
    return {
        "exit": proc.returncode,
        "seconds": round(seconds, 1),
        "peak_tree_mib": round(sampler.peak / 2**20, 1),
        "samples": sampler.samples,
        "control_pages": control,
        "control_pace": pace,
        "hostile": summary.get("hostile"),
        "stderr": err.strip()[-500:],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--hosts", type=int, default=64)
    ap.add_argument("--decoded", type=int, default=8_000_000)
    ap.add_argument("--fanout", type=int, default=0, help="costly pages each costly page links to")
    ap.add_argument("extra", nargs="*", help="further crawl flags (after --)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        result = run(args.hosts, args.decoded, args.fanout, Path(tmp) / "crawl", args.extra)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
