"""Parser processes: pages cross the process boundary once, links come back canonical.

The pool is bounded by a gate of ``capacity`` pages (waiting or being parsed); the node
starts no new fetch while the gate is full, so a slow parser slows fetching instead of
filling memory. A crashed worker process breaks the pool; it is rebuilt and the page is
recorded as a parse error rather than lost.

``HEADWAY_TEST_PARSE_SLEEP=SECONDS`` (``PARSE_SLEEP_ENV``) in the node's environment when
a pool starts is a test seam, not a setting: each parser process of that pool then sleeps
that long before every page it parses, so that tests can make the parse stage the slow
one. The node reads it here and hands it to its parser processes (they are forked from a
forkserver that may have started before the variable was set).
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import os
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import forkserver

from headway import crashpoints
from headway.crashpoints import CrashPoint
from headway.parse.handlers import run_task
from headway.parse.page import ParsedPage, ParseTask
from headway.runtime.lifeline import (
    die_with,
    ignore_stop_signals,
    quiet_resource_tracker,
    start_deaf_to_stop,
)
from headway.runtime.stage import StageStats

log = logging.getLogger(__name__)

#: Test seam (see the module docstring): seconds each parser process sleeps per page.
PARSE_SLEEP_ENV = "HEADWAY_TEST_PARSE_SLEEP"
_parse_sleep = 0.0  # in a parser process: set by _init_parser


def _test_parse_sleep() -> float:
    """The seconds ``PARSE_SLEEP_ENV`` asks for (0 when unset; a bad value is an error
    naming the variable, as it is only ever set by tests)."""
    raw = os.environ.get(PARSE_SLEEP_ENV, "")
    try:
        seconds = float(raw) if raw else 0.0
    except ValueError:
        raise ValueError(f"{PARSE_SLEEP_ENV}={raw!r}: expected seconds") from None
    if not 0 <= seconds <= 60:
        raise ValueError(f"{PARSE_SLEEP_ENV}={raw!r}: expected 0 .. 60 seconds")
    return seconds


def _timed_parse(
    tasks: Sequence[ParseTask],
) -> tuple[list[ParsedPage | str], int, float]:
    """Runs in a parser process: each page parsed (or its error message), and this
    process's pid and CPU seconds so far (parser processes are not the node's children
    under forkserver, so the node cannot count their CPU any other way)."""
    out: list[ParsedPage | str] = []
    for task in tasks:
        crashpoints.reached(CrashPoint.PARSE)
        if _parse_sleep:
            time.sleep(_parse_sleep)  # test seam, see PARSE_SLEEP_ENV
        try:
            out.append(run_task(task))
        except Exception as exc:  # one bad page must not fail its batch
            out.append(f"parse error: {type(exc).__name__}: {exc}")
    t = os.times()
    return out, os.getpid(), t.user + t.system


def _cpu_now() -> tuple[int, float]:
    t = os.times()
    return os.getpid(), t.user + t.system


def _init_parser(node_pid: int, parse_sleep: float = 0.0) -> None:
    """Parser processes leave Ctrl-C and SIGTERM to the node, which stops them in order
    (a terminal's SIGINT, ``timeout``'s and systemd's SIGTERM reach the whole process
    group), and exit when the node is gone; ``parse_sleep`` is the test seam
    (``PARSE_SLEEP_ENV``)."""
    global _parse_sleep
    _parse_sleep = parse_sleep
    ignore_stop_signals()
    die_with(node_pid)


class ParsePool:
    def __init__(self, workers: int, capacity: int, batch: int = 1, timeout: float = 60.0) -> None:
        self.workers = workers
        self.capacity = capacity  # calls in flight
        self.batch = batch  # most pages per call
        self.timeout = timeout  # a call that takes longer is abandoned
        self.timeouts = 0
        self._parse_sleep = _test_parse_sleep()
        quiet_resource_tracker()  # before the first pool starts the tracker
        self._ctx = multiprocessing.get_context("forkserver")
        self._pool = self._new_pool()
        self._gate = asyncio.Semaphore(capacity)
        self._waiting: dict[int, tuple[float, int]] = {}  # call -> (start, pages)
        self._seq = 0
        self._submitted = 0
        self._blocked = 0
        self.crashes = 0
        self._worker_cpu: dict[int, float] = {}  # parser pid -> its CPU seconds so far
        self._worker_base: dict[int, float] = {}  # parser pid -> CPU seconds at warm-up

    def _new_pool(self) -> ProcessPoolExecutor:
        # the forkserver, which forks the parser processes, is started deaf to the stop
        # signals a process group gets (the resource tracker ignores them itself)
        start_deaf_to_stop(forkserver.ensure_running)
        return ProcessPoolExecutor(
            max_workers=self.workers,
            mp_context=self._ctx,
            initializer=_init_parser,
            initargs=(os.getpid(), self._parse_sleep),
        )

    def _replace_pool(self, failed: ProcessPoolExecutor) -> None:
        """Replace ``failed`` (its processes are killed, stuck ones included) unless it was
        replaced already: a batch must never take down a pool that is newer than its own."""
        if failed is not self._pool:
            return
        self._pool = self._new_pool()
        processes = list(getattr(failed, "_processes", {}).values())
        failed.shutdown(wait=False, cancel_futures=True)
        for proc in processes:
            if proc.is_alive():
                proc.kill()

    async def parse_many(self, tasks: Sequence[ParseTask]) -> list[ParsedPage | str]:
        """Parse several pages in one round trip to a parser process (one pickle, one
        wake-up); each result is the page or an error message."""
        if self._gate.locked():
            self._blocked += 1
        async with self._gate:
            self._seq += 1
            key = self._seq
            self._waiting[key] = (time.monotonic(), len(tasks))
            self._submitted += len(tasks)
            try:
                return await self._run(tasks)
            except Exception as exc:  # a bug in the pool must not stop the crawl
                log.exception("parse failed for %s", tasks[0].url if tasks else "-")
                return [f"parse error: {type(exc).__name__}: {exc}"] * len(tasks)
            finally:
                del self._waiting[key]

    async def _run(self, tasks: Sequence[ParseTask]) -> list[ParsedPage | str]:
        loop = asyncio.get_running_loop()
        for attempt in (1, 2):
            pool = self._pool
            try:
                call = loop.run_in_executor(pool, _timed_parse, tasks)
                # asyncio.timeout, not wait_for: on Python 3.11 wait_for can swallow a
                # cancellation that arrives as the call completes, and the task group
                # that cancelled this dispatcher would then wait for it forever
                async with asyncio.timeout(self.timeout):
                    pages, pid, cpu = await call
            except TimeoutError:
                # a parser stuck on a page would hold its URL forever: record the pages as
                # failed to parse and replace the processes (the stuck one is killed)
                self.timeouts += 1
                log.warning(
                    "parsing %d page(s) took over %.0f s (first %s); restarting the "
                    "parser processes",
                    len(tasks),
                    self.timeout,
                    tasks[0].url,
                )
                self._replace_pool(pool)
                return [f"parse timed out after {self.timeout:g}s"] * len(tasks)
            except BrokenProcessPool:
                if pool is not self._pool and attempt == 1:
                    continue  # replaced under it for another batch: one more try
                self.crashes += 1
                log.warning("a parser process died; restarting the pool")
                self._replace_pool(pool)
                return ["parser process died"] * len(tasks)
            self._worker_cpu[pid] = cpu
            return pages
        raise AssertionError("unreachable")

    def statistics(self) -> StageStats:
        """Pages in the parser processes (or waiting for one); the capacity is calls
        in flight times the largest batch."""
        waiting = list(self._waiting.values())
        oldest = time.monotonic() - min(t for t, _ in waiting) if waiting else 0.0
        depth = sum(n for _, n in waiting)
        return StageStats(
            "parse", depth, self.capacity * self.batch, oldest, self._submitted, self._blocked
        )

    def cpu_seconds(self) -> float:
        """CPU seconds the parser processes have used since warm-up (as of their latest
        page)."""
        return sum(cpu - self._worker_base.get(pid, 0.0) for pid, cpu in self._worker_cpu.items())

    def warm_up(self) -> None:
        """Start the worker processes now rather than on the first page, and take each
        one's CPU so far as the baseline (imports are start-up, not crawl, cost)."""
        futures = [self._pool.submit(_cpu_now) for _ in range(self.workers)]
        for f in futures:
            pid, cpu = f.result()
            self._worker_base.setdefault(pid, cpu)

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
