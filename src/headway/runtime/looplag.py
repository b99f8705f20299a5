"""The event loop's lag: how late a periodic timer fires in a node.

Everything a node does that is not parsing or store writing runs on one event loop, so
a callback that holds it (a decoder, a parser, a hostile input that costs CPU in
proportion to its size) delays every fetch, timer and politeness gap of every host at
once. ``LoopLagProbe.run`` (a task in the node's task group) sleeps ``interval`` seconds
over and over and notes how much later than asked each wake-up came: that lateness is
the longest the loop was held in that interval, give or take a timer's resolution.

``statistics()`` returns a ``LoopLagStats``: the worst lag since the start, the worst
over the last ``window`` seconds (``recent``), the last one, the number of samples, and
how many were over ``warn_after``. A lag over ``warn_after`` seconds is logged as a
warning, at most once every ``warn_every`` seconds (later ones are counted in the next
warning), so a stalled loop is named in the log without flooding it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

log = logging.getLogger(__name__)

#: Seconds between two wake-ups of the probe.
INTERVAL = 0.1
#: A lag above this many seconds is warned of (and counted in ``over_bound``).
WARN_AFTER = 1.0
#: Seconds over which ``recent`` is the worst lag (between one and two windows).
WINDOW = 10.0
#: Seconds between two warnings at most.
WARN_EVERY = 60.0


@dataclass(frozen=True, slots=True)
class LoopLagStats:
    """Lag of the event loop in seconds: ``worst`` since the probe started, ``recent``
    over the last 10 to 20 s, ``last`` at the latest wake-up; ``samples`` wake-ups so
    far, ``over_bound`` of them later than the warning bound (1 s)."""

    worst: float = 0.0
    recent: float = 0.0
    last: float = 0.0
    samples: int = 0
    over_bound: int = 0


class LoopLagProbe:
    """Measures the lag of the running loop while ``run`` runs (until cancelled)."""

    def __init__(
        self,
        *,
        interval: float = INTERVAL,
        warn_after: float = WARN_AFTER,
        window: float = WINDOW,
        warn_every: float = WARN_EVERY,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._interval = interval
        self._warn_after = warn_after
        self._window = window
        self._warn_every = warn_every
        self._clock = clock
        self._worst = 0.0
        self._last = 0.0
        self._samples = 0
        self._over = 0
        # the worst lag of the current window and of the one before it
        self._window_start = clock()
        self._window_worst = 0.0
        self._previous_worst = 0.0
        self._warned_at: float | None = None
        self._unwarned = 0  # lags over the bound since the last warning

    async def run(self) -> None:
        interval = self._interval
        clock = self._clock
        while True:
            before = clock()
            await asyncio.sleep(interval)
            now = clock()
            self.note(max(0.0, now - before - interval), now)

    def note(self, lag: float, now: float) -> None:
        """Record one wake-up that came ``lag`` seconds late at ``now``."""
        self._samples += 1
        self._last = lag
        self._worst = max(self._worst, lag)
        if now - self._window_start >= self._window:
            # a window ended (or more than one: an empty one had no lag to keep)
            late = now - self._window_start >= 2 * self._window
            self._previous_worst = 0.0 if late else self._window_worst
            self._window_worst = 0.0
            self._window_start = now
        self._window_worst = max(self._window_worst, lag)
        if lag > self._warn_after:
            self._over += 1
            self._unwarned += 1
            if self._warned_at is None or now - self._warned_at >= self._warn_every:
                self._warned_at = now
                log.warning(
                    "the event loop was held for %.1f s (%d time(s) over %.0f s since the "
                    "last warning): every fetch and timer of this node waited; the worst "
                    "so far is %.1f s",
                    lag,
                    self._unwarned,
                    self._warn_after,
                    self._worst,
                )
                self._unwarned = 0

    def statistics(self) -> LoopLagStats:
        return LoopLagStats(
            worst=self._worst,
            recent=max(self._window_worst, self._previous_worst),
            last=self._last,
            samples=self._samples,
            over_bound=self._over,
        )


#: The interpreter's thread switch interval while a node runs (seconds; Python's default
#: is 0.005). A thread doing pure-Python work off the loop (parsing a robots.txt of many
#: rules) keeps the GIL until the loop has waited this long for it, every time the loop
#: wakes up. Measured with a 500 KiB robots.txt on two busy cores: a worst lag of about
#: 0.4 s at 5 ms and at 1 ms, 0.05 to 0.15 s at 0.5 ms. Without such a thread nothing
#: waits for the GIL and the interval costs nothing.
SWITCH_INTERVAL = 0.0005


@contextlib.contextmanager
def short_switch_interval(seconds: float = SWITCH_INTERVAL) -> Iterator[None]:
    """Run the body with the thread switch interval at most ``seconds``; restored after."""
    previous = sys.getswitchinterval()
    sys.setswitchinterval(min(previous, seconds))
    try:
        yield
    finally:
        sys.setswitchinterval(previous)
