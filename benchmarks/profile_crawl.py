"""Where a crawl's CPU goes, by thread and stage: ``py-spy`` over the whole process tree
of one benchmark crawl, its samples grouped.

Run: ``.venv/bin/python benchmarks/profile_crawl.py [--client aiohttp|curl] [--scheme
https] [--pages-mix real] [--server-idle 0.5] [--gap 1] [--seconds 30] [--native]
[--raw FILE]``. The defaults are the real case of ``docs/performance.md`` (HTTPS, the
real page mix, the server closing connections idle 0.5 s, the 1 s gap, 50 hosts). A
``headway simweb`` (not profiled, warmed first) serves it, as ``headway bench`` does;
``py-spy record --subprocesses -r 250 --format raw`` (``--nonblocking`` unless
``--native``) records the crawl (``headway bench-crawl``). Printed: shares of busy
samples, the waits of idle threads (the pools' ``get``, the selectors, ``Condition.wait``,
a parser waiting for work) left out. py-spy is not a dependency: ``.venv/bin/pip install
py-spy``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from headway.bench.harness import BenchCase, _Server

#: Innermost frames of a thread that waits.
IDLE = (
    "_worker (concurrent/futures/thread.py",
    "_PollLikeSelector.select",
    "EpollSelector.select",
    "Condition.wait",
    "_watch (headway",
    "SimpleQueue.get",
    "Queue.get",
)
PARSER = (
    ("parser processes: SimHash", ("simhash.py",)),
    ("parser processes: link resolution", ("canonical", "links")),
    ("parser processes: lexbor parse and scan", ("parse_tree", "_scan", "selectolax")),
)
LOOP = (
    ("fetch, on the event loop", ("curl", "aiohttp", "fetch/")),
    ("pages to the parser processes", ("parsepool", "ParsePool")),
    (
        "scheduler, store and settle loops, pipeline",
        ("scheduler", "store_loop", "settle", "pipeline", "fetchjobs"),
    ),
)


def group(frames: list[str]) -> str | None:
    """The group of one stack (root first); None for a waiting thread."""
    inner = frames[-1] if frames else ""
    stack = ";".join(frames)
    if inner.startswith(IDLE) or ("Connection._recv" in inner and "Queue.get" in stack):
        return None
    if "<frozen importlib" in stack or "Node.__init__" in stack:
        return "start-up and imports"
    if "_process_worker" in stack or "parse_task" in stack:
        for name, marks in PARSER:
            if any(m in stack for m in marks):
                return name
        return "parser processes: receiving pages, answering"
    if "Queue._feed" in stack or "_ExecutorManagerThread" in stack:
        return "pages to the parser processes"
    if "StoreWriter" in stack or "headway/store/" in stack:
        return "store thread (WARC records, gzip, CDXJ, crawl log, flush)"
    if "Runner.run" not in stack:
        return "frontier thread" if "frontier/" in stack else "other"
    for name, marks in LOOP:
        if any(m in stack for m in marks):
            return name
    return (
        "event loop internals (uvloop, self)"
        if inner.startswith("Runner.run")
        else "event loop, other tasks"
    )


def shares(raw: Path) -> tuple[Counter[str], int]:
    counts: Counter[str] = Counter()
    for line in raw.read_text().splitlines():
        stack, _, n = line.rpartition(" ")
        name = group(stack.split(";")[1:])  # the first frame names the process
        if name is not None:
            counts[name] += int(n)
    return counts, sum(counts.values())


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--client", default="aiohttp", choices=["aiohttp", "curl"])
    p.add_argument("--scheme", default="https", choices=["http", "https"])
    p.add_argument("--pages-mix", default="real", choices=["fixed", "real"])
    p.add_argument("--server-idle", type=float, default=0.5)
    p.add_argument("--gap", type=float, default=1.0)
    p.add_argument("--seconds", type=float, default=30.0)
    p.add_argument("--native", action="store_true", help="C frames too (py-spy blocks)")
    p.add_argument("--raw", type=Path, help="keep py-spy's raw output here")
    args = p.parse_args()
    spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    if not Path(spy).exists():
        raise SystemExit("py-spy is not installed: .venv/bin/pip install py-spy")
    case = BenchCase(scheme=args.scheme, gap=args.gap, size=1, hosts=50, pages=40, links=280,
                     page_kb=64, parsers=0, seconds=args.seconds, mix=args.pages_mix,
                     idle=args.server_idle, client=args.client)  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="headway-profile-") as tmp_name:
        tmp = Path(tmp_name)
        raw = args.raw or tmp / "profile.raw"
        server = _Server(case, tmp / "pki" if case.scheme == "https" else None)
        try:
            config = {
                "port": server.port, "hosts": case.hosts, "scheme": case.scheme,
                "gap": case.gap, "parsers": 0, "out": str(tmp / "crawl"),
                "ca_file": str(server.ca_file) if server.ca_file else None,
                "seconds": case.seconds, "http_client": case.client,
            }  # fmt: skip
            argv = [spy, "record", "--subprocesses", "-r", "250", "--format", "raw"]
            argv += ["--native"] if args.native else ["--nonblocking"]
            argv += ["-o", str(raw), "--", sys.executable, "-m", "headway.cli"]
            argv += ["bench-crawl", json.dumps(config)]
            before = server.connections()
            run = subprocess.run(argv, capture_output=True, text=True, check=False)
            after = server.connections()
        finally:
            server.stop()
        last = [json.loads(x) for x in run.stdout.splitlines() if x.startswith('{"stats"')]
        if run.returncode != 0 or not last:
            raise SystemExit(f"the profiled crawl failed ({run.returncode}): {run.stderr[-800:]}")
        counts, busy = shares(raw)
    print(f"{case.name}: {after[0] - before[0] - 1} connections, {after[1] - before[1]} resumed")
    print(f"busy samples: {busy} over {float(last[-1]['seconds']):.1f} s of crawl")
    for name, n in counts.most_common():
        print(f"| {name} | {100 * n / busy:.1f}% |")


if __name__ == "__main__":
    main()
