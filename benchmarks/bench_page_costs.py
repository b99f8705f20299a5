"""What one page costs in the parts headway runs per page, on the pages ``headway bench``
crawls (80 KB, 280 links, a tenth of them to other hosts).

Run: ``.venv/bin/python benchmarks/bench_page_costs.py [--pages 40] [--trials 5]
[--before-src OLD/src] [--pages-mix real]``. With ``--pages-mix real`` the pages are
those of ``headway bench --pages-mix real`` (sizes drawn from the real mix, links growing
with size; ``headway/testing/pagemix.py``), each cut at 256 KiB, the crawler's default
``max_body``, as the crawler cuts it. Each part is timed in process CPU time over the same pages,
best of ``trials``: ``parse_page`` (everything a parser process does with a page),
within it the SimHash of the visible text and the link resolution, and the WARC
records of the exchange (``WarcWriter.write_exchange``: headers, digests, gzip). With
``--before-src`` the same script runs first with the crawler from that source tree (in a
child process, same pages) and a before/after table is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

PORT = 8000


MAX_BODY = 256 * 1024


def pages(count: int, links: int, page_kb: int, mix: str = "fixed") -> list[tuple[str, bytes]]:
    from headway.testing.features import Renderer
    from headway.testing.simweb import HostSpec, SimWebSpec

    spec = SimWebSpec(
        hosts=50,
        host_spec=HostSpec(pages=40, links_per_page=links, page_bytes=page_kb * 1024, page_mix=mix),
        seed=1,
        suffix="sim.test",
    )
    origins = [f"http://{spec.host_name(i)}:{PORT}" for i in range(spec.hosts)]
    renderer = Renderer(spec, origins)
    out = []
    for n in range(count):
        host, path = n % spec.hosts, f"/p/{n % 40}"
        body = renderer.respond(host, path).body
        out.append((origins[host] + path, body[:MAX_BODY] if mix == "real" else body))
    return out


def best(fn: Callable[[], object], n: int, trials: int) -> float:
    """Best CPU ms per call over ``trials`` runs of ``n`` calls."""
    fn()
    times = []
    for _ in range(trials):
        t0 = time.process_time()
        for _ in range(n):
            fn()
        times.append((time.process_time() - t0) / n * 1000)
    return min(times)


def measure(count: int, trials: int, mix: str = "fixed") -> dict[str, float]:
    from headway.fetch.result import FetchResult
    from headway.parse.page import parse_page, parse_tree
    from headway.parse.simhash import simhash, visible_text
    from headway.policy.outcome import Outcome
    from headway.store.warc import WarcWriter, payload_digest
    from headway.urls.canonical import canonicalize_links

    corpus = pages(count, 280, 64, mix)
    texts = [visible_text(parse_tree(body.decode(errors="replace"))) for _, body in corpus]
    hrefs = []
    for url, body in corpus:
        tree = parse_tree(body.decode(errors="replace"))
        hrefs.append((url, [n.attributes.get("href") or "" for n in tree.css("a[href]")]))
    results = [
        FetchResult(
            url=url,
            started_at=time.time(),
            duration=0.01,
            outcome=Outcome.OK,
            status=200,
            reason="OK",
            request_headers=(("User-Agent", "bench/1"), ("Accept", "text/html")),
            response_headers=(
                ("Content-Type", "text/html; charset=utf-8"),
                ("Content-Length", str(len(body))),
            ),
            raw_body=body,
            body=body,
            ip="127.0.0.1",
        )
        for url, body in corpus
    ]
    digests = [payload_digest(r.raw_body) for r in results]
    out: dict[str, float] = {}
    # the parser processes keep the hashes of words and the links resolved from one page
    # to the next; the pages here repeat from trial to trial, so each part is also timed
    # with those caches emptied before every page (a crawl's first pages, or pages that
    # share nothing), the worst case (trees without the caches: no "cold" rows)
    from headway.parse import simhash as simhash_module
    from headway.urls import canonical as canonical_module

    forget_words = getattr(simhash_module, "clear_word_cache", None)
    forget_links = getattr(canonical_module, "clear_resolved_cache", None)

    def each(fn: Callable[[int], object]) -> Callable[[], object]:
        return lambda: [fn(i) for i in range(count)]

    def cold(fn: Callable[[int], object], *forget: Callable[[], None]) -> Callable[[int], object]:
        def run(i: int) -> object:
            for f in forget:
                f()
            return fn(i)

        return run

    out["parse_page (whole parser work)"] = (
        best(
            each(lambda i: parse_page(corpus[i][0], corpus[i][1], content_type="text/html")),
            1,
            trials,
        )
        / count
    )
    out["  SimHash of the visible text"] = (
        best(each(lambda i: simhash(texts[i])), 1, trials) / count
    )
    out["  link resolution (canonicalize_links)"] = (
        best(each(lambda i: canonicalize_links(*hrefs[i])), 1, trials) / count
    )
    if forget_words is not None and forget_links is not None:

        def page(i: int) -> object:
            return parse_page(corpus[i][0], corpus[i][1], content_type="text/html")

        out["parse_page, caches emptied per page"] = (
            best(each(cold(page, forget_words, forget_links)), 1, trials) / count
        )
        out["  SimHash, word cache emptied"] = (
            best(each(cold(lambda i: simhash(texts[i]), forget_words)), 1, trials) / count
        )
        out["  link resolution, cache emptied"] = (
            best(each(cold(lambda i: canonicalize_links(*hrefs[i]), forget_links)), 1, trials)
            / count
        )
    with tempfile.TemporaryDirectory() as tmp:
        writer = WarcWriter(Path(tmp), max_file_size=1 << 40)
        out["WARC records (write_exchange)"] = (
            best(
                each(lambda i: writer.write_exchange(results[i], None, digest=digests[i])),
                1,
                trials,
            )
            / count
        )
        writer.close()
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--pages", type=int, default=40)
    p.add_argument("--trials", type=int, default=5)
    p.add_argument("--before-src", type=Path)
    p.add_argument("--pages-mix", choices=["fixed", "real"], default="fixed")
    p.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.json:
        print(json.dumps(measure(args.pages, args.trials, args.pages_mix)))
        return 0
    before: dict[str, Any] = {}
    if args.before_src is not None:
        env = {**os.environ, "PYTHONPATH": str(args.before_src.resolve())}
        argv = [sys.executable, __file__, "--json", "--pages", str(args.pages)]
        argv += ["--trials", str(args.trials), "--pages-mix", args.pages_mix]
        done = subprocess.run(argv, env=env, capture_output=True, text=True, check=True)
        before = json.loads(done.stdout)
    after = measure(args.pages, args.trials, args.pages_mix)
    kb = sum(len(body) for _, body in pages(args.pages, 280, 64, args.pages_mix)) / args.pages
    print(
        f"CPU ms per page, best of {args.trials} trials over {args.pages} pages "
        f"({args.pages_mix} mix, {kb / 1000:.0f} KB a page on average)"
    )
    head = f"{'part':<40}{'before':>9}{'after':>9}{'after/before':>14}"
    print(head if before else f"{'part':<40}{'ms':>9}")
    for name, ms in after.items():
        if before and name in before:
            b = before[name]
            print(f"{name:<40}{b:>9.3f}{ms:>9.3f}{ms / b:>13.2f}x")
        else:
            print(f"{name:<40}{ms:>9.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
