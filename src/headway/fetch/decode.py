"""Content-encoding removal with a hard cap on output size.

``decode_content(raw, content_encoding, max_decoded)`` undoes the codings named in a
Content-Encoding header (``gzip``/``x-gzip``, ``deflate`` in its zlib or raw form,
``br``, ``identity``; stacked as ``"gzip, br"``, undone last-applied first) and returns
``(decoded, truncated, error)``:

- ``decoded`` is cut at ``max_decoded`` bytes and ``truncated`` says whether it was;
- decompression is streamed with an output limit, so a decompression bomb never makes
  more than ``max_decoded`` plus one chunk of output exist at once;
- an input that simply stops early (the raw body was cut at the body limit) yields what
  could be decoded, without error; bytes after the end of a stream are ignored;
- an unknown coding, corrupt data or more than ``MAX_CODINGS`` codings give
  ``(b"", False, message)``;
- the work is bounded by the output: each call of a decompressor makes at most
  ``BLOCK`` bytes (a brotli bomb costs about as much as a gzip one, see
  ``benchmarks/bench_decode.py``).
"""

from __future__ import annotations

import zlib
from typing import Final, Protocol

import brotlicffi

CHUNK: Final = 64 * 1024
#: Most output one call of a decompressor makes (bytes).
BLOCK: Final = 256 * 1024
#: Most content codings undone for one body (real servers stack at most two); a longer
#: list is refused, so a header cannot make one body be decoded a thousand times.
MAX_CODINGS: Final = 4


class _DecodeError(Exception):
    pass


class _Stream(Protocol):
    def feed(self, data: bytes, limit: int) -> bytes:
        """Output for ``data`` (at most about ``limit`` bytes); input held back by the
        limit is kept and continued by the next call (which may pass b"")."""


class _ZlibStream:
    """zlib, gzip or raw deflate; gzip members that follow one another are all read."""

    __slots__ = ("_d", "_gzip", "_pending", "_wbits")

    def __init__(self, wbits: int) -> None:
        self._wbits = wbits
        self._gzip = wbits > zlib.MAX_WBITS
        self._d = zlib.decompressobj(wbits)
        self._pending = b""

    def feed(self, data: bytes, limit: int) -> bytes:
        data = self._pending + data
        out = bytearray()
        while len(out) < limit and data:
            if self._d.eof:
                data = data.lstrip(b"\0")
                if not self._gzip or not data.startswith(b"\x1f\x8b"):
                    data = b""  # trailing garbage after the stream: ignored
                    break
                self._d = zlib.decompressobj(self._wbits)
            try:
                out += self._d.decompress(data, limit - len(out))
            except zlib.error as exc:
                raise _DecodeError(f"{'gzip' if self._gzip else 'deflate'}: {exc}") from exc
            data = self._d.unconsumed_tail or self._d.unused_data
        self._pending = data
        return bytes(out)


class _BrotliStream:
    __slots__ = ("_d", "_pending")

    def __init__(self) -> None:
        self._d = brotlicffi.Decompressor()
        self._pending = b""

    def feed(self, data: bytes, limit: int) -> bytes:
        data = self._pending + data
        out = bytearray()
        try:
            while len(out) < limit and not self._d.is_finished():
                chunk = b""  # output held back by the limit comes first
                if data and self._d.can_accept_more_data():
                    chunk, data = data, b""
                # brotlicffi >= 1.2 sizes its output buffer to exactly this limit: a
                # block per call keeps both the overshoot (none) and the number of
                # calls (one per block, not one per byte) small.
                block = min(limit - len(out), BLOCK)
                more = self._d.process(chunk, output_buffer_limit=block)
                if not more and not chunk:
                    break
                out += more
        except brotlicffi.error as exc:
            raise _DecodeError(f"br: {exc}".replace("br: brotli:", "br:")) from exc
        self._pending = data
        return bytes(out)


def _is_zlib_header(raw: bytes) -> bool:
    return len(raw) >= 2 and raw[0] & 0x0F == 8 and (raw[0] << 8 | raw[1]) % 31 == 0


def _stream_for(coding: str, raw: bytes) -> _Stream:
    if coding in ("gzip", "x-gzip"):
        return _ZlibStream(16 + zlib.MAX_WBITS)
    if coding == "deflate":
        # RFC 9110 says zlib-wrapped, but many servers send raw deflate.
        return _ZlibStream(zlib.MAX_WBITS if _is_zlib_header(raw) else -zlib.MAX_WBITS)
    if coding == "br":
        return _BrotliStream()
    raise _DecodeError(f"unsupported content-encoding {coding!r}")


def _decode_one(coding: str, raw: bytes, max_decoded: int) -> tuple[bytes, bool]:
    """One coding undone; returns (output cut at max_decoded, truncated?)."""
    stream = _stream_for(coding, raw)
    out = bytearray()
    limit = max_decoded + 1  # one byte past the cap tells that the cap was hit
    view = memoryview(raw)
    for start in range(0, len(raw), CHUNK):
        out += stream.feed(bytes(view[start : start + CHUNK]), limit - len(out))
        if len(out) >= limit:
            break
    while len(out) < limit:  # input exhausted: drain what the limit held back
        more = stream.feed(b"", limit - len(out))
        if not more:
            break
        out += more
    if len(out) > max_decoded:
        return bytes(out[:max_decoded]), True
    return bytes(out), False


def decode_content(
    raw: bytes, content_encoding: str | None, max_decoded: int
) -> tuple[bytes, bool, str | None]:
    """Undo ``content_encoding`` on ``raw``; see the module docstring for the contract."""
    codings = [c.strip().lower() for c in (content_encoding or "").split(",")]
    codings = [c for c in codings if c and c != "identity"]
    if not codings:
        if len(raw) > max_decoded:
            return raw[:max_decoded], True, None
        return raw, False, None
    if len(codings) > MAX_CODINGS:
        return b"", False, f"{len(codings)} content codings (at most {MAX_CODINGS} are undone)"
    data = raw
    truncated = False
    try:
        for coding in reversed(codings):
            data, cut = _decode_one(coding, data, max_decoded)
            truncated = truncated or cut
    except _DecodeError as exc:
        return b"", False, str(exc)
    return data, truncated, None
