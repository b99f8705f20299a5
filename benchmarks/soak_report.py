"""The soak's figures: its request log read against the graph and the faults
(``headway.bench.soaklog``), its samples of the nodes and of Redis, as one JSON-able
result; and a plot of pages/s, queued URLs and memory over time with the faults marked."""

from __future__ import annotations

import bisect
import json
import re
import statistics
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from headway.bench.soaklog import (
    Explained,
    Fault,
    FaultKind,
    Request,
    coverage,
    duplicates,
    gap_violations,
    host_resume,
    page_requests,
    recovery,
    robots_violations,
    thaw_intrusions,
)
from headway.testing.graph import robots_allows, robots_body
from headway.testing.webshape import linked, reachable, shaped_web

_NODE = re.compile(r"; (n[0-9]+)\)")


def load_state(work: Path) -> tuple[Any, dict[str, Any]]:
    """A run as ``report`` and ``plot`` read it, from ``save_state``'s file."""
    state = json.loads((work / "state.json").read_text())
    soak = SimpleNamespace(
        args=SimpleNamespace(**state["args"]),
        log=work / "requests.jsonl",
        port=state["port"],
        budget=state["budget"],
        t0=state["t0"],
        end=state["end"],
        finished=state["finished"],
        faults=[
            Fault(at, FaultKind(kind), target, until) for at, kind, target, until in state["faults"]
        ],
        nodes={name: SimpleNamespace(exits=exits) for name, exits in state["exits"].items()},
        samples=state["samples"],
    )
    return soak, state["final"]


def read_log(path: Path) -> list[Request]:
    out = []
    with path.open() as f:
        for line in f:
            if not line.endswith("\n"):
                break
            r = json.loads(line)
            m = _NODE.search(r["u"])
            out.append(Request(r["a"], r["e"], r["h"], r["p"], r["s"], m[1] if m else "?", r["m"]))
    out.sort(key=lambda r: r.arrival)
    return out


def _index(host: str) -> int:
    return int(host.split(".")[0][4:])


def _by_name(samples: list[dict[str, Any]]) -> Counter[str]:
    """Commands of the masters by name over the run, summed over each server's lives."""
    total: Counter[str] = Counter()
    last: dict[str, tuple[str, dict[str, int]]] = {}
    for s in samples:
        for address, v in s["redis"].items():
            names = v.get("by_name", {})
            prev = last.get(address)
            if v["role"] == "master":
                for name, calls in names.items():
                    before = prev[1].get(name, 0) if prev and prev[0] == v["run_id"] else 0
                    total[name] += max(0, calls - before)
            last[address] = (v["run_id"], names)
    return total


def _redis_series(samples: list[dict[str, Any]]) -> tuple[list[float], int, float]:
    """Redis memory of the masters at each sample; and over the run, the commands and
    CPU seconds of every server, summed over each server's lives (a restarted server
    counts from zero again)."""
    mem = []
    last: dict[str, tuple[str, int, float]] = {}
    calls = 0
    cpu = 0.0
    for s in samples:
        mem.append(sum(v["mem"] or 0 for v in s["redis"].values() if v["role"] == "master"))
        for address, v in s["redis"].items():
            run, c, u = v["run_id"], v["calls"], v["cpu"]
            prev = last.get(address)
            if v["role"] == "master":
                if prev is not None and prev[0] == run and c >= prev[1]:
                    calls += c - prev[1]
                elif prev is None or prev[0] != run:
                    calls += c
            if prev is not None and prev[0] == run and u >= prev[2]:
                cpu += u - prev[2]
            elif prev is None or prev[0] != run:
                cpu += u
            last[address] = (run, c, u)
    return mem, calls, cpu


def report(soak: Any, final: dict[str, Any]) -> dict[str, Any]:
    a = soak.args
    log = read_log(soak.log)
    port = soak.port
    shape = shaped_web(a.hosts, a.pages, a.seed)

    def url_of(host: str, path: str) -> str:
        return f"http://{host}:{port}{path}"

    def graph_url(h: int, path: str, query: str) -> str:
        return f"http://site{h}.sim:{port}{path}" + (f"?{query}" if query else "")

    reach = reachable(shape, graph_url, max_depth=a.max_depth, host_budget=soak.budget)
    cov = coverage(log, url_of, reach.pages)
    # an unfinished crawl: a page never asked for is lost only if a fetched page linked
    # to it and it is not in the frontier either (else it is still to come)
    fetched_pages = {(_index(r.host), r.path) for r in page_requests(log) if r.status == 200}
    shown = {graph_url(h, p, "") for h, p in linked(shape, fetched_pages, max_depth=a.max_depth)}
    frontier_file = Path(soak.log).parent / "frontier.txt"
    in_frontier = set(frontier_file.read_text().split()) if frontier_file.exists() else set()
    lost = (cov.lost & shown) - in_frontier
    to_come = cov.lost - lost
    window = 60.0
    dups = duplicates(log, url_of, soak.faults, window)
    allows = {}

    def allowed(host: str, path: str) -> bool:
        h = _index(host)
        if h not in allows:
            allows[h] = robots_allows(shape.web.spec_for(h))
        return bool(allows[h](url_of(host, path), "soakbot"))

    def delay_for(host: str) -> float:
        spec = shape.web.spec_for(_index(host))
        # a Crawl-delay is only heard where robots.txt is served (2xx) and says it
        served = robots_body(spec) is not None and 200 <= spec.robots_status < 300
        return max(a.delay, spec.crawl_delay or 0.0) if served else a.delay

    gaps = gap_violations(log, delay_for, a.delay)
    robots = robots_violations(log, allowed)
    pages = [r for r in page_requests(log) if r.status == 200]
    times = [r.arrival for r in pages]
    faults = []
    for f in soak.faults:
        entry: dict[str, Any] = {
            "at_s": round(f.at - soak.t0, 1),
            "kind": str(f.kind),
            "target": f.target,
            "recovery_s": recovery(times, f.until or f.at),
        }
        if f.kind is FaultKind.NODE_KILL:
            waits = host_resume(log, f.target, f.at)
            entry["hosts_resumed"] = len(waits)
            entry["host_resume_median_s"] = round(statistics.median(waits), 1) if waits else None
            entry["host_resume_max_s"] = round(max(waits), 1) if waits else None
            again = [
                d
                for d in dups
                if d.why is Explained.NODE_KILLED
                and d.first.node == f.target
                and f.at - window <= d.first.arrival <= f.at
            ]
            entry["refetched"] = len(again)
            # how long before the kill the refetched pages had been fetched: the node's
            # pages fetched and not yet settled (parse and store queues, settle batches)
            entry["refetched_fetched_before_kill_max_s"] = (
                round(f.at - min(d.first.arrival for d in again), 1) if again else None
            )
        if f.kind is FaultKind.NODE_FREEZE:
            entry["frozen_s"] = round((f.until or f.at) - f.at, 1)
            intruding = thaw_intrusions(log, f, url_of)
            entry["urls_sent_after_thaw_that_others_took"] = len(intruding)
            entry["examples"] = [f"{r.host}{r.path}" for r in intruding[:5]]
        if f.kind is FaultKind.NODE_RESTART:
            first = next((r.arrival for r in log if r.node == f.target and r.arrival > f.at), None)
            entry["first_request_after_s"] = round(first - f.at, 1) if first else None
        faults.append(entry)
    span = (soak.end - soak.t0) if log else 0.0
    per_node: dict[str, list[float]] = defaultdict(list)
    for r in pages:
        per_node[r.node].append(r.arrival)
    nodes = {}
    for name, node_times in sorted(per_node.items()):
        cpu, count, rss = _node_cpu(soak.samples, name, node_times)
        nodes[name] = {
            "pages": len(node_times),
            "cpu_ms_per_page": round(1000 * cpu / count, 2) if count else None,
            "rss_mib_first_half_max": rss[0],
            "rss_mib_second_half_max": rss[1],
            "exit_codes": soak.nodes[name].exits if name in soak.nodes else [],
        }
    mem, calls, rcpu = _redis_series([*soak.samples, final])
    seen = [s["frontier"].get("seen") for s in soak.samples if s["frontier"].get("seen")]
    queued = [s["frontier"].get("queued", 0) for s in soak.samples if s["frontier"].get("seen")]
    fit = _fit(soak.samples)
    names = _by_name([*soak.samples, final])
    for sample in soak.samples:
        for v in sample["redis"].values():
            v.pop("by_name", None)
    why = Counter(str(d.why) for d in dups)
    summary = {
        "hosts": a.hosts,
        "pages_asked": a.pages,
        "reachable_pages": len(reach.pages),
        "hosts_over_budget": dict(reach.over_budget),
        "fetched": len(cov.fetched),
        "failed_after_retries": len(cov.failed),
        "lost": len(lost),
        "not_yet_fetched": len(to_come),
        "frontier_urls_at_end": len(in_frontier),
        "crawl_finished": soak.finished,
        "extra_urls_fetched": cov.extra,
        "trap_urls_fetched": len({url_of(r.host, r.path) for r in pages} & reach.traps),
        "fetched_twice": dict(why),
        "gap_violations": len(gaps),
        "robots_violations": len(robots),
        "requests": len(log),
        "pages_per_second": round(len(pages) / span, 1) if span else None,
        "wall_s": round(span, 1),
        "redis_commands_per_page": round(calls / len(pages), 1) if pages else None,
        "redis_cpu_ms_per_page": round(1000 * rcpu / len(pages), 3) if pages else None,
        "redis_memory_mib_end": round(mem[-1] / 2**20, 1) if mem else None,
        "redis_bytes_per_seen_url_end": round(mem[-1] / seen[-1]) if mem and seen else None,
        "redis_bytes_fit": fit,
        "queued_max": max(queued, default=0),
        "shard_queued_max": max(
            (s["frontier"].get("shard_queued_max") or 0 for s in soak.samples), default=0
        ),
        "redis_commands_per_page_by_name": {
            k: round(v / len(pages), 2) for k, v in names.most_common(12)
        }
        if pages
        else {},
    }
    return {
        "summary": summary,
        "faults": faults,
        "nodes": nodes,
        "examples": {
            "lost": sorted(lost)[:20],
            "failed": sorted(cov.failed)[:20],
            "unexplained_duplicates": [
                (
                    d.url,
                    d.first.node,
                    round(d.first.arrival - soak.t0, 1),
                    d.again.node,
                    round(d.again.arrival - soak.t0, 1),
                )
                for d in dups
                if d.why is Explained.UNEXPLAINED
            ][:20],
            "gap_violations": [
                (
                    g.host,
                    g.before.path,
                    g.before.node,
                    g.after.path,
                    g.after.node,
                    round(g.gap, 3),
                    g.delay,
                    g.overlap,
                    round(g.after.arrival - soak.t0, 1),
                )
                for g in gaps[:20]
            ],
            "robots_violations": [(r.host, r.path, r.node) for r in robots[:20]],
        },
        # path arguments by file name only: a result kept in docs/ names no machine's paths
        "args": {k: _portable(k, v) for k, v in vars(a).items()},
        "t0": soak.t0,
        "samples": soak.samples,
    }


def _node_cpu(
    samples: list[dict[str, Any]], name: str, times: list[float]
) -> tuple[float, int, tuple[float | None, float | None]]:
    """CPU seconds of a node's process tree between consecutive samples of one of its
    lives, the pages it fetched meanwhile, and its tree's largest RSS (MiB) in the first
    and second half of the run after the first tenth."""
    cpu = 0.0
    count = 0
    prev: tuple[float, int, float] | None = None
    rss: list[tuple[float, int]] = []
    for s in samples:
        n = s["nodes"].get(name)
        if n is None:
            prev = None
            continue
        rss.append((s["t"], n["rss"]))
        if prev is not None and prev[1] == n["pid"] and n["cpu"] >= prev[2]:
            cpu += n["cpu"] - prev[2]
            count += bisect.bisect_left(times, s["t"]) - bisect.bisect_left(times, prev[0])
        prev = (s["t"], n["pid"], n["cpu"])
    if not samples or not rss:
        return cpu, count, (None, None)
    t0, t1 = samples[0]["t"], samples[-1]["t"]
    warm = t0 + 0.1 * (t1 - t0)
    mid = (warm + t1) / 2
    first = [v for t, v in rss if warm <= t < mid]
    second = [v for t, v in rss if t >= mid]
    return (
        cpu,
        count,
        (
            round(max(first) / 2**20, 1) if first else None,
            round(max(second) / 2**20, 1) if second else None,
        ),
    )


def _portable(name: str, value: Any) -> str | None:
    """An argument as the result records it: the work directory left out, the result
    and plot files by name."""
    if name == "work":
        return None
    if name in ("result", "plot") and value is not None:
        return Path(str(value)).name
    return str(value)


def _fit(samples: list[dict[str, Any]]) -> dict[str, float] | None:
    """Least squares of Redis memory (masters) = base + a * seen + b * queued."""
    rows = []
    for s in samples:
        f = s["frontier"]
        if "seen" not in f:
            continue
        mem = sum(v["mem"] or 0 for v in s["redis"].values() if v["role"] == "master")
        masters = sum(1 for v in s["redis"].values() if v["role"] == "master")
        if masters == 3:
            rows.append((1.0, float(f["seen"]), float(f["queued"] + f["leased"]), float(mem)))
    if len(rows) < 5:
        return None
    try:
        import numpy as np
    except ImportError:  # installed on demand, like matplotlib (no dependency of headway)
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "numpy"], check=True)
        import numpy as np
    m = np.array(rows)
    coef, *_ = np.linalg.lstsq(m[:, :3], m[:, 3], rcond=None)
    return {
        "base_mib": round(float(coef[0]) / 2**20, 1),
        "bytes_per_seen": round(float(coef[1]), 1),
        "bytes_per_queued": round(float(coef[2]), 1),
    }


def _pyplot() -> Any:
    try:
        import matplotlib
    except ImportError:
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "matplotlib"], check=True)
        import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot(soak: Any, result: dict[str, Any], out: Path) -> None:
    plt = _pyplot()
    log = [r for r in read_log(soak.log) if r.status == 200 and r.path != "/robots.txt"]
    t0 = soak.t0
    end = max((r.arrival for r in log), default=t0 + 1) - t0
    width = 10.0
    bins = [i * width for i in range(int(end // width) + 1)]
    fig, axes = plt.subplots(3, 1, figsize=(11, 9), sharex=True)
    total = Counter(int((r.arrival - t0) // width) for r in log)
    axes[0].plot(bins, [total[i] / width for i in range(len(bins))], label="all nodes", lw=1.5)
    for name in sorted({r.node for r in log}):
        c = Counter(int((r.arrival - t0) // width) for r in log if r.node == name)
        axes[0].plot(bins, [c[i] / width for i in range(len(bins))], label=name, lw=0.7)
    axes[0].set_ylabel("pages/s (10 s)")
    axes[0].legend(loc="upper right", fontsize=7, ncol=3)
    samples = [s for s in soak.samples if "seen" in s["frontier"]]
    ts = [s["t"] - t0 for s in samples]
    axes[1].plot(ts, [s["frontier"]["queued"] for s in samples], label="queued URLs")
    axes[1].plot(ts, [s["frontier"]["seen"] for s in samples], label="seen URLs")
    axes[1].set_ylabel("URLs")
    axes[1].legend(loc="upper left", fontsize=7)
    st = [s["t"] - t0 for s in soak.samples]
    mem = [
        sum(v["mem"] or 0 for v in s["redis"].values() if v["role"] == "master") / 2**20
        for s in soak.samples
    ]
    if any(mem):
        axes[2].plot(st, mem, label="Redis masters", lw=1.5)
    for name in sorted(soak.nodes):
        # a gap (NaN) where the node was not running: no line across a kill
        rss = [
            s["nodes"][name]["rss"] / 2**20 if name in s["nodes"] else float("nan")
            for s in soak.samples
        ]
        axes[2].plot(st, rss, label=f"{name} RSS (tree)", lw=0.7)
    axes[2].set_ylabel("MiB")
    axes[2].set_xlabel("seconds")
    axes[2].legend(loc="upper left", fontsize=7, ncol=3)
    colors = {
        "node-kill": "red",
        "node-freeze": "purple",
        "redis-kill": "black",
        "redis-machine": "brown",
        "node-add": "green",
        "node-stop": "orange",
    }
    for f in result["faults"]:
        color = colors.get(f["kind"])
        if color is None:
            continue
        for ax in axes:
            ax.axvline(f["at_s"], color=color, ls="--", lw=0.8)
        axes[0].text(
            f["at_s"],
            axes[0].get_ylim()[1] * 0.95,
            f["kind"],
            rotation=90,
            fontsize=6,
            va="top",
            color=color,
        )
    s = result["summary"]
    fig.suptitle(
        f"soak: {s['hosts']} hosts, {s['reachable_pages']} reachable pages; "
        f"lost {s['lost']} (not yet fetched {s['not_yet_fetched']}), "
        f"gap violations {s['gap_violations']}, "
        f"robots violations {s['robots_violations']}",
        fontsize=9,
    )
    fig.tight_layout()
    fig.savefig(out, dpi=90)


if __name__ == "__main__":
    work = Path(sys.argv[1])
    run, last = load_state(work)
    figures = report(run, last)
    out = Path(sys.argv[2]) if len(sys.argv) > 2 else work / "result.json"
    out.write_text(json.dumps(figures, indent=1) + "\n")
    print(json.dumps(figures["summary"], indent=1))
    plot(run, figures, out.with_suffix(".png"))
