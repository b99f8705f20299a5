"""decode_content: every coding, stacked codings, caps, cut input, corrupt input, the
cost of a bomb; decode_off_loop: what is decoded on the event loop and what in a thread."""

from __future__ import annotations

import gzip
import os
import threading
import tracemalloc
import zlib
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import brotlicffi
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from headway.fetch import core as client
from headway.fetch import decode
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


class CountingDecompressor(brotlicffi.Decompressor):  # type: ignore[misc]
    calls = 0

    def process(self, data: bytes, output_buffer_limit: int | None = None) -> bytes:
        CountingDecompressor.calls += 1
        out: bytes = super().process(data, output_buffer_limit=output_buffer_limit)
        return out


def test_br_bomb_is_decoded_in_blocks_not_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(decode.brotlicffi, "Decompressor", CountingDecompressor)
    CountingDecompressor.calls = 0
    cap = 4 * 1024 * 1024
    bomb = brotlicffi.compress(b"\0" * (4 * cap), quality=5)
    out, truncated, error = decode_content(bomb, "br", cap)
    assert (len(out), truncated, error) == (cap, True, None)
    assert out == b"\0" * cap
    # one call per output block (and one to take the input), never one per byte
    assert CountingDecompressor.calls <= cap // decode.BLOCK + 3


def _stacked(codings: int) -> tuple[bytes, str]:
    """``<p>x</p>`` gzipped ``codings`` times, and the header naming them."""
    data = b"<p>x</p>"
    for _ in range(codings):
        data = gzip.compress(data)
    return data, ", ".join(["gzip"] * codings)


def test_at_most_four_stacked_codings_are_undone() -> None:
    """The bound, as a number: four codings are undone, five are refused unread (real
    servers stack at most two; each one undone is another pass over the body)."""
    assert decode.MAX_CODINGS == 4
    for codings in (1, 2, 3, 4):
        data, header = _stacked(codings)
        assert decode_content(data, header, 10**6) == (b"<p>x</p>", False, None), codings
    for codings in (5, 6, 50):
        data, header = _stacked(codings)
        out, truncated, error = decode_content(data, header, 10**6)
        assert (out, truncated) == (b"", False)
        assert error == f"{codings} content codings (at most 4 are undone)"
    # "identity" is no coding: it does not count towards the four
    data, header = _stacked(4)
    assert decode_content(data, f"identity, {header}, identity", 10**6)[2] is None


class Calls:
    """Where decode_content ran: (thread name, cap) per call."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, int]] = []

    def __call__(
        self, raw: bytes, encoding: str | None, cap: int
    ) -> tuple[bytes, bool, str | None]:
        self.calls.append((threading.current_thread().name, cap))
        return decode_content(raw, encoding, cap)


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> Calls:
    recorder = Calls()
    monkeypatch.setattr(client, "decode_content", recorder)
    return recorder


async def test_a_small_body_is_decoded_on_the_loop(calls: Calls) -> None:
    page = gzip.compress(DATA)
    with ThreadPoolExecutor(1, thread_name_prefix="decoder") as pool:
        result = await client.decode_off_loop(page, "gzip", 8 * 2**20, pool)
    assert result == (DATA, False, None)
    assert calls.calls == [(threading.current_thread().name, client.INLINE_DECODED)]


@pytest.mark.parametrize("coding", ["gzip", "deflate", "br", "gzip, br"])
async def test_a_bomb_is_decoded_in_the_worker_thread(calls: Calls, coding: str) -> None:
    plain = b" " * (32 * 2**20)
    bomb = {
        "gzip": lambda: gzip.compress(plain, 9),
        "deflate": lambda: zlib.compress(plain, 9),
        "br": lambda: brotlicffi.compress(plain, quality=5),
        "gzip, br": lambda: brotlicffi.compress(gzip.compress(plain, 9), quality=5),
    }[coding]()
    assert len(bomb) <= client.THREAD_DECODE_MIN  # small: it is tried on the loop first
    cap = 8 * 2**20
    with ThreadPoolExecutor(1, thread_name_prefix="decoder") as pool:
        out, truncated, error = await client.decode_off_loop(bomb, coding, cap, pool)
    assert (len(out), truncated, error) == (cap, True, None)
    loop_thread = threading.current_thread().name
    assert [(name.startswith("decoder"), c) for name, c in calls.calls] == [
        (False, client.INLINE_DECODED),  # a slice on the loop, cut ...
        (True, cap),  # ... then the whole of it off the loop
    ]
    assert calls.calls[0][0] == loop_thread


async def test_a_large_body_goes_to_the_worker_thread_at_once(calls: Calls) -> None:
    raw = gzip.compress(os.urandom(client.THREAD_DECODE_MIN))  # random: stays large
    with ThreadPoolExecutor(1, thread_name_prefix="decoder") as pool:
        out, truncated, error = await client.decode_off_loop(raw, "gzip", 8 * 2**20, pool)
    assert (len(out), truncated, error) == (client.THREAD_DECODE_MIN, False, None)
    assert len(calls.calls) == 1 and calls.calls[0][0].startswith("decoder")
