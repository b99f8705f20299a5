"""decode_content: every coding, stacked codings, caps, cut input, corrupt input."""

from __future__ import annotations

import gzip
import os
import tracemalloc
import zlib
from collections.abc import Callable

import brotlicffi
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from headway.fetch.decode import decode_content

DATA = b"<html>" + os.urandom(20_000).hex().encode() + b"</html>"


def raw_deflate(data: bytes) -> bytes:
    c = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    return c.compress(data) + c.flush()


ENCODERS: dict[str, Callable[[bytes], bytes]] = {
    "gzip": gzip.compress,
    "x-gzip": gzip.compress,
    "deflate": zlib.compress,
    "br": brotlicffi.compress,
}


@pytest.mark.parametrize(
    ("header", "encoded"),
    [
        (None, DATA),
        ("identity", DATA),
        ("gzip", gzip.compress(DATA)),
        ("x-gzip", gzip.compress(DATA)),
        ("GZIP", gzip.compress(DATA)),
        ("deflate", zlib.compress(DATA)),
        ("deflate", raw_deflate(DATA)),
        ("br", brotlicffi.compress(DATA)),
        ("gzip, br", brotlicffi.compress(gzip.compress(DATA))),
        ("deflate,gzip", gzip.compress(zlib.compress(DATA))),
        ("identity, gzip", gzip.compress(DATA)),
        ("gzip", gzip.compress(DATA[:1000]) + gzip.compress(DATA[1000:])),
        ("gzip", gzip.compress(DATA) + b"\0\0trailing junk"),
    ],
)
def test_decodes(header: str | None, encoded: bytes) -> None:
    assert decode_content(encoded, header, 10**7) == (DATA, False, None)


@pytest.mark.parametrize("coding", sorted(ENCODERS))
def test_cut_at_max_decoded(coding: str) -> None:
    out, truncated, error = decode_content(ENCODERS[coding](DATA), coding, 1000)
    assert (out, truncated, error) == (DATA[:1000], True, None)


def test_exact_size_not_truncated() -> None:
    assert decode_content(gzip.compress(DATA), "gzip", len(DATA)) == (DATA, False, None)
    assert decode_content(DATA, None, len(DATA) - 1) == (DATA[:-1], True, None)


@pytest.mark.parametrize("coding", sorted(ENCODERS))
def test_cut_input_gives_a_prefix_without_error(coding: str) -> None:
    encoded = ENCODERS[coding](DATA)
    out, truncated, error = decode_content(encoded[: len(encoded) // 2], coding, 10**7)
    assert error is None and not truncated
    assert 0 < len(out) < len(DATA) and DATA.startswith(out)


@pytest.mark.parametrize(
    ("header", "raw", "word"),
    [
        ("gzip", b"definitely not gzip", "gzip"),
        ("deflate", b"\xff\xff\xff\xff\xff", "deflate"),
        ("br", b"\xff" * 40, "br"),
        ("compress", b"whatever", "compress"),
        ("gzip, zstd-unknown", b"x", "zstd-unknown"),
    ],
)
def test_corrupt_or_unknown(header: str, raw: bytes, word: str) -> None:
    out, truncated, error = decode_content(raw, header, 10**6)
    assert out == b"" and not truncated
    assert error is not None and word in error


@pytest.mark.parametrize(
    ("coding", "encode"),
    [
        ("gzip", lambda d: gzip.compress(d, 9)),
        ("br", lambda d: brotlicffi.compress(d, quality=5)),
        ("deflate", zlib.compress),
        ("gzip, br", lambda d: brotlicffi.compress(gzip.compress(d, 9), quality=5)),
    ],
)
def test_bomb_capped(coding: str, encode: Callable[[bytes], bytes]) -> None:
    bomb = encode(b"\0" * (16 * 1024 * 1024))
    assert len(bomb) < 100_000
    tracemalloc.start()
    try:
        out, truncated, error = decode_content(bomb, coding, 500_000)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert (len(out), truncated, error) == (500_000, True, None)
    assert peak < 4 * 500_000  # bounded by the cap, not by the 16 MiB the bomb holds


@settings(max_examples=60, deadline=None)
@given(
    data=st.binary(max_size=5000),
    coding=st.sampled_from(sorted(ENCODERS)),
    cap=st.integers(min_value=0, max_value=6000),
)
def test_roundtrip_property(data: bytes, coding: str, cap: int) -> None:
    out, truncated, error = decode_content(ENCODERS[coding](data), coding, cap)
    assert error is None
    assert out == data[:cap]
    assert truncated == (len(data) > cap)
