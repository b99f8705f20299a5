"""The SQLite frontier's memory is fixed by its settings, not by how many URLs it saw.

A child process replays a crawl's discovery (lease one URL per ready host, 100 links a
page, admission, one ``complete`` per 200 pages) up to ``SMALL`` and then ``LARGE``
discovered URLs, with a small Bloom filter and SQLite page cache, and reports its peak
RSS at both points. The growth between them must stay under ``BOUND_MIB``. The same
harness, holding every discovered URL in a Python set as a frontier that kept URLs in
memory would, must exceed the bound: that proves the bound can catch such a leak.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path
from tempfile import TemporaryDirectory

import pytest

from headway.frontier.sqlite import SqliteFrontier
from headway.frontier.store import Completion, FrontierLimits, Settle, UrlEntry
from headway.urls.scope import Scope, ScopeMode
from headway.work.admission import Admission

SMALL, LARGE = 15_000, 200_000
BOUND_MIB = 10.0
LIMITS = FrontierLimits(bloom_capacity=1_000_000)
CACHE_KIB = 1_024
PAGES = 200
ROOT = Path(__file__).resolve().parents[2]


def _peak_mib() -> float:
    """Peak RSS of this process image (VmHWM). ``ru_maxrss`` is not used: on Linux it keeps
    the high-water mark of the parent the child was forked from, so a child of a large
    pytest process would report the parent's size."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _url(host: int, i: int) -> str:
    return f"http://h{host}.example/p/{i}/news/world/item-title-words-{i:08d}.html"


def discover(small: int, large: int, hold: bool) -> dict[str, float]:
    """Run in the child: peak RSS (MiB) after ``small`` and after ``large`` discovered
    URLs; with ``hold`` every admitted URL is also kept in a Python set."""
    hosts = max(1, large // 50)
    seeds = [_url(k, k) for k in range(PAGES)]
    # admission's recent-URL set is bounded by its own setting; a small one fills up in
    # the small phase, so what is left to grow is the frontier
    admission = Admission(Scope.for_seeds(seeds, mode=ScopeMode.OPEN), recent_urls=2_000)
    kept: set[bytes] = set()
    peaks: list[float] = []
    with TemporaryDirectory() as tmp:
        frontier = SqliteFrontier(Path(tmp) / "f.db", LIMITS, node_id="n", cache_size_kib=CACHE_KIB)
        now = 1_000.0
        res = frontier.add(admission.admit(seeds, 0, None), now)
        found, next_id = res.added, len(seeds)
        for target in (small, large):
            while found < target:
                completions: list[Completion] = []
                entries: list[UrlEntry] = []
                for host, _ in frontier.ready_hosts(now, PAGES):
                    k = int(host[1 : host.index(".")])
                    for lease in frontier.lease_many([(host, 1)], now, 60.0):
                        completions.append(Completion(lease.id, Settle.DONE))
                        links = [_url(k, next_id + j) for j in range(40)]
                        links += [
                            _url((next_id * 7 + j) % hosts, next_id + 40 + j) for j in range(40)
                        ]
                        links += links[:20]  # links seen on the same page again
                        next_id += 80
                        entries += admission.admit(links, lease.depth + 1, lease.url)
                    frontier.set_host_ready_at(host, now + 30.0)
                res = frontier.complete(completions, entries, now)
                found += res.added + sum(res.shed.values())
                if hold:
                    kept.update(e.url.encode() for e in entries)  # a copy of each URL
                now += 1.0
            peaks.append(_peak_mib())
        frontier.close()
    return {"small_peak": peaks[0], "large_peak": peaks[1], "found": found, "kept": len(kept)}


def _run(hold: bool) -> subprocess.Popen[str]:
    code = (
        "import json; from tests.frontier.test_memory_bound import discover; "
        f"print(json.dumps(discover({SMALL}, {LARGE}, {hold})))"
    )
    return subprocess.Popen(
        [sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )


def _result(proc: subprocess.Popen[str]) -> dict[str, float]:
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0, "memory harness failed"
    result: dict[str, float] = json.loads(out.strip().splitlines()[-1])
    return result


@pytest.mark.serial  # measures memory
@pytest.mark.skipif(sys.platform != "linux", reason="ru_maxrss is in KiB on Linux only")
def test_frontier_memory_does_not_grow_with_discovered_urls() -> None:
    # both children at once: RSS is per process, and two cores halve the wall time
    procs = [_run(hold=False), _run(hold=True)]
    try:
        frontier, naive = (_result(p) for p in procs)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    for r in (frontier, naive):
        assert r["found"] >= LARGE
    growth = frontier["large_peak"] - frontier["small_peak"]
    naive_growth = naive["large_peak"] - naive["small_peak"]
    assert naive["kept"] >= LARGE - SMALL
    # sanity: keeping the URLs in Python memory is visible to this bound
    assert naive_growth > BOUND_MIB, f"harness cannot see a leak: {naive_growth:.1f} MiB"
    assert growth < BOUND_MIB, (
        f"frontier RSS grew {growth:.1f} MiB from {SMALL:,} to {LARGE:,} discovered URLs"
    )
