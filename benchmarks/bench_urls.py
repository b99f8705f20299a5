"""Per-link cost of the parser's URL hot path (canonicalize_many) and its neighbours.

Run: .venv/bin/python benchmarks/bench_urls.py [--links N] [--repeat R]
Prints microseconds per link for a synthetic but typical mix of hrefs (relative paths,
absolute links, queries with tracking parameters, fragments, escapes, mailto/javascript).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable

from headway.urls.canonical import canonicalize, canonicalize_many
from headway.urls.fingerprint import fingerprints
from headway.urls.surt import surt

BASE = "https://www.example-news.com/world/2024/05/17/some-long-article-slug.html"


def typical_hrefs(n: int, seed: int = 7) -> list[str]:
    """A reproducible mix of hrefs shaped like those on news and shop pages."""
    rng = random.Random(seed)
    words = ["news", "world", "sport", "about", "team", "shop", "item", "tag", "page", "a-b"]
    makers: list[tuple[float, Callable[[], str]]] = [
        (0.30, lambda: "/" + "/".join(rng.choices(words, k=rng.randint(1, 4)))),
        (0.15, lambda: "../" + rng.choice(words) + f"/{rng.randint(1, 9999)}.html"),
        (0.15, lambda: f"https://www.example-news.com/{rng.choice(words)}/{rng.randint(1, 999)}"),
        (0.08, lambda: f"https://cdn{rng.randint(1, 3)}.other-site.org/{rng.choice(words)}/"),
        (0.10, lambda: f"/search?q={rng.choice(words)}&page={rng.randint(1, 20)}"),
        (
            0.05,
            lambda: f"/{rng.choice(words)}?utm_source=tw&utm_medium=social&id={rng.randint(1, 99)}",
        ),
        (0.07, lambda: "#" + rng.choice(words)),
        (0.03, lambda: f"/{rng.choice(words)}/caf%C3%A9%7e{rng.randint(1, 99)}"),
        (
            0.04,
            lambda: rng.choice(["mailto:desk@example-news.com", "javascript:void(0)", "tel:+1"]),
        ),
        (0.03, lambda: f"//static.example-news.com/{rng.choice(words)}.css"),
    ]
    weights = [w for w, _ in makers]
    funcs = [f for _, f in makers]
    return [rng.choices(funcs, weights)[0]() for _ in range(n)]


def timed(label: str, n: int, repeat: int, fn: Callable[[], object]) -> None:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    sys.stdout.write(f"{label:<42} {best / n * 1e6:8.2f} us/link\n")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--links", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    hrefs = typical_hrefs(args.links)
    links = canonicalize_many(BASE, hrefs)
    sys.stdout.write(f"{len(hrefs)} hrefs -> {len(links)} distinct canonical links\n")
    timed(
        "canonicalize_many (page batch)",
        len(hrefs),
        args.repeat,
        lambda: canonicalize_many(BASE, hrefs),
    )
    timed(
        "canonicalize (one call per href)",
        len(hrefs),
        args.repeat,
        lambda: [canonicalize(h, BASE) for h in hrefs],
    )
    timed("fingerprints (distinct links)", len(links), args.repeat, lambda: fingerprints(links))
    timed("surt (distinct links)", len(links), args.repeat, lambda: [surt(u) for u in links])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
