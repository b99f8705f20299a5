"""Sorting the CDXJ index in place, so replay tools can binary-search it as written.

pywb (and other CDXJ readers) look lines up by binary search over the file, comparing
bytes; an index in capture order makes almost every lookup miss. The index is appended in
capture order while a crawl runs (appending is what keeps it crash-safe) and sorted once
when the store closes.

Contract of ``sort_index``: afterwards the file holds the same lines, sorted by their
bytes (``LC_ALL=C sort`` order). It is an external merge sort (runs of at most
``run_lines`` lines sorted in memory, then merged), so memory stays bounded however large
the index. The sorted copy is written beside the index (``<name>.sorting``), fsynced and
then renamed over it: a crash at any moment leaves either the old or the sorted index,
never a mix. Leftovers of an interrupted sort are removed by ``discard_leftovers``.

``sorted_lines`` gives the same order without touching the index (for a reader such as
``headway export``, which must not rewrite a crawl directory it packages): the index's
own lines when it is sorted, else a merge of sorted runs written into a scratch
directory the caller owns.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import logging
import os
from collections.abc import Iterator
from pathlib import Path

from headway import crashpoints
from headway.crashpoints import CrashPoint

log = logging.getLogger(__name__)

RUN_LINES = 500_000


def _lines(path: Path) -> Iterator[bytes]:
    with path.open("rb") as fh:
        for line in fh:
            yield line if line.endswith(b"\n") else line + b"\n"


def is_sorted(path: Path) -> bool:
    prev = b""
    for line in _lines(path):
        if line < prev:
            return False
        prev = line
    return True


#: Bytes read from each end (and the middle) of an index by ``looks_sorted``.
SAMPLE_BYTES = 64 * 1024


def looks_sorted(path: Path, sample: int = SAMPLE_BYTES) -> bool:
    """Whether the index reads as sorted in three samples of ``sample`` bytes (its start,
    middle and end; whole lines only): False is certain, True is a strong hint. What a
    crawl that never closed its store leaves (lines appended in capture order since the
    last sort) is out of order within its last lines. Reads at most 3 samples, however
    large the index (``headway status`` must stay fast)."""
    try:
        size = path.stat().st_size
        with path.open("rb") as fh:
            for start in sorted({0, max(0, size // 2 - sample // 2), max(0, size - sample)}):
                fh.seek(start)
                lines = fh.read(sample).split(b"\n")
                if start:
                    lines = lines[1:]  # the first may be the end of a line
                lines = lines[:-1]  # the last may be cut
                if any(b < a for a, b in itertools.pairwise(lines)):
                    return False
    except OSError:
        return True  # unreadable here: nothing to say about its order
    return True


def _leftovers(path: Path) -> list[Path]:
    return [
        p
        for p in path.parent.glob(path.name + ".*")
        if p.name == path.name + ".sorting" or p.name.startswith(path.name + ".run-")
    ]


def discard_leftovers(path: Path) -> None:
    """Remove what an interrupted ``sort_index`` of ``path`` left beside it."""
    for p in _leftovers(path):
        p.unlink(missing_ok=True)


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_runs(path: Path, where: Path, stem: str, run_lines: int, runs: list[Path]) -> None:
    """Sorted runs of at most ``run_lines`` lines of ``path``, written into ``where`` and
    appended to ``runs`` as they are made (so a failure leaves them listed for removal)."""
    lines = _lines(path)
    while chunk := list(itertools.islice(lines, run_lines)):
        chunk.sort()
        run = where / f"{stem}{len(runs)}"
        run.write_bytes(b"".join(chunk))
        runs.append(run)


@contextlib.contextmanager
def sorted_lines(
    path: Path, scratch: Path, *, run_lines: int = RUN_LINES
) -> Iterator[Iterator[bytes]]:
    """The lines of the index at ``path`` in sorted order (each ending in a newline), in
    bounded memory, leaving ``path`` as it is: read straight from it when it is sorted,
    else merged from runs written into ``scratch`` and removed on leaving the context."""
    if not path.exists():
        yield iter(())
        return
    if is_sorted(path):
        yield _lines(path)
        return
    runs: list[Path] = []
    try:
        _write_runs(path, scratch, f"{path.name}.run-", run_lines, runs)
        with contextlib.ExitStack() as stack:
            sources = [stack.enter_context(r.open("rb")) for r in runs]
            yield heapq.merge(*sources)
    finally:
        for run in runs:
            run.unlink(missing_ok=True)


def sort_index(path: Path, *, run_lines: int = RUN_LINES) -> bool:
    """Sort the index at ``path`` in place (see the module docstring); False when it was
    already sorted (or absent) and nothing was rewritten."""
    if not path.exists() or is_sorted(path):
        return False
    discard_leftovers(path)
    runs: list[Path] = []
    try:
        _write_runs(path, path.parent, f"{path.name}.run-", run_lines, runs)
        tmp = path.with_name(path.name + ".sorting")
        with contextlib.ExitStack() as stack, tmp.open("wb") as out:
            sources = [stack.enter_context(r.open("rb")) for r in runs]
            out.writelines(heapq.merge(*sources))
            out.flush()
            os.fsync(out.fileno())
        crashpoints.reached(CrashPoint.INDEX_SORTING)
        os.replace(tmp, path)
        _fsync_dir(path.parent)
    finally:
        for run in runs:
            run.unlink(missing_ok=True)
    log.info("sorted the index %s (%d runs)", path.name, len(runs))
    return True
