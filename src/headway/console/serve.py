"""The console a crawling node serves (``headway crawl|node --console-port N``): its
server and where it reads the crawl from; the command line prints its address
(``cli/console.py``)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from headway.console.app import ConsoleServer
from headway.console.sources import ControlDesk, LiveSource, SharedSource, Source
from headway.control import CrawlRef
from headway.runtime.snapshot import Snapshotter
from headway.settings import Settings
from headway.threads import ThreadWorker


def node_console(
    settings: Settings, snapshotter: Callable[[], Snapshotter | None]
) -> tuple[ConsoleServer, Callable[[], Any]] | None:
    """The console a crawling node serves (None when ``--console-port`` is 0), and what
    closes its parts after ``stop``."""
    c = settings.console
    if not c.console_port:
        return None
    worker = ThreadWorker("console")
    store = settings.frontier.store
    out = settings.crawl.out
    source: Source
    if store:
        crawl_id = settings.distributed.crawl_id or ""
        source = SharedSource(store, crawl_id, worker)
        ref = CrawlRef(store=store, crawl_id=crawl_id)
    else:
        source = LiveSource(snapshotter, str(out))
        ref = CrawlRef(directory=out)
    desk = ControlDesk(ref, worker)

    def close() -> None:
        desk.close()
        if isinstance(source, SharedSource):
            source.close()

    server = ConsoleServer(source, desk, host=c.console_host, port=c.console_port, token_dir=out)
    return server, lambda: _close_worker(worker, close)


def _close_worker(worker: ThreadWorker, close: Callable[[], None]) -> None:
    with contextlib.suppress(Exception):
        close()
    worker.shutdown()
