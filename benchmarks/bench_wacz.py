"""What ``headway export --wacz`` costs beside reading the crawl's WARC files once.

Crawls the simulated web (``--hosts`` x ``--pages``, pages sized like the web's with
``--pages-mix real``) into a crawl directory (or takes ``--crawl DIR``), then times, each
``--repeat`` times (the page cache warm, as both read the same files):

- ``read``: every record of every WARC file read once with warcio (headers parsed,
  payload read to its end): what any tool that looks at a crawl pays at least;
- ``export``: ``headway export DIR --wacz OUT`` as a process, whole.

Prints the medians, their ratio, the pages packaged and the export's peak RSS.
Usage: ``python benchmarks/bench_wacz.py --repeat 5 [--hosts 20] [--pages 150]
[--crawl DIR]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import checkout_path  # noqa: F401  (the checkout's tests/ on sys.path)
from tests.integration.helpers import ThreadedSimWeb, crawl_argv
from warcio.archiveiterator import ArchiveIterator

from headway.testing.simweb import HostSpec, SimWebSpec


def read_once(crawl: Path) -> int:
    records = 0
    for warc in sorted((crawl / "warc").glob("*.warc.gz")):
        with warc.open("rb") as fh:
            for rec in ArchiveIterator(fh):
                stream = rec.content_stream()
                while stream.read(1 << 16):
                    pass
                records += 1
    return records


def run_export(crawl: Path, wacz: Path) -> tuple[int, str, float]:
    """``headway export`` as a process: its exit status, output and peak RSS (MiB)."""
    argv = [sys.executable, "-m", "headway.cli", "export", str(crawl), "--wacz", str(wacz)]
    with tempfile.TemporaryFile("w+") as fh:
        proc = subprocess.Popen(argv, stdout=fh, stderr=subprocess.STDOUT)
        _pid, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        fh.seek(0)
        return proc.returncode, fh.read().strip(), usage.ru_maxrss / 1024


def make_crawl(out: Path, hosts: int, pages: int, mix: str) -> None:
    spec = SimWebSpec(
        hosts=hosts, host_spec=HostSpec(pages=pages, links_per_page=8, page_mix=mix), seed=3
    )
    with ThreadedSimWeb(spec) as web:
        seeds = out.parent / "seeds.txt"
        seeds.write_text("\n".join(web.seeds()) + "\n")
        done = subprocess.run(crawl_argv(seeds, out, "--delay", "0"), capture_output=True)
        if done.returncode != 0:
            sys.exit(done.stderr.decode())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--hosts", type=int, default=20)
    ap.add_argument("--pages", type=int, default=150)
    ap.add_argument("--pages-mix", default="real")
    ap.add_argument("--crawl", type=Path, default=None)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        crawl = args.crawl
        if crawl is None:
            crawl = Path(tmp) / "crawl"
            make_crawl(crawl, args.hosts, args.pages, args.pages_mix)
        size = sum(p.stat().st_size for p in (crawl / "warc").glob("*.warc.gz"))
        reads, exports = [], []
        out = ""
        rss = 0.0
        for i in range(args.repeat):
            t = time.perf_counter()
            records = read_once(crawl)
            reads.append(time.perf_counter() - t)
            wacz = Path(tmp) / f"out{i}.wacz"
            t = time.perf_counter()
            code, out, peak = run_export(crawl, wacz)
            exports.append(time.perf_counter() - t)
            if code != 0:
                sys.exit(out)
            rss = max(rss, peak)
            wacz.unlink()
        read, export = statistics.median(reads), statistics.median(exports)
        print(f"WARC files: {size / 2**20:.1f} MiB, {records} records")
        print(f"read once (warcio): {read:.2f} s; export: {export:.2f} s; {export / read:.2f}x")
        print(f"export: {out}")
        print(f"peak RSS of the export process: {rss:.0f} MiB")


if __name__ == "__main__":
    main()
