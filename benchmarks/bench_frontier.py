"""Benchmark of the SQLite frontier as the runtime drives it, at growing sizes.

Admits URLs over ``--hosts`` hosts in batches of ``--batch`` (as pages' links arrive) up
to each of ``--sizes`` in turn (default 1 million). At each size it measures:

- admission: the rate of the last ``--probe`` URLs admitted to reach the size;
- lease+complete: ``--probe-settle`` URLs leased and completed as the scheduler does
  (ready hosts, 2 URLs per host, then a politeness gap; completions in batches of 50,
  each carrying 100 links of which 1 in 5 is new, so the seen check runs on both paths);
- the database's bytes per discovered URL (the file and its WAL), and the process's
  current and peak RSS (the in-memory Bloom filter is the part that grows: about 1.8
  bytes per seen URL at 0.1 % error).

Then it reopens the store to time the Bloom filter's load. A fill to 100 million takes
hours: with ``--dir`` the run notes its place in ``fill.json`` there (every million URLs
and after each size), and the same command run again on that directory goes on from it
(the URLs admitted after the last note are admitted again and found seen). Usage:
``python benchmarks/bench_frontier.py [--sizes 1000000,10000000] [--dir D] [--cache-mib N]
[--max-queued N]``.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import resource
import tempfile
import time
from pathlib import Path

from headway.frontier.sqlite import SqliteFrontier
from headway.frontier.store import Completion, FrontierLimits, Settle, UrlEntry


def fp_of(url: str) -> int:
    return int.from_bytes(hashlib.blake2b(url.encode(), digest_size=8).digest(), "big", signed=True)


def make(i: int, hosts: int, salt: str = "") -> UrlEntry:
    """URL ``i``; like a page's links, 4 in 5 of a batch of 500 share one host."""
    h = (i // 500 * 7919) % hosts if i % 5 else (i // 5) % hosts
    host = f"host{h}.example"
    url = f"https://{host}/section/{i // hosts}/page-{i}{salt}.html"
    return UrlEntry(url=url, host=host, depth=1 + i % 4, priority=i % 7, fp=fp_of(url))


#: URLs admitted between two notes of the fill's place
NOTE_EVERY = 1_000_000


def note_place(where: Path, done: int, now: float, salt: int) -> None:
    """Note how far the fill got (``fill.json``; written whole, then renamed)."""
    tmp = where / "fill.json.tmp"
    tmp.write_text(json.dumps({"done": done, "now": now, "salt": salt}))
    tmp.replace(where / "fill.json")


def rss_mib() -> tuple[float, float]:
    """(current, peak) resident set size of this process in MiB."""
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return pages * resource.getpagesize() / 2**20, peak


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1000000", help="comma-separated sizes to measure at")
    ap.add_argument("--hosts", type=int, default=10_000)
    ap.add_argument("--batch", type=int, default=500)
    ap.add_argument("--probe", type=int, default=200_000, help="admissions timed per size")
    ap.add_argument("--probe-settle", type=int, default=20_000, help="settles timed per size")
    ap.add_argument("--bloom-capacity", type=int, default=0, help="default: the largest size")
    ap.add_argument("--dir", type=Path, default=None)
    ap.add_argument(
        "--cache-mib", type=int, default=0, help="SQLite page cache (default: the frontier's)"
    )
    ap.add_argument(
        "--max-queued", type=int, default=0,
        help="URLs queued at most (default: the frontier's, 10 million; past it new URLs "
        "are seen and shed, not queued)",
    )  # fmt: skip
    args = ap.parse_args()
    sizes = sorted(int(s) for s in args.sizes.split(","))
    where = args.dir or Path(tempfile.mkdtemp(prefix="bench-frontier-"))
    db = where / "frontier.db"
    # the filter is configured for the largest size (as a crawl of that size would be),
    # and grows 16-fold from 65,536 up to it as the seen set does
    limits = FrontierLimits(bloom_capacity=max(1_000, *sizes, args.bloom_capacity))
    if args.max_queued:
        limits = dataclasses.replace(limits, max_queued=args.max_queued)
    cache = {"cache_size_kib": args.cache_mib * 1024} if args.cache_mib else {}
    store = SqliteFrontier(db, limits, node_id="bench", **cache)

    done = 0
    now = 1.0
    salt = 0
    place = where / "fill.json"
    if place.exists():
        noted = json.loads(place.read_text())
        done, now, salt = int(noted["done"]), float(noted["now"]), int(noted["salt"])
        print(f"going on from {done:,} URLs admitted ({place})", flush=True)
    for size in sizes:
        if size <= done:
            continue  # measured by an earlier run on this directory
        start = time.perf_counter()
        probe_from = max(done, size - args.probe)
        t0 = c0 = 0.0
        for first in range(done, size, args.batch):
            if first >= probe_from and not t0:
                t0, c0 = time.perf_counter(), time.process_time()
            store.add([make(i, args.hosts) for i in range(first, min(size, first + args.batch))], 0)
            after = first + args.batch
            if args.dir and after < size and first // NOTE_EVERY != after // NOTE_EVERY:
                note_place(where, after, now, salt)
        add_s, add_cpu = time.perf_counter() - t0, time.process_time() - c0
        probed = size - probe_from
        fill_s = time.perf_counter() - start
        done = size

        settled = 0
        pending: list[Completion] = []
        t1, c1 = time.perf_counter(), time.process_time()
        while settled < args.probe_settle:
            for host, _ in store.ready_hosts(now, 100):
                for u in store.lease_many([(host, 2)], now, 60.0):
                    pending.append(Completion(u.id, Settle.DONE))
                store.set_host_ready_at(host, now + 1.0)  # the politeness gap
                if len(pending) >= 50:
                    links = []
                    for j in range(100):
                        if j % 5 == 0:
                            salt += 1
                            links.append(make(salt, args.hosts, salt=f"-new{salt}"))
                        else:
                            links.append(make((salt * 31 + j) % size, args.hosts))
                    store.complete(pending, links, now)
                    settled += len(pending)
                    pending = []
            now += 1.0
        lc_s, lc_cpu = time.perf_counter() - t1, time.process_time() - c1
        counts = store.counts()
        disk = sum(p.stat().st_size for p in where.glob("frontier.db*"))
        rss, peak = rss_mib()
        print(
            f"at {size:,} URLs (filled in {fill_s:,.0f} s): admission {probed / add_s:,.0f} URLs/s"
            f" ({probed / add_cpu:,.0f} per CPU-s); lease+complete {settled / lc_s:,.0f} URLs/s"
            f" ({settled / lc_cpu:,.0f} per CPU-s); disk {disk / 2**20:,.0f} MiB ="
            f" {disk / counts.seen:.0f} bytes per seen URL; RSS {rss:,.0f} MiB (peak"
            f" {peak:,.0f}); seen {counts.seen:,}, queued {counts.queued:,}",
            flush=True,
        )
        if args.dir:
            note_place(where, done, now, salt)
    counts = store.counts()
    store.close()
    t0 = time.perf_counter()
    SqliteFrontier(db, limits, node_id="bench", **cache).close()
    print(
        f"reopen (Bloom filter of {counts.seen:,} fingerprints): {time.perf_counter() - t0:.1f} s"
    )


if __name__ == "__main__":
    main()
