"""Benchmark of the parse stage: ``parse_page`` on a ~140 KB page with ~300 links.

Run: ``.venv/bin/python benchmarks/bench_parse.py [--iterations N] [--links N]``.
Prints ms per page and microseconds per link, with the share spent in the lexbor parse
alone, so the link work can be compared with the speed budget in DESIGN.md.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable

from selectolax.lexbor import LexborHTMLParser

from headway.parse.page import parse_page

PAGE_URL = "https://www.example.com/news/2024/article-1234.html"
TARGET_BYTES = 140_000


def make_page(links: int, target_bytes: int = TARGET_BYTES, seed: int = 7) -> bytes:
    """A realistic-looking article page: nav, paragraphs with inline links, footer."""
    rng = random.Random(seed)
    words = "crawler politeness frontier lexbor parse fetch queue host robots archive".split()  # noqa: SIM905
    hrefs = []
    for i in range(links):
        kind = i % 6
        if kind == 0:
            hrefs.append(f"/section/{rng.randrange(50)}/story-{i}.html")
        elif kind == 1:
            hrefs.append(f"../related/{i}?utm_source=feed&id={i}&b=2")
        elif kind == 2:
            hrefs.append(f"https://cdn{rng.randrange(5)}.example.net/p/{i}#top")
        elif kind == 3:
            hrefs.append(f"page-{i}.html?page={rng.randrange(9)}&sort=asc")
        elif kind == 4:
            hrefs.append(f"//other{rng.randrange(20)}.example.org/a/{i}")
        else:
            hrefs.append("javascript:void(0)" if i % 12 == 5 else f"/tag/{words[i % 10]}")
    head = (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        "<title>Benchmark article</title><meta name=robots content='index, follow'>"
        "<link rel=stylesheet href=/s.css><script>var x = '<a href=/nope>';</script></head>"
        "<body><nav>"
    )
    parts = [head]
    for i, href in enumerate(hrefs):
        rel = " rel=nofollow" if i % 25 == 0 else ""
        text = " ".join(rng.choice(words) for _ in range(rng.randrange(3, 9)))
        parts.append(f'<p class="para">{text} <a href="{href}"{rel}>{text[:20]}</a> {text}</p>\n')
    size = sum(len(p) for p in parts)
    filler = "<div class=filler><span>" + " ".join(words) + "</span></div>\n"
    parts.extend(filler * max(0, (target_bytes - size) // len(filler)))
    parts.append("</nav></body></html>")
    return "".join(parts).encode()


def timed(fn: Callable[[], object], iterations: int) -> float:
    """Best per-call seconds over 5 rounds of ``iterations / 5`` calls.

    The best round is the least disturbed by other processes on a shared machine.
    """
    rounds = []
    per_round = max(1, iterations // 5)
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(per_round):
            fn()
        rounds.append((time.perf_counter() - start) / per_round)
    return min(rounds)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--iterations", type=int, default=500)
    parser.add_argument("--links", type=int, default=300)
    args = parser.parse_args(argv)

    body = make_page(args.links)
    result = parse_page(PAGE_URL, body, content_type="text/html; charset=utf-8")
    lexbor_only = timed(
        lambda: LexborHTMLParser(body.decode(), scripting=True).css("a[href]"), args.iterations
    )
    per_page = timed(
        lambda: parse_page(PAGE_URL, body, content_type="text/html; charset=utf-8"),
        args.iterations,
    )
    hrefs = max(1, result.hrefs_seen)
    out = sys.stdout
    out.write(f"page: {len(body) / 1000:.1f} KB, {result.hrefs_seen} hrefs, ")
    out.write(f"{len(result.links)} links, {result.nofollow_skipped} nofollow skipped\n")
    out.write(f"lexbor parse + a[href] only: {lexbor_only * 1e3:.3f} ms/page\n")
    out.write(f"parse_page:                  {per_page * 1e3:.3f} ms/page\n")
    out.write(f"per href (all-in):           {per_page * 1e6 / hrefs:.2f} us/link\n")
    beyond = (per_page - lexbor_only) * 1e6 / hrefs
    out.write(f"per href (beyond lexbor):    {beyond:.2f} us/link\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
