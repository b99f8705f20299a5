"""An in-memory Bloom filter over 64-bit URL fingerprints: the fast "maybe seen?" test
in front of the exact seen table.

Contract: no false negatives (every added fingerprint is reported present); false
positives at about ``error`` while at most ``capacity`` fingerprints were added. Memory
is fixed at construction from (capacity, error) and never grows; past capacity the
false-positive rate rises but answers stay safe, because callers confirm every hit
against the exact table. A frontier that keeps the exact table sizes its filter to the
crawl with ``capacity_for``: small at first, replaced by a 16 times larger one rebuilt
from the table whenever the seen set outgrows it, up to the configured capacity.

The fingerprint is already a uniform 64-bit hash, so the ``k`` bit positions come from
it directly by double hashing (Kirsch and Mitzenmacher): ``h1 + i*h2 mod m`` with
``h1`` from the fingerprint and ``h2`` from a cheap multiplicative mix of it.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
from collections.abc import Iterable, Sequence
from pathlib import Path

log = logging.getLogger(__name__)

_MASK64 = (1 << 64) - 1
_MIX = 0x9E3779B97F4A7C15  # odd 64-bit constant (golden ratio), spreads bits for h2


#: Fingerprints the smallest filter is sized for (118 KB at 0.1 % error).
START_CAPACITY = 65_536
#: How much larger each next filter is: few rebuilds (each reads the whole seen table:
#: measured 0.5 s at 65,536 fingerprints, 4.2 s at a million), and at most 16 times
#: more memory than the seen set needs.
GROWTH = 16


def capacity_for(seen: int, most: int, start: int = START_CAPACITY) -> int:
    """The capacity of the filter for ``seen`` fingerprints: the smallest ``start *
    GROWTH**k`` that holds them, and never more than ``most`` (the configured capacity)."""
    cap = min(start, most)
    while cap < seen and cap < most:
        cap = min(cap * GROWTH, most)
    return cap


def _size(capacity: int, error: float) -> tuple[int, int]:
    """Bits and probes of an optimal filter for ``capacity`` items at ``error``."""
    if capacity < 1:
        raise ValueError("capacity must be >= 1")
    if not 0.0 < error < 1.0:
        raise ValueError("error must be in (0, 1)")
    bits = math.ceil(-capacity * math.log(error) / (math.log(2) ** 2))
    bits = max(64, (bits + 7) // 8 * 8)
    probes = max(1, round(bits / capacity * math.log(2)))
    return bits, probes


class BloomFilter:
    """A fixed-size Bloom filter keyed by signed or unsigned 64-bit integers."""

    __slots__ = ("_bits", "_k", "_m")

    def __init__(self, capacity: int, error: float) -> None:
        self._m, self._k = _size(capacity, error)
        self._bits = bytearray(self._m // 8)

    @property
    def nbytes(self) -> int:
        """Bytes of the bit array (the filter's whole memory, apart from a few ints)."""
        return len(self._bits)

    @property
    def probes(self) -> int:
        """Bits set (and tested) per fingerprint."""
        return self._k

    def add(self, fp: int) -> None:
        self.add_many((fp,))

    def __contains__(self, fp: object) -> bool:
        if not isinstance(fp, int):
            return False
        return self.contains_many((fp,))[0]

    def add_many(self, fps: Iterable[int]) -> None:
        """Set the bits of every fingerprint."""
        bits, m, k = self._bits, self._m, self._k
        for fp in fps:
            u = fp & _MASK64
            h = u % m
            d = ((u * _MIX) & _MASK64) % (m - 1) + 1
            for p in range(h, h + k * d, d):
                p %= m
                bits[p >> 3] |= 1 << (p & 7)

    def contains_many(self, fps: Sequence[int]) -> list[bool]:
        """For each fingerprint: True if it may have been added, False if surely not."""
        bits, m, k = self._bits, self._m, self._k
        out: list[bool] = []
        append = out.append
        for fp in fps:
            u = fp & _MASK64
            h = u % m
            d = ((u * _MIX) & _MASK64) % (m - 1) + 1
            for p in range(h, h + k * d, d):
                p %= m
                if not (bits[p >> 3] >> (p & 7)) & 1:
                    append(False)
                    break
            else:
                append(True)
        return out


# -- the bitmap saved between runs -------------------------------------------------------
# A checkpoint of the filter: the bitmap, the seen count it covered and the filter's
# sizing. The store does not depend on it being complete: a fingerprint admitted after
# the checkpoint is missing from a filter loaded from it, and the store's insert finds it
# seen all the same (the SQLite frontier's ``INSERT ... ON CONFLICT DO NOTHING``); a
# bitmap of another set only adds false positives, which are confirmed. So any bitmap of
# the right sizing is usable, however old.
# A small seen set is not saved: rebuilding it from the table (about 2.5 us a fingerprint
# in CPython) is quicker than writing and reading a bitmap that would be nearly all zeros.
# The filter's sizing is a function of the seen count (``capacity_for``), so a bitmap
# saved for a count is read back into a filter of the same size.

#: Fingerprints per bitmap byte below which a bitmap is not worth saving: 1/256 is
#: about 70,000 fingerprints (a rebuild of about 0.2 s) at 10 million.
SAVE_MIN_SEEN_PER_BYTE = 1 / 256


def worth_saving(bloom: BloomFilter, seen: int) -> bool:
    """Whether a bitmap for ``seen`` fingerprints saves the next start any time."""
    return seen >= bloom.nbytes * SAVE_MIN_SEEN_PER_BYTE


def _header(bloom: BloomFilter, seen: int) -> bytes:
    return f"headway-bloom 1 {seen} {bloom.nbytes} {bloom.probes}\n".encode()


def load_bitmap(bloom: BloomFilter, path: Path) -> int | None:
    """Fill ``bloom`` from the bitmap saved at ``path``; the seen count it covered, or
    None (and ``bloom`` left empty) when there is none, its sizing differs or it is cut
    short. Read straight into the filter's memory: no second copy of the bitmap."""
    try:
        with path.open("rb") as fh:
            line = fh.readline(200)
            fields = line.split()
            if len(fields) != 5 or fields[:2] != [b"headway-bloom", b"1"]:
                return None
            seen = int(fields[2])
            if line != _header(bloom, seen):  # another sizing
                return None
            view = memoryview(bloom._bits)
            if fh.readinto(view) != len(view) or fh.read(1):
                bloom._bits[:] = bytes(len(view))  # a short file: leave no partial bits
                return None
    except (OSError, ValueError):
        return None
    return seen


def save_bitmap(bloom: BloomFilter, path: Path, seen: int) -> bool:
    """Save the bitmap of ``seen`` fingerprints (written from the filter's own memory to
    a new file, then renamed over the last one); False when it could not be written
    (logged: the next start then loads an older one or rebuilds)."""
    tmp = path.with_name(path.name + ".tmp")
    try:
        with open(tmp, "wb") as fh:
            fh.write(_header(bloom, seen))
            fh.write(memoryview(bloom._bits))
        os.replace(tmp, path)
    except OSError as exc:
        log.warning("could not save the Bloom filter to %s: %s", path, exc)
        with contextlib.suppress(OSError):
            tmp.unlink()
        return False
    return True
