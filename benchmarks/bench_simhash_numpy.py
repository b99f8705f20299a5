"""SimHash through numpy against headway's SimHash, on the bench pages and the real page
mix: same fingerprints, CPU per page, and what importing numpy costs a process.

Run: ``.venv/bin/pip install numpy`` (numpy is not a dependency of headway), then
``.venv/bin/python benchmarks/bench_simhash_numpy.py [--pages 100]``.

The numpy version takes the same words and word hashes (``simhash.word_bytes`` and the
process's word cache), sums the shingles ``H(a) * K1 + H(b) * K2 + H(c)`` in uint64
arrays (wrapping mod 2**64 as the contract says), and counts the votes with
``unpackbits`` and a column sum. Both are checked to give the same fingerprint for every
page before they are timed (best of 7 passes, process CPU time).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pages", type=int, default=100)
    args = ap.parse_args()
    try:
        import numpy as np
    except ImportError:
        print("numpy is not installed: .venv/bin/pip install numpy first", file=sys.stderr)
        return 2
    from bench_page_costs import pages

    from headway.parse import simhash as sh
    from headway.parse.page import parse_tree

    k1, k2 = np.uint64(sh.K1), np.uint64(sh.K2)

    def simhash_np(text: str) -> int:
        words = sh.word_bytes(text, sh.MAX_FEATURES + sh.SHINGLE_WORDS - 1)
        if not words:
            return 0
        lanes = np.frombuffer(sh._lanes_joined(words), dtype=np.uint8)
        h = lanes.reshape(-1, sh._LANE)[:, sh._LANE - 8 :].copy().view(">u8").ravel()
        h = h.astype(np.uint64)
        if len(words) >= sh.SHINGLE_WORDS:
            with np.errstate(over="ignore"):
                h = h[:-2] * k1 + h[1:-1] * k2 + h[2:]
        n = len(h)
        bits = np.unpackbits(h.astype(">u8").view(np.uint8).reshape(n, 8), axis=1)
        votes = bits.sum(axis=0, dtype=np.int32)
        return int.from_bytes(np.packbits((votes * 2 > n).astype(np.uint8)).tobytes(), "big")

    def best(fn: object, texts: list[str]) -> float:
        out = float("inf")
        for _ in range(7):
            cpu0 = time.process_time()
            for t in texts:
                fn(t)  # type: ignore[operator]
            out = min(out, (time.process_time() - cpu0) / len(texts) * 1000)
        return out

    for mix in ("fixed", "real"):
        corpus = pages(args.pages, 280, 64, mix)
        texts = [sh.visible_text(parse_tree(b.decode(errors="replace"))) for _, b in corpus]
        for t in [*texts, "", "one", "one two", "a b c"]:
            if simhash_np(t) != sh.simhash(t):
                raise SystemExit(f"fingerprints differ on a {mix} page")
        now, with_np = best(sh.simhash, texts), best(simhash_np, texts)
        print(
            f"{mix} mix, {args.pages} pages: SimHash {now:.3f} ms a page, through numpy "
            f"{with_np:.3f} ms ({with_np / now:.2f}x); same fingerprints"
        )
    # peak RSS from /proc (VmHWM starts again at exec; getrusage's maxrss does not)
    probe = (
        "import re, time; import headway.parse.page; {imp}t = time.process_time(); "
        "{num}print(time.process_time() - t, "
        "re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read())[1])"
    )
    figures = {}
    for name, num in (("without", ""), ("with", "import numpy; ")):
        code = probe.format(imp="", num=num)
        runs = [
            subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout
            for _ in range(3)
        ]
        figures[name] = (
            min(float(r.split()[0]) for r in runs),
            min(int(r.split()[1]) for r in runs) / 1024,
        )
    print(
        f"a process importing the parser: numpy's import {figures['with'][0]:.3f} s of CPU; "
        f"peak RSS {figures['without'][1]:.0f} MiB without numpy, {figures['with'][1]:.0f} "
        "MiB with it"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
