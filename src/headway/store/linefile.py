"""An append-only text file of lines, the shape shared by the CDXJ index and the crawl
log: opened for appending, written line by line, flushed to the OS per batch and fsynced
on request."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TextIO

from headway.errors import StoreError


class LineFile:
    def __init__(self, path: Path, what: str) -> None:
        self._path = Path(path)
        self._what = what
        try:
            self._file: TextIO | None = open(  # noqa: SIM115 - owned by this object
                self._path, "a", encoding="utf-8", newline="\n"
            )
        except OSError as e:
            raise StoreError(f"cannot open {what} {path}: {e}") from e

    def write_line(self, line: str) -> None:
        if self._file is None:
            raise StoreError(f"{self._what} {self._path} is closed")
        self._file.write(line)

    def flush(self, *, sync: bool = True) -> None:
        """Hand written lines to the operating system (enough for them to survive the
        death of this process); with ``sync`` also fsync them to the device."""
        if self._file is not None:
            self._file.flush()
            if sync:
                os.fsync(self._file.fileno())

    def close(self) -> None:
        if self._file is not None:
            self.flush()
            self._file.close()
            self._file = None
