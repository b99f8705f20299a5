"""A single OS thread that runs blocking calls (SQLite, WARC gzip) off the event loop.

One thread per resource keeps the resource single-threaded (SQLite connections and the
WARC writer need no locks) while the event loop only awaits. It is the node's, the
console's and the store writer's alike, so it sits below them all and imports nothing of
headway.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")


class ThreadWorker:
    def __init__(self, name: str) -> None:
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix=name)
        self._cpu = 0.0  # written by the worker thread only

    async def call(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(
            self._pool, self._timed, functools.partial(fn, *args, **kwargs)
        )

    def _timed(self, work: Callable[[], T]) -> T:
        t0 = time.thread_time()
        try:
            return work()
        finally:
            self._cpu += time.thread_time() - t0

    def cpu_seconds(self) -> float:
        """CPU seconds this worker's thread has spent in calls so far."""
        return self._cpu

    def shutdown(self) -> None:
        self._pool.shutdown(wait=True)
