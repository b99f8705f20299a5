"""Main-content quality and cost of the text extractors on a labelled article set.

Run: ``.venv/bin/python benchmarks/bench_text_quality.py REPO [--limit N] [--only NAME]``
with REPO a git clone (bare or not) of scrapinghub/article-extraction-benchmark (MIT
licence: 181 news and blog pages in ``html/*.html.gz``, their hand-checked article
bodies in ``ground-truth.json``), or a directory laid out the same way (such as
``tests/data/articles``). Prints, per extractor, the shingle F1, precision and recall
(``headway.bench.textscore``) and the median and mean milliseconds of extraction per page
(one core; the page is decoded once beforehand, as the parser processes have it).
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from headway.bench.textscore import page_counts, score
from headway.parse.charset import decode_body, detect_charset
from headway.parse.page import parse_tree
from headway.parse.simhash import visible_text
from headway.parse.text import extract_text


def _git(repo: Path, *args: str) -> bytes:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True).stdout


def load_set(repo: Path) -> Iterator[tuple[str, str, str]]:
    """(key, decoded html, true article body) of each page of the set."""
    if (repo / "ground-truth.json").is_file():
        truth = json.loads((repo / "ground-truth.json").read_text())

        def read(name: str) -> bytes:
            return (repo / "html" / name).read_bytes()
    else:
        truth = json.loads(_git(repo, "show", "HEAD:ground-truth.json"))

        def read(name: str) -> bytes:
            return _git(repo, "show", f"HEAD:html/{name}")

    for key in sorted(truth):
        raw = gzip.decompress(read(f"{key}.html.gz"))
        html = decode_body(raw, detect_charset("text/html", raw))
        yield key, html, truth[key].get("articleBody") or ""


def _trafilatura() -> Callable[[str], str]:
    import trafilatura

    def run(html: str) -> str:
        return trafilatura.extract(html) or ""

    return run


def _visible(html: str) -> str:
    return visible_text(parse_tree(html))


EXTRACTORS: dict[str, Callable[[], Callable[[str], str]]] = {
    "main (resiliparse)": lambda: lambda html: extract_text(html, "main"),
    "all (resiliparse)": lambda: lambda html: extract_text(html, "all"),
    "accurate (trafilatura)": _trafilatura,
    "visible text (selectolax)": lambda: _visible,
}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("repo", type=Path)
    ap.add_argument("--limit", type=int, default=0, help="first N pages only")
    ap.add_argument("--only", action="append", default=[], help="extractor name prefix")
    args = ap.parse_args(argv)
    pages = list(load_set(args.repo))
    if args.limit:
        pages = pages[: args.limit]
    print(f"{len(pages)} pages")
    print(f"{'extractor':<28} {'F1':>6} {'prec':>6} {'recall':>6} {'median ms':>10} {'mean ms':>8}")
    for name, make in EXTRACTORS.items():
        if args.only and not any(name.startswith(o) for o in args.only):
            continue
        extract = make()
        extract(pages[0][1])  # warm-up: imports, first-call caches
        times, counts = [], []
        for _, html, true in pages:
            t0 = time.process_time()
            text = extract(html)
            times.append(time.process_time() - t0)
            counts.append(page_counts(true, text))
        s = score(counts)
        print(
            f"{name:<28} {s.f1:6.3f} {s.precision:6.3f} {s.recall:6.3f} "
            f"{statistics.median(times) * 1000:10.2f} {statistics.mean(times) * 1000:8.2f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
