"""Memory of the SQLite frontier as a crawl's discovered URLs grow (100k vs 1M by default).

Each size runs in a fresh child process (peak RSS is per process). The child builds an
open-web ``Scope`` and an ``Admission``, opens a ``SqliteFrontier`` in a temporary
directory with the default ``FrontierLimits`` (Bloom filter for 10M URLs), and replays a
crawl's discovery: every round leases one URL from each of up to 200 ready hosts (the
scheduler's ``ready_hosts`` + ``lease``), turns each leased URL into a page of 100 links
(30 new on the page's host, 30 new on other hosts, 20 navigation links of the host, 20
links back to recently found URLs), admits them with ``Admission.admit`` and settles the
200 pages with one ``frontier.complete`` call (the node's settle batch). A fetched host
waits 30 simulated seconds (``set_host_ready_at``), so the crawl spreads over about N/50
hosts. It stops once N URLs were discovered (admitted to the seen set, shed included).

Reported per N: peak RSS (VmHWM), RSS right after the frontier opened (baseline:
interpreter, imports, Bloom bitmap), their difference (what discovering N URLs cost),
wall seconds, discovered URLs/s and the size of the database files; then the ratio of
the frontier-attributable peak at the largest size to the smallest.

Usage: ``python benchmarks/bench_memory.py [--sizes 100000 1000000] [--cache-kib K]
[--bloom-capacity C]`` (``--child N`` is the per-size mode the parent starts).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from headway.frontier.bloom import BloomFilter
from headway.frontier.sqlite import SqliteFrontier
from headway.frontier.store import Completion, FrontierLimits, Settle
from headway.urls.scope import Scope, ScopeMode
from headway.work.admission import Admission

PAGES_PER_BATCH = 200  # the node's default settle_batch
NEW_SAME_HOST, NEW_OTHER_HOSTS, NAV_LINKS, BACK_LINKS = 30, 30, 20, 20
NEW_PER_PAGE = NEW_SAME_HOST + NEW_OTHER_HOSTS  # at least; nav links are new once a host
HOST_GAP = 30.0  # simulated seconds a fetched host waits before its next fetch
SLUGS = ("news/world", "shop/items", "blog/posts", "docs/guide", "tags/archive")
NAV = ("about", "contact", "help", "login", "search", "sitemap", "terms", "privacy")


def rss_now_mib() -> float:
    """Resident set size of this process now (Linux ``/proc``), in MiB."""
    with open("/proc/self/statm") as f:
        resident_pages = int(f.read().split()[1])
    return resident_pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def rss_peak_mib() -> float:
    """Peak resident set size of this process image (VmHWM; ``ru_maxrss`` would carry
    the high-water mark of the parent this child was forked from)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def url_for(host: int, i: int) -> str:
    """A new URL of 60-90 characters, like an article or product link."""
    return f"http://h{host}.example/p/{i}/{SLUGS[i % 5]}/item-title-words-{i:08d}.html"


def nav_url(host: int, j: int) -> str:
    return f"http://h{host}.example/{NAV[j % 8]}/section-{j}/index.html"


def run_child(n: int, limits: FrontierLimits, cache_kib: int) -> dict[str, float]:
    """Discover ``n`` URLs through admission and the frontier; return the measurements."""
    hosts_total = max(1, n // 50)
    seeds = [url_for(k, k) for k in range(min(PAGES_PER_BATCH, hosts_total))]
    admission = Admission(Scope.for_seeds(seeds, mode=ScopeMode.OPEN))
    with tempfile.TemporaryDirectory(prefix="bench-memory-") as tmp:
        db = Path(tmp) / "frontier.db"
        frontier = SqliteFrontier(db, limits, node_id="bench", cache_size_kib=cache_kib)
        baseline = rss_now_mib()
        started = time.perf_counter()
        now = 1_000.0
        result = frontier.add(admission.admit(seeds, 0, None), now)
        discovered = result.added + sum(result.shed.values())
        next_id = len(seeds)
        next_other = 0
        recent: list[str] = list(seeds)
        while discovered < n:
            # the last round fetches only as many pages as the remaining URLs need
            pages = min(PAGES_PER_BATCH, (n - discovered) // NEW_PER_PAGE + 1)
            ready = frontier.ready_hosts(now, pages)
            if not ready:
                if frontier.next_ready_time() is None:
                    raise RuntimeError(f"frontier ran dry after {discovered} URLs")
                now += 1.0
                continue
            completions: list[Completion] = []
            entries = []
            for host, _ in ready:
                for lease in frontier.lease_many([(host, 1)], now, 60.0):
                    completions.append(Completion(lease.id, Settle.DONE))
                    k = int(host[1 : host.index(".")])
                    links = [url_for(k, next_id + j) for j in range(NEW_SAME_HOST)]
                    next_id += NEW_SAME_HOST
                    for _ in range(NEW_OTHER_HOSTS):
                        links.append(url_for((next_other * 7919) % hosts_total, next_id))
                        next_other += 1
                        next_id += 1
                    links.extend(nav_url(k, j) for j in range(NAV_LINKS))
                    links.extend(recent[-BACK_LINKS:])
                    recent = links[:NEW_SAME_HOST]
                    entries.extend(admission.admit(links, lease.depth + 1, lease.url))
                frontier.set_host_ready_at(host, now + HOST_GAP)
            result = frontier.complete(completions, entries, now)
            discovered += result.added + sum(result.shed.values())
            now += 1.0
        wall = time.perf_counter() - started
        counts = frontier.counts()
        frontier.close()
        db_bytes = sum(p.stat().st_size for p in Path(tmp).iterdir())
    return {
        "n": n,
        "discovered": discovered,
        "seen": counts.seen,
        "done": counts.done,
        "peak_mib": rss_peak_mib(),
        "baseline_mib": baseline,
        "wall_s": wall,
        "db_mib": db_bytes / 2**20,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    ap.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--cache-kib", type=int, default=64_000, help="SQLite page cache (KiB)")
    ap.add_argument("--bloom-capacity", type=int, default=FrontierLimits().bloom_capacity)
    args = ap.parse_args()
    limits = FrontierLimits(bloom_capacity=args.bloom_capacity)
    if args.child is not None:
        print(json.dumps(run_child(args.child, limits, args.cache_kib)))
        return

    print(
        f"frontier memory: bloom_capacity={limits.bloom_capacity:,}"
        f" bloom_error={limits.bloom_error} cache_size_kib={args.cache_kib:,}"
        f" settle batch={PAGES_PER_BATCH} pages x 100 links"
    )
    bloom_mib = BloomFilter(limits.bloom_capacity, limits.bloom_error).nbytes / 2**20
    print(
        f"bounds: Bloom bitmap {bloom_mib:.1f} MiB (allocated at open: in the baseline),"
        f" SQLite page cache up to {args.cache_kib / 1024:.1f} MiB (fills as the DB grows)"
    )
    rows = []
    for n in args.sizes:
        cmd = [sys.executable, __file__, "--child", str(n)]
        cmd += ["--cache-kib", str(args.cache_kib), "--bloom-capacity", str(args.bloom_capacity)]
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        rows.append(json.loads(out.strip().splitlines()[-1]))
    head = (
        f"{'discovered':>12} {'peak MiB':>9} {'baseline':>9} {'frontier':>9}"
        f" {'wall s':>7} {'URLs/s':>9} {'DB MiB':>8} {'fetched':>8}"
    )
    print(head)
    print("-" * len(head))
    for r in rows:
        print(
            f"{r['discovered']:>12,} {r['peak_mib']:>9.1f} {r['baseline_mib']:>9.1f}"
            f" {r['peak_mib'] - r['baseline_mib']:>9.1f} {r['wall_s']:>7.1f}"
            f" {r['discovered'] / r['wall_s']:>9,.0f} {r['db_mib']:>8.1f} {r['done']:>8,}"
        )
    if len(rows) >= 2:
        first, last = rows[0], rows[-1]
        a = first["peak_mib"] - first["baseline_mib"]
        b = last["peak_mib"] - last["baseline_mib"]
        print(
            f"frontier-attributable peak at {last['n']:,} / {first['n']:,}:"
            f" {b:.1f} / {a:.1f} MiB = {b / a if a > 0 else float('inf'):.2f}x"
        )


if __name__ == "__main__":
    main()
