"""Stop signals: SIGINT and SIGTERM ask a crawl to stop cleanly, once.

A service manager (``timeout``, systemd, a container runtime) sends SIGTERM to the
crawl's process and then to its whole process group: one request delivered twice. A
signal repeated within ``SAME_STOP_SECONDS`` of the first is that same request; one sent
later (a deliberate second Ctrl-C) quits at once with exit status 130.

The rule holds from before the event loop starts until the summary is printed; after a
stop request the signals are then ignored until the process has exited. While the loop
runs the signals are the loop's (so that they wake it); when the node has finished, the
loop's handlers are swapped for plain ones with both signals blocked, so that there is no
moment in which a repeated signal meets the default action and kills the process mid-way
through closing its files and printing its summary (the loop resets the signals to their
defaults when its handlers are removed or it is closed)."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

from headway.runtime.lifeline import STOP_SIGNALS

log = logging.getLogger(__name__)

#: Stop signals this close together are one request (the process, then its group).
SAME_STOP_SECONDS = 1.0

#: The exit status of a crawl stopped by a signal (128 + SIGINT, as shells report it).
EXIT_INTERRUPTED = 130


class StopSignals:
    """The stop rule for one crawl; ``request`` is called once, at the first signal."""

    def __init__(self, request: Callable[[], None] | None = None) -> None:
        self.request = request
        self.first: float | None = None  # monotonic time of the first stop signal

    def __call__(self) -> None:
        if self.first is None:
            self.first = time.monotonic()
            log.warning("stopping: finishing what was fetched (Ctrl-C again to quit now)")
            if self.request is not None:
                self.request()
        elif time.monotonic() - self.first >= SAME_STOP_SECONDS:
            os._exit(EXIT_INTERRUPTED)
        else:  # the same stop request sent to the process and to its group
            log.debug("stop signal repeated within %.0f s: the same request", SAME_STOP_SECONDS)

    def set_request(self, request: Callable[[], None]) -> None:
        """What a stop does, once there is a node to stop; a stop signal that came while
        the crawl was starting (before there was one) is passed on now."""
        self.request = request
        if self.first is not None:
            request()

    def _plain(self, signum: int, frame: FrameType | None) -> None:
        self()

    @contextmanager
    def held(self) -> Iterator[StopSignals]:
        """Plain handlers from here (before the loop) to the end of the block, which ends
        once the summary is printed. Then the previous handlers come back, unless a stop
        was requested: the crawl has stopped, its files are closed and its summary is out,
        and the stop signals are ignored for the rest of the process's exit (the
        interpreter resets a Python handler to the default as it starts tearing itself
        down, which takes a few hundred milliseconds, and a repeated signal would then
        kill the process and replace its exit status 130 by a kill). Off the main thread,
        nothing is changed."""
        if threading.current_thread() is not threading.main_thread():
            yield self
            return
        old: dict[int, Any] = {sig: signal.signal(sig, self._plain) for sig in STOP_SIGNALS}
        try:
            yield self
        finally:
            for sig, handler in old.items():
                if self.first is not None:
                    handler = signal.SIG_IGN
                signal.signal(sig, handler if handler is not None else signal.SIG_DFL)

    def attach(self, loop: asyncio.AbstractEventLoop) -> None:
        """While the loop runs, the signals are its own (they wake it)."""
        for sig in STOP_SIGNALS:
            loop.add_signal_handler(sig, self)

    def detach(self, loop: asyncio.AbstractEventLoop) -> None:
        """Give the signals back to plain handlers with no gap in between: both are
        blocked while the loop's handlers are removed (which resets them to the default)
        and the plain ones set; a signal sent meanwhile is delivered to the plain one."""
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
        try:
            for sig in STOP_SIGNALS:
                loop.remove_signal_handler(sig)
                signal.signal(sig, self._plain)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
