"""URL fingerprints: a stable signed 64-bit integer per URL, the key of the seen filter.

Contract: ``fingerprint(u)`` is the first 8 bytes of BLAKE2b (``digest_size=8``) of the
UTF-8 encoding of ``u``, read big-endian as a signed integer, so it fits an SQLite
INTEGER and never changes across processes, machines or Python versions (unlike
``hash()``). Callers fingerprint canonical URLs.
"""

from __future__ import annotations

from collections.abc import Iterable
from hashlib import blake2b

__all__ = ["fingerprint", "fingerprints"]


def fingerprint(url: str) -> int:
    """Signed 64-bit fingerprint of ``url``."""
    return int.from_bytes(blake2b(url.encode(), digest_size=8).digest(), "big", signed=True)


def fingerprints(urls: Iterable[str]) -> list[int]:
    """Fingerprints of ``urls``, in order."""
    from_bytes = int.from_bytes
    return [
        from_bytes(blake2b(u.encode(), digest_size=8).digest(), "big", signed=True) for u in urls
    ]
