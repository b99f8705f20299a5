"""Memory of a whole process tree, read from /proc (Linux): a process and every
descendant (parser processes under the forkserver included), sampled while it runs."""

from __future__ import annotations

import os
import threading
from pathlib import Path

__all__ = ["TreeMemorySampler", "tree_pids", "tree_rss_bytes"]

_PAGE = os.sysconf("SC_PAGE_SIZE")


def _children() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue  # the process ended while we looked
        # the command name (field 2) may hold spaces and parentheses: split after it
        fields = stat[stat.rfind(")") + 2 :].split()
        kids.setdefault(int(fields[1]), []).append(int(entry.name))
    return kids


def tree_pids(root: int) -> list[int]:
    """``root`` and every live descendant."""
    kids = _children()
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(kids.get(pid, ()))
    return out


def tree_rss_bytes(root: int) -> int:
    """Resident memory of ``root`` and all its descendants now (0 once it has ended)."""
    total = 0
    for pid in tree_pids(root):
        try:
            resident = int(Path(f"/proc/{pid}/statm").read_text().split()[1])
        except (OSError, IndexError, ValueError):
            continue
        total += resident * _PAGE
    return total


class TreeMemorySampler:
    """Samples ``tree_rss_bytes(pid)`` every ``interval`` seconds in a thread; ``peak``
    is the largest sample (use as a context manager around the process's life)."""

    def __init__(self, pid: int, interval: float = 0.05) -> None:
        self.pid = pid
        self.interval = interval
        self.peak = 0
        self.samples = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, tree_rss_bytes(self.pid))
            self.samples += 1
            self._stop.wait(self.interval)

    def __enter__(self) -> TreeMemorySampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)
