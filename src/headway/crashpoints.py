"""Named crash points: deterministic kills at each durable step, for crash-safety tests.

``HEADWAY_CRASH_AT=NAME[:N]`` in a process's environment arms the point ``NAME``: the
``N``-th time (default 1) that process reaches it, the process sends itself ``SIGKILL``,
with no clean-up of any kind, exactly like ``kill -9`` at that instant. The variable is
read once, when this module is first imported; unarmed, ``reached`` is a call that
returns at once and ``hit`` a single comparison.

The store points also hand what was written so far to the operating system just before
the kill (as a buffer that filled up could have done), so that the files on disk are the
worst case for that step: for example the index line of a page present and its crawl-log
line absent. The points and where they lie are listed in ``CrashPoint`` and documented in
docs/crawl-directory.md.
"""

from __future__ import annotations

import os
import signal
from enum import StrEnum
from typing import NoReturn

ENV = "HEADWAY_CRASH_AT"


class CrashPoint(StrEnum):
    # start-up
    RECOVERY_WARC_CUT = "recovery-warc-cut"  # a WARC file's torn tail cut, index not yet
    RECOVERY_CDXJ_TMP = "recovery-cdxj-tmp"  # repaired index written aside, not in place
    LEASES_RELEASED = "leases-released"  # the last run's leases put back, seeds not added
    # one page
    LEASED = "leased"  # a page's lease committed, its fetch not started
    FETCHED = "fetched"  # a page fetched, not yet handed to parse or store
    WARC_PARTIAL = "warc-partial"  # half of a page's WARC records written
    WARC_WRITTEN = "warc-written"  # a page's WARC records written, its index line not
    TEXT_WRITTEN = "text-written"  # its text record written (--text), its index line not
    CDXJ_WRITTEN = "cdxj-written"  # its index line written, its crawl-log line not
    LOG_WRITTEN = "log-written"  # its crawl-log line written, the batch not flushed
    WARC_ROTATED = "warc-rotated"  # a full WARC file closed, the next one not opened
    # one batch
    STORE_FLUSHED = "store-flushed"  # a batch flushed to the OS, not yet settled
    INDEX_PART_TMP = "index-part-tmp"  # a Parquet index part written aside, not renamed
    SETTLED = "settled"  # a settle transaction committed
    # any frontier transaction (add, lease, settle)
    FRONTIER_UNCOMMITTED = "frontier-uncommitted"  # its writes made, COMMIT not yet run
    # a clean stop
    INDEX_SORTING = "index-sorting"  # the sorted index written aside, not in place
    STORE_CLOSED = "store-closed"  # store files closed, the frontier not yet closed
    BLOOM_SAVED = "bloom-saved"  # the Bloom bitmap saved, the frontier not yet closed
    # a parser process (kills that process only)
    PARSE = "parse"  # a parser process about to parse a page


def _parse(value: str | None) -> tuple[CrashPoint, int] | None:
    if not value:
        return None
    name, _, nth = value.partition(":")
    try:
        point = CrashPoint(name.strip())
        count = int(nth) if nth else 1
    except ValueError:
        raise ValueError(
            f"{ENV}={value!r}: expected NAME[:N] with NAME one of "
            f"{', '.join(p.value for p in CrashPoint)} and N >= 1"
        ) from None
    if count < 1:
        raise ValueError(f"{ENV}={value!r}: N must be at least 1")
    return point, count


def _read_env() -> tuple[tuple[CrashPoint, int] | None, str | None]:
    try:
        return _parse(os.environ.get(ENV)), None
    except ValueError as exc:
        return None, str(exc)


_ARMED, ENV_ERROR = _read_env()
#: The armed point, or None; compared by identity on every ``hit``.
ARMED_POINT: CrashPoint | None = _ARMED[0] if _ARMED is not None else None
_remaining = _ARMED[1] if _ARMED is not None else 0


def hit(point: CrashPoint) -> bool:
    """True when this reach of ``point`` is the one armed (the caller then makes the
    on-disk state of that instant and calls ``crash``)."""
    global _remaining
    if point is not ARMED_POINT:
        return False
    _remaining -= 1
    return _remaining == 0


def reached(point: CrashPoint) -> None:
    """Kill this process here if this reach of ``point`` is the one armed."""
    if point is ARMED_POINT and hit(point):
        crash()


def crash() -> NoReturn:
    """``SIGKILL`` this process: no handler, no ``finally``, no buffered writes."""
    os.kill(os.getpid(), signal.SIGKILL)
    raise AssertionError("unreachable")  # pragma: no cover
