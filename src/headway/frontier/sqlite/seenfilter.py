"""The SQLite frontier's Bloom filter in front of its ``seen`` table (``SeenFilter``):
sized to the seen set, grown 16-fold when a transaction outgrows it, checkpointed to a
bitmap beside the database and loaded from it at the next open, after a clean close or
a kill alike. The table decides what was seen (``admission.py`` inserts through ``INSERT
... ON CONFLICT DO NOTHING``), so a filter loaded from a checkpoint older than the table
only misses URLs it then learns; without a checkpoint (a new or small store, a damaged
file) it is rebuilt from all of ``seen``: about 2.5 us a fingerprint in CPython plus
reading the table, about 19 minutes at 96 million fingerprints on the benchmark machine
with the file not in the OS's cache. Also here: the warning when the seen set outgrows
what the page cache keeps fast."""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import time
from pathlib import Path

from headway import crashpoints
from headway.crashpoints import CrashPoint
from headway.errors import StoreError
from headway.frontier.bloom import (
    BloomFilter,
    capacity_for,
    load_bitmap,
    save_bitmap,
    worth_saving,
)
from headway.frontier.store import FrontierLimits

log = logging.getLogger(__name__)

#: Fewest fingerprints added between two checkpoints of the Bloom filter; with a large
#: filter, one sixteenth of its bytes (bitmap written per fingerprint: at most 16 bytes).
CHECKPOINT_MIN_ADDED = 1_000_000

#: Bytes of page cache per seen URL under which admission slows down (measured: a 64 MiB
#: cache kept its rate at 10 million URLs, 6.7 bytes each, and lost two thirds of it by
#: 14 million, 4.8; docs/scaling.md, "Past 10 million URLs: the page cache sets the pace").
CACHE_BYTES_PER_URL = 6


def checkpoint_every(bloom: BloomFilter) -> int:
    """Fingerprints added after which the Bloom filter is checkpointed."""
    return max(CHECKPOINT_MIN_ADDED, bloom.nbytes // 16)


class SeenFilter:
    """The Bloom filter of the seen set of the store on ``conn`` (its bitmap at
    ``path``), opened for ``seen`` fingerprints; ``cache_bytes``: the store's page cache.
    Called by the store's single writer, between transactions."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        path: Path,
        limits: FrontierLimits,
        seen: int,
        cache_bytes: int,
    ) -> None:
        self._conn = conn
        self._path = path
        self._limits = limits
        self._cache_bytes = cache_bytes
        self._cache_warned = False
        self.capacity = capacity_for(seen, limits.bloom_capacity)
        self.bloom = BloomFilter(self.capacity, limits.bloom_error)
        self._recent = 0  # fingerprints added since the last checkpoint
        started = time.perf_counter()
        covered = load_bitmap(self.bloom, path)
        if covered is not None:
            how = f"loaded from its checkpoint of {covered} fingerprints"
            self._recent = max(0, seen - covered)  # missing from it until seen again
        else:  # load_bitmap left the filter empty
            how = "rebuilt from the seen table (no checkpoint to load)"
            self._fill(self.bloom)
            if worth_saving(self.bloom, seen):
                self.checkpoint(seen)
        self._check_cache(seen)
        #: how the filter was filled, and in how many seconds (for the store's open line)
        self.opened = (how, time.perf_counter() - started)

    def committed(self, added: int, seen: int) -> None:
        """A transaction added ``added`` fingerprints, ``seen`` in all: grow the filter
        when the seen set outgrew it, or checkpoint it when due."""
        self._recent += added
        if seen > self.capacity:
            self._grow(seen)
        elif self._recent >= checkpoint_every(self.bloom):
            self.checkpoint(seen)

    def close(self, seen: int) -> None:
        """A checkpoint at a clean close, if anything was added since the last one."""
        if self._recent:
            self.checkpoint(seen)

    def checkpoint(self, seen: int) -> None:
        """Save the bitmap of ``seen`` fingerprints for the next open; none for a seen
        set too small to be worth it (the next open rebuilds it)."""
        self._recent = 0
        self._check_cache(seen)
        started = time.perf_counter()
        if not worth_saving(self.bloom, seen):
            with contextlib.suppress(OSError):  # an older one, of another size: harmless
                self._path.unlink(missing_ok=True)
        elif save_bitmap(self.bloom, self._path, seen):
            log.info(
                "Bloom filter checkpoint: %d fingerprints (%d KiB) in %.2f s",
                seen,
                self.bloom.nbytes >> 10,
                time.perf_counter() - started,
            )
        crashpoints.reached(CrashPoint.BLOOM_SAVED)

    def _fill(self, bloom: BloomFilter) -> None:
        try:
            cur = self._conn.execute("SELECT fp FROM seen")
            while rows := cur.fetchmany(65_536):
                bloom.add_many(r[0] for r in rows)
        except sqlite3.Error as exc:  # a grown filter is not used: the old one stays
            raise StoreError(f"frontier store failed: {exc}") from exc

    def _grow(self, seen: int) -> None:
        """Replace the filter by one sized for the seen set (the committed table holds
        every fingerprint the old filter did)."""
        capacity = capacity_for(seen, self._limits.bloom_capacity)
        if capacity <= self.capacity:
            return  # at the configured capacity: it fills past it, hits are confirmed
        started = time.perf_counter()
        bloom = BloomFilter(capacity, self._limits.bloom_error)
        self._fill(bloom)
        self.bloom, self.capacity = bloom, capacity
        took = time.perf_counter() - started
        log.info(
            "Bloom filter grown to %d KiB (%d URLs) in %.2f s", bloom.nbytes >> 10, capacity, took
        )
        self.checkpoint(seen)  # the last one is of the smaller filter: no longer loadable

    def _check_cache(self, seen: int) -> None:
        """Warn once when the seen set outgrows what the page cache keeps fast."""
        if self._cache_warned or seen * CACHE_BYTES_PER_URL <= self._cache_bytes:
            return
        self._cache_warned = True
        want = -(-seen * CACHE_BYTES_PER_URL * 4 // 2**20)  # room to grow 4-fold
        log.warning(
            "the frontier holds %d URLs and its page cache is %d KiB: with under %d bytes"
            " of cache per URL admission slows down (docs/scaling.md); --frontier-cache-mib"
            " %d or more keeps it fast",
            seen,
            self._cache_bytes >> 10,
            CACHE_BYTES_PER_URL,
            want,
        )
