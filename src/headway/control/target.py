"""Which crawl a control command, a report or the console names, and its control log.

A crawl is named as on the command line: a crawl directory (``DIR``, its embedded
frontier) or a shared crawl (``--store URL --crawl-id ID``). ``open_control_log``
gives its log or a one-line error: ``ControlError`` when there is no such crawl,
``StoreError`` when the store cannot be reached (its password masked).
"""

from __future__ import annotations

import getpass
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from headway.control.log import ControlLog
from headway.errors import ControlError, StoreError

#: The crawl directory's marker and frontier file names (runtime/crawldir.py,
#: frontier/sqlite/), repeated here so naming a crawl imports neither.
MARKER = "headway.json"
FRONTIER_FILE = "frontier.sqlite3"


@dataclass(frozen=True, slots=True)
class CrawlRef:
    """A crawl directory (``directory``) or a shared crawl (``store`` and ``crawl_id``)."""

    directory: Path | None = None
    store: str = ""
    crawl_id: str | None = None

    @property
    def shared(self) -> bool:
        return bool(self.store)

    def check(self) -> None:
        """``ControlError`` unless the reference names one crawl."""
        if self.store:
            if not self.crawl_id:
                raise ControlError("a shared crawl needs --crawl-id with --store")
            return
        if self.directory is None:
            raise ControlError(
                "give a crawl directory, or --store and --crawl-id of a shared crawl"
            )

    def shown(self) -> str:
        """The crawl as it may be printed (a store's password masked)."""
        if self.store:
            from headway.frontier.storeurl import mask_store_url

            return f"crawl {self.crawl_id} in {mask_store_url(self.store)}"
        return str(self.directory)


def cli_origin() -> str:
    """The origin of a control given from a shell: ``cli user@host``."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = "?"
    return f"cli {user}@{socket.gethostname()}"


def frontier_file(directory: Path) -> Path:
    """The embedded frontier of a crawl directory; ``ControlError`` when ``directory`` is
    not a crawl directory or holds no embedded frontier."""
    if not directory.is_dir():
        raise ControlError(f"no crawl at {directory}: not a directory")
    if not (directory / MARKER).exists():
        raise ControlError(f"no crawl at {directory}: not a headway crawl directory (no {MARKER})")
    path = directory / FRONTIER_FILE
    if not path.exists():
        raise ControlError(
            f"{directory} holds no embedded frontier; for a node of a shared crawl give"
            " --store and --crawl-id"
        )
    return path


def open_control_log(
    ref: CrawlRef, *, read_only: bool = False, must_exist: bool = True
) -> ControlLog:
    """The control log of the crawl ``ref`` names (see the module docstring). A node
    opens its shared crawl's log with ``must_exist`` False: its frontier has opened the
    crawl already, and a crawl lost since is the frontier's to notice and say (the
    crawl epoch), not a 'no crawl' from here."""
    ref.check()
    if ref.store:
        client, where = connect_shared(ref, must_exist=must_exist)
        from headway.control.redis_log import RedisControlLog

        return RedisControlLog(client, ref.crawl_id or "", where=where)
    assert ref.directory is not None
    from headway.control.sqlite_log import SqliteControlLog

    return SqliteControlLog(frontier_file(ref.directory), read_only=read_only)


def connect_shared(ref: CrawlRef, *, must_exist: bool = True) -> tuple[Any, str]:
    """A Redis client for the shared crawl ``ref`` names, checked to exist (unless
    ``must_exist`` is False), and the store's masked name."""
    import redis

    from headway.frontier.redis.connect import connect, parse_store_url
    from headway.frontier.redis.keys import CrawlKeys

    url = parse_store_url(ref.store)
    where = url.masked()
    crawl = ref.crawl_id or ""
    if any(c in crawl for c in "{}: "):
        raise ControlError(f"crawl id {crawl!r} must be without {{, }}, : or space")
    client = connect(url)
    if not must_exist:
        return client, where
    try:
        known = client.hexists(CrawlKeys(crawl).meta, "shards")
    except redis.RedisError as exc:
        client.close()
        raise StoreError(f"cannot reach {where}: {exc}") from None
    if not known:
        client.close()
        raise ControlError(f"no crawl {crawl!r} in {where}")
    return client, where
