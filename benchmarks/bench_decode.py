"""Cost of one capped decompression bomb, for every content coding headway undoes.

Run: .venv/bin/python benchmarks/bench_decode.py [--cap BYTES] [--repeat R]
Each bomb is a body that fits in the default --max-body (256 KiB) and decodes to far
more than the cap (default: --max-decoded, 8 MiB): zeros, and a page of repeated links
(what a bomb that is also a valid page looks like). ``decode_content`` cuts it at the
cap; the best of R runs is printed in milliseconds, with the throughput of the output.
The last row measures the brotli stream as it was with an output limit of one byte per
call (a smaller cap, scaled to the full one), to show what the block-sized limit saves.
"""

from __future__ import annotations

import argparse
import gzip
import time
import zlib
from collections.abc import Callable

import brotlicffi

from headway.fetch.decode import decode_content

MAX_BODY = 256 * 1024
LINK = b'<a href="http://example.org/p/1">link</a>\n'


def raw_deflate(data: bytes) -> bytes:
    c = zlib.compressobj(9, wbits=-zlib.MAX_WBITS)
    return c.compress(data) + c.flush()


ENCODERS: dict[str, Callable[[bytes], bytes]] = {
    "gzip": lambda d: gzip.compress(d, 9),
    "deflate (zlib)": lambda d: zlib.compress(d, 9),
    "deflate (raw)": raw_deflate,
    "br": lambda d: brotlicffi.compress(d, quality=9),
    "gzip, br": lambda d: brotlicffi.compress(gzip.compress(d, 9), quality=9),
}
HEADER = {
    "gzip": "gzip",
    "deflate (zlib)": "deflate",
    "deflate (raw)": "deflate",
    "br": "br",
    "gzip, br": "gzip, br",
}


def best_ms(fn: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best * 1000


def one_byte_br_ms(bomb: bytes, cap: int) -> float:
    """The former brotli loop: output asked for with a limit of one byte per call."""
    t0 = time.perf_counter()
    d = brotlicffi.Decompressor()
    out = bytearray()
    data = bomb
    while len(out) < cap and not d.is_finished():
        chunk = b""
        if data and d.can_accept_more_data():
            chunk, data = data, b""
        more = d.process(chunk, output_buffer_limit=1)
        if not more and not chunk:
            break
        out += more
    return (time.perf_counter() - t0) * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cap", type=int, default=8 * 1024 * 1024, help="--max-decoded")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    cap = args.cap
    plain = {
        "zeros": b"\0" * (8 * cap),
        "links": LINK * (8 * cap // len(LINK)),
    }
    print(f"decoding bombs cut at {cap / 2**20:.1f} MiB (best of {args.repeat})")
    print(f"{'coding':<16}{'content':<8}{'raw bytes':>11}{'ms/bomb':>10}{'MiB/s':>8}")
    for name, encode in ENCODERS.items():
        for kind, data in plain.items():
            bomb = encode(data)[:MAX_BODY]
            out, truncated, error = decode_content(bomb, HEADER[name], cap)
            assert error is None and truncated and len(out) == cap, (name, kind, error)
            ms = best_ms(lambda b=bomb, h=HEADER[name]: decode_content(b, h, cap), args.repeat)
            rate = cap / 2**20 / (ms / 1000)
            print(f"{name:<16}{kind:<8}{len(bomb):>11}{ms:>10.1f}{rate:>8.0f}")
    small = min(cap, 256 * 1024)
    bomb = ENCODERS["br"](plain["zeros"])
    ms = one_byte_br_ms(bomb, small) * cap / small
    rate = cap / 2**20 / (ms / 1000)
    print(f"{'br, 1 B/call':<16}{'zeros':<8}{len(bomb):>11}{ms:>10.0f}{rate:>8.1f}")
    print(f"(br, 1 B/call: the former output limit, measured on a {small // 1024} KiB cap, scaled)")


if __name__ == "__main__":
    main()
