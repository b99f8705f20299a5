"""SimHash fingerprints of page text, for near-duplicate detection (pure).

Contract:

- ``simhash(text)`` is Charikar's SimHash over 64 bits: ASCII punctuation becomes space,
  the text is lower-cased, and it is split on white space into words; the features
  are the first ``MAX_FEATURES`` overlapping 3-word shingles (the words themselves when
  there are fewer than 3). A word's hash ``H(w)`` is its 64-bit BLAKE2b digest (big
  endian), so values agree between processes and runs; a shingle ``(a, b, c)`` hashes
  to ``(H(a) * K1 + H(b) * K2 + H(c)) mod 2**64`` (``K1``, ``K2`` odd constants). Each
  feature votes +1 for each bit set in its hash and -1 for each bit clear; bit ``i`` of
  the result is set when the vote for it is positive. Text without a word gives 0.
- ``hamming(a, b)`` is the number of bits in which two fingerprints differ. Pages whose
  visible text differs by a few words (a date, a session id, a short ad block) differ
  in a few bits; unrelated pages in about 32. ``NEAR_DUPLICATE_BITS`` is the distance at
  which headway calls two pages near-duplicates (see docs/near-duplicates.md for how it
  was chosen and what it costs).
- ``visible_text(tree)`` is the text a reader sees in a lexbor tree: the body's text
  without ``script``, ``style``, ``template`` and ``noscript`` contents. It removes those
  nodes from ``tree``.
"""

from __future__ import annotations

import hashlib
import string
from typing import Any

__all__ = ["NEAR_DUPLICATE_BITS", "SHINGLE_WORDS", "hamming", "simhash", "visible_text"]

#: Pages at most this many bits apart are near-duplicates.
NEAR_DUPLICATE_BITS = 8
#: Words per shingle.
SHINGLE_WORDS = 3
#: Shingles per page at most (bounds CPU on long pages: the first ones count).
MAX_FEATURES = 2048
K1 = 0x9E3779B97F4A7C15
K2 = 0xC2B2AE3D27D4EB4F
_MASK = (1 << 64) - 1

_PUNCTUATION = str.maketrans(dict.fromkeys(string.punctuation, " "))
#: Characters of text read at most: enough for ``MAX_FEATURES`` shingles of long words.
MAX_CHARS = MAX_FEATURES * 12
_HIDDEN = ["script", "style", "template", "noscript"]


def words_of(text: str) -> list[str]:
    """The words of ``text`` as ``simhash`` sees them."""
    return text[:MAX_CHARS].translate(_PUNCTUATION).lower().split()


#: ASCII text in one C pass: upper case to lower, punctuation to space, and the four
#: separators ``str.split`` treats as white space but ``bytes.split`` does not (0x1C-0x1F)
#: to space, so ``bytes.split`` cuts exactly where ``str.split`` does.
_ASCII_WORDS = bytes.maketrans(
    string.ascii_uppercase.encode() + string.punctuation.encode() + b"\x1c\x1d\x1e\x1f",
    string.ascii_lowercase.encode() + b" " * (len(string.punctuation) + 4),
)


def word_bytes(text: str, limit: int) -> list[bytes]:
    """The first ``limit`` words of ``words_of(text)``, each UTF-8 encoded (as
    ``word_hash`` hashes it)."""
    head = text[:MAX_CHARS]
    if head.isascii():  # the usual page: no per-word encoding, no dict-based translate
        return head.encode("ascii").translate(_ASCII_WORDS).split(None, limit)[:limit]
    # punctuation first: lower() maps a capital sigma after a letter and a mark such as
    # "^" to the final form, which it would not once the mark is a space
    words = head.translate(_PUNCTUATION).lower().split(None, limit)[:limit]
    return [w.encode("utf-8", "surrogatepass") for w in words]


def word_hash(word: str) -> int:
    """``H(w)`` of the module contract."""
    digest = hashlib.blake2b(word.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "big")


#: Bytes of one lane of ``_columns``: a shingle's sum before reduction is below
#: 3 * 2**128, so it fits in 17 bytes with room to spare and never carries into the next.
_LANE = 17
_PAD = bytes(_LANE - 8)
#: Words whose lane (``H(w)`` as ``_LANE`` big-endian bytes) this process keeps: pages
#: share most of their words, so most are hashed once per process, not once per page.
#: Bounded: when a page's new words do not fit, it is emptied and takes that page's
#: words (a page with more distinct words than fit is hashed without it).
MAX_CACHED_WORDS = 1 << 15
_lanes: dict[bytes, bytes] = {}


def clear_word_cache() -> None:
    """Forget every word hashed so far (for measurements of a cold start)."""
    _lanes.clear()


def _lanes_joined(words: list[bytes]) -> bytes:
    """The lanes of ``words``, in order, as one byte string."""
    lanes = _lanes
    try:  # the usual case once a few pages are read: every word is known
        return b"".join(map(lanes.__getitem__, words))
    except KeyError:
        pass
    new = set(words).difference(lanes)
    if len(lanes) + len(new) > MAX_CACHED_WORDS:
        lanes.clear()
        new = set(words)
        if len(new) > MAX_CACHED_WORDS:  # more words than the cache holds: this page's own
            lanes = {}
    blake2b = hashlib.blake2b
    for w in new:
        lanes[w] = _PAD + blake2b(w, digest_size=8).digest()
    return b"".join(map(lanes.__getitem__, words))


def _columns(words: list[bytes]) -> tuple[list[bytes], int]:
    """Byte ``j`` (0 = most significant) of every feature hash, as 8 byte strings (the
    columns the votes are counted on), and the number of features.

    Shingles are summed without a Python step per feature: the word hashes are written
    in 17-byte big-endian lanes of one integer ``W``; shifted left by one lane, lane ``i``
    holds the next word's hash, by two lanes the one after. So ``W * K1 + (W << lane) *
    K2 + (W << 2 lanes)`` holds in each lane ``H(a) * K1 + H(b) * K2 + H(c)`` of one
    shingle, unreduced (below 3 * 2**128, no carry into the next lane); the low 8 bytes
    of a lane are that sum mod 2**64, the feature hash."""
    words = words[: MAX_FEATURES + SHINGLE_WORDS - 1]
    blob = _lanes_joined(words)
    low = _LANE - 8
    if len(words) < SHINGLE_WORDS:
        return [blob[low + j :: _LANE] for j in range(8)], len(words)
    n = len(words) - SHINGLE_WORDS + 1
    w_int = int.from_bytes(blob, "big")
    bits = 8 * _LANE
    total = w_int * K1 + (w_int << bits) * K2 + (w_int << 2 * bits)
    # lanes from the top: 2 pushed out by the shifts, the n shingles (word i's lane), then
    # 2 partial sums of the last words
    raw = total.to_bytes(_LANE * (n + 4), "big")[2 * _LANE : (n + 2) * _LANE]
    return [raw[low + j :: _LANE] for j in range(8)], n


def simhash(text: str) -> int:
    """The 64-bit SimHash of ``text`` (see the module contract)."""
    words = word_bytes(text, MAX_FEATURES + SHINGLE_WORDS - 1)
    if not words:
        return 0
    columns, n = _columns(words)
    out = bytearray(8)
    # Votes counted column by column in C: a column read as one big integer has bit b
    # of every feature's byte at positions b, b + 8, ...; the features that set it are
    # counted by int.bit_count of (column & 0x0101..01 << b).
    ones = int.from_bytes(b"\x01" * n, "big")
    masks = [ones << bit for bit in range(8)]
    for j, raw in enumerate(columns):
        column = int.from_bytes(raw, "big")
        byte = 0
        for bit, mask in enumerate(masks):
            if (column & mask).bit_count() * 2 > n:
                byte |= 1 << bit
        out[j] = byte
    return int.from_bytes(out, "big")


def hamming(a: int, b: int) -> int:
    """Bits in which two 64-bit fingerprints differ."""
    return (a ^ b).bit_count()


def visible_text(tree: Any) -> str:
    """Text of the body of a lexbor ``tree`` without hidden elements (mutates ``tree``)."""
    tree.strip_tags(_HIDDEN)
    root = tree.body if tree.body is not None else tree.root
    if root is None:
        return ""
    return str(root.text(deep=True, separator=" ", strip=False))
