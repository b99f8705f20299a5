"""Dedup against earlier crawls (``--dedup-from PATH``, repeatable): the payload digests
of an earlier crawl's captures go into this crawl's frontier before it fetches, so that
a payload already archived there is written as a ``revisit`` record
(identical-payload-digest profile) whose ``WARC-Refers-To-Target-URI`` and
``WARC-Refers-To-Date`` name the earlier capture.

- ``PATH`` is an earlier crawl directory (its ``index*.cdxj``: one index per node) or a
  CDXJ index file. A Parquet index is refused: this version writes none to read.
- The digests are kept where the crawl keeps its own (``FrontierStore.put_payloads``:
  the SQLite frontier, or the shared crawl's store, so every node of a shared crawl
  finds them), streamed in batches; the first capture recorded for a digest wins, so a
  capture of this crawl is never replaced. Each index file is read once per crawl: its
  size and modification time are kept in the frontier's meta (``dedup-from:<path>``), so
  a restart (also after ``kill -9``) reads it again only when it changed.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from pathlib import Path

from headway.errors import ConfigError
from headway.frontier.store import FrontierStore
from headway.store.cdxj import REVISIT_MIME, iso_from_timestamp14, parse_cdxj_line

log = logging.getLogger(__name__)

KEY = "store.dedup_from"
META = "dedup-from:"


def dedup_indexes(paths: Sequence[str]) -> list[Path]:
    """The CDXJ index files the ``--dedup-from`` paths name; ``ConfigError`` naming the
    setting for a path that is missing or of no kind read here."""
    found: list[Path] = []
    for text in paths:
        path = Path(text)
        if path.is_dir():
            if not (path / "headway.json").exists():
                raise ConfigError(KEY, f"{path} is not a headway crawl directory")
            indexes = sorted(path.glob("index*.cdxj"))
            if not indexes:
                raise ConfigError(KEY, f"{path} holds no CDXJ index (index*.cdxj)")
            found.extend(indexes)
        elif path.suffix == ".parquet":
            raise ConfigError(
                KEY,
                f"{path}: Parquet indexes are not read yet; give the crawl directory or "
                "its CDXJ index",
            )
        elif path.is_file():
            found.append(path)
        else:
            raise ConfigError(KEY, f"{path}: no such crawl directory or index file")
    return [p.resolve() for p in found]


def _captures(path: Path) -> Iterator[tuple[str, str, str]]:
    """(digest, URI, WARC-Date) of each capture (not a revisit) in a CDXJ index."""
    with path.open(encoding="utf-8", errors="replace") as fh:
        for line in fh:
            parsed = parse_cdxj_line(line)
            if parsed is None:
                continue
            _key, stamp, fields = parsed
            digest, url = fields.get("digest"), fields.get("url")
            if fields.get("mime") == REVISIT_MIME or str(fields.get("status", "")) == "304":
                continue
            if isinstance(digest, str) and isinstance(url, str):
                yield digest, url, iso_from_timestamp14(stamp)


def import_earlier_payloads(
    frontier: FrontierStore, indexes: Sequence[Path], batch: int = 10_000
) -> int:
    """Put the captures of ``indexes`` into the frontier's payload digests (see the
    module docstring); how many captures were read (0 for files read before)."""
    total = 0
    for path in indexes:
        stat = path.stat()
        mark = f"{stat.st_size}:{stat.st_mtime_ns}"
        key = META + str(path)
        if frontier.get_meta(key) == mark:
            continue
        items: list[tuple[str, str, str]] = []
        n = 0
        for item in _captures(path):
            items.append(item)
            if len(items) >= batch:
                frontier.put_payloads(items)
                n += len(items)
                items = []
        frontier.put_payloads(items)
        n += len(items)
        frontier.set_meta(key, mark)
        log.info("dedup against %s: %d earlier captures", path, n)
        total += n
    return total
