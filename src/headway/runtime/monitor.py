"""The node's monitor: small periodic duties run every ``TICK`` seconds beside the stages,
then the node's end check.

Each duty is its own value with a ``tick(mono)`` and takes only what it uses (plain
callables, a path), so each is tested alone on fake time:

- ``Readings``: the frontier's counts and statistics readings, built only when something
  reads them. A reading (``Node.statistics()``, about 0.7 ms) and a read of the counts (a
  trip to the frontier thread) are paid per wake-up, not per page, so at the politeness
  gap, where pages arrive slowly, they weigh on every page. A reading is built when one is
  due for a reader: the ``on_stats`` callback every ``stats_interval`` seconds,
  ``metrics.jsonl`` every ``metrics_interval`` (every ``STARTUP_EVERY`` during the first:
  ``Startup``), the shared crawl's heartbeat record every ``PUBLISH_EVERY`` (the
  Prometheus endpoint builds its own on each scrape). The counts
  are read when a reading is due, whenever the node is idle (the crawl may have finished:
  that needs a fresh count of queued and leased URLs), and at least every
  ``COUNTS_EVERY`` seconds otherwise.
- ``StoreRestarts``: after a restart of a shared store, the crawl's epoch is checked; if
  the store still holds the crawl, recently admitted links and the seeds are offered
  again (it may have lost its last second of admissions) and the counts are read again
  before the end check (those read before may be the restarted store's, without them).
- ``CrawlLost``: a shared store that lost the crawl's keys (a flush, eviction, a
  failover to a replica without them: ``SharedCrawl.crawl_lost``) stops the node
  (``StopReason.CRAWL_LOST``) after it stores what it fetched.
- ``QuotaResume``: a ``resume`` file in the crawl directory ends a quota pause.
- ``LeaseSweep``: expired leases (of a node that died) go back to the queue.
- ``MemoryTarget``: over ``--memory-target-mib`` admission sheds the deepest new links.

``monitor_for`` builds the duties of one node from its parts (``NodeParts``) and the
narrow view of the node they steer (``Watched``); the monitor never sees the node.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Protocol

from headway.frontier.store import FrontierCounts, SharedCrawl
from headway.runtime.factory import NodeParts
from headway.runtime.factory import lease_seconds as lease_seconds_of
from headway.runtime.stats import NodeStats
from headway.runtime.summary import StopReason, current_rss_mib
from headway.settings import Settings

log = logging.getLogger(__name__)

#: Seconds between the monitor's wake-ups (stop checks: max-duration, finished).
TICK = 0.25
#: Seconds between two reads of the frontier's counts while the node is busy.
COUNTS_EVERY = 1.0
#: Seconds between two statistics records for the shared crawl's heartbeat.
PUBLISH_EVERY = 1.0
#: Seconds between two checks of the node's memory against its target.
MEMORY_EVERY = 1.0
#: Seconds between two metrics.jsonl records during a run's first ``metrics_interval``
#: (when that is longer than twice this): ``headway status`` reads the last record, and
#: for the first 10 s it would otherwise be the start-up one, with nothing fetched.
STARTUP_EVERY = 1.0


class Due:
    """When each reader of statistics is next due (monotonic seconds); ``every`` None
    means that reader is absent."""

    def __init__(self, every: float | None, now: float, *, first: float | None = None) -> None:
        self.every = every
        self.at = math.inf if every is None else (now + every if first is None else first)

    def check(self, now: float) -> bool:
        """True (and the next time set) when the reader is due at ``now``."""
        if self.every is None or now < self.at:
            return False
        self.at += self.every
        if self.at <= now:  # late by a whole interval: no burst to catch up
            self.at = now + self.every
        return True


class When(Protocol):
    def check(self, now: float) -> bool:
        """True (and the next time set) when the reader is due at ``now``."""
        ...


class Startup:
    """Due every ``every`` seconds from ``now`` on (at once first), and every
    ``STARTUP_EVERY`` seconds in between during the first interval when that is longer
    than twice ``STARTUP_EVERY``."""

    def __init__(self, every: float, now: float) -> None:
        self._due = Due(every, now, first=now)
        self._early = Due(STARTUP_EVERY if every > 2 * STARTUP_EVERY else None, now)
        self._early_until = now + every

    def check(self, now: float) -> bool:
        if self._due.check(now):
            return True
        return now < self._early_until and self._early.check(now)


class Duty(Protocol):
    async def tick(self, mono: float) -> None:
        """Do what is due at ``mono`` (monotonic seconds)."""
        ...


class Watched(Protocol):
    """What the monitor reads of its node and steers."""

    def statistics(self) -> NodeStats:
        """A statistics reading built now."""
        ...

    def idle(self) -> bool:
        """Nothing fetched is still in the node."""
        ...

    def use_counts(self, counts: FrontierCounts) -> None:
        """The frontier's counts as just read."""
        ...

    def check_end(self, mono: float) -> None:
        """Stop when a limit is reached or the crawl is finished."""
        ...

    def request_stop(self, reason: StopReason) -> None: ...

    async def offer_seeds_again(self) -> None:
        """Forget the recently admitted links and offer the seeds to the frontier again."""
        ...

    @property
    def paused_for_quota(self) -> bool: ...

    def resume_quota(self) -> None: ...

    def shed_for_memory(self, over_target: bool) -> int | None:
        """Adjust admission to the memory target; the depth past which links are shed
        now (None: none)."""
        ...


class Readings:
    """The frontier's counts and the statistics readings of one node (module docstring)."""

    def __init__(
        self,
        *,
        read_counts: Callable[[], Awaitable[FrontierCounts]],
        use_counts: Callable[[FrontierCounts], None],
        idle: Callable[[], bool],
        statistics: Callable[[], NodeStats],
        readers: Sequence[tuple[When, Callable[[NodeStats], None]]],
        now: float,
    ) -> None:
        self._read_counts = read_counts
        self._use_counts = use_counts
        self._idle = idle
        self._statistics = statistics
        self._readers = readers
        self._last_counts = now
        self.counts_read = 0  # reads of the frontier's counts
        self.built = 0  # statistics readings built

    async def tick(self, mono: float) -> None:
        due = [deliver for when, deliver in self._readers if when.check(mono)]
        if due or self._idle() or mono - self._last_counts >= COUNTS_EVERY:
            self._last_counts = mono
            self.counts_read += 1
            self._use_counts(await self._read_counts())
        if due:
            self.built += 1
            stats = self._statistics()
            for deliver in due:
                deliver(stats)


class StoreRestarts:
    """After a shared store restarted: checks that it still holds the crawl (its epoch);
    if so, offers recent links and the seeds again and reads the counts again."""

    def __init__(
        self,
        shared: SharedCrawl,
        *,
        verify: Callable[[], Awaitable[None]],
        offer_again: Callable[[], Awaitable[None]],
        read_counts: Callable[[], Awaitable[FrontierCounts]],
        use_counts: Callable[[FrontierCounts], None],
    ) -> None:
        self._shared = shared
        self._verify = verify
        self._offer_again = offer_again
        self._read_counts = read_counts
        self._use_counts = use_counts
        self._restarts = shared.server_restarts

    async def tick(self, mono: float) -> None:
        restarts = self._shared.server_restarts
        if restarts == self._restarts:
            return
        self._restarts = restarts
        await self._verify()  # marks the crawl lost when its keys are gone
        if self._shared.crawl_lost is not None:
            return  # CrawlLost stops the node; nothing is offered to a store without it
        # the store may have lost its last second of admissions: offer links and seeds
        # to it again instead of skipping them as recently admitted
        await self._offer_again()
        # the counts read before may be the restarted store's, before the seeds came
        # back: the end check must not take them for a finished crawl
        self._use_counts(await self._read_counts())


class CrawlLost:
    """Stops the node once the shared store is found without the crawl's keys (the
    message is the store's: ``SharedCrawl.crawl_lost``)."""

    def __init__(self, shared: SharedCrawl, *, stop: Callable[[StopReason], None]) -> None:
        self._shared = shared
        self._stop = stop

    async def tick(self, mono: float) -> None:
        if self._shared.crawl_lost is not None:
            self._stop(StopReason.CRAWL_LOST)


class QuotaResume:
    """Ends a quota pause when the operator creates ``resume_file`` (it is removed)."""

    def __init__(
        self, resume_file: Path, *, paused: Callable[[], bool], resume: Callable[[], None]
    ) -> None:
        self._file = resume_file
        self._paused = paused
        self._resume = resume

    async def tick(self, mono: float) -> None:
        if self._paused() and self._file.exists():
            self._file.unlink(missing_ok=True)
            self._resume()


class LeaseSweep:
    """Every ``every`` seconds, expired leases go back to the queue (``reclaim`` with the
    wall-clock time) and the scheduler is woken when there were any."""

    def __init__(
        self,
        every: float,
        *,
        reclaim: Callable[[float], Awaitable[int]],
        wake: Callable[[], None],
        now: float,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._every = every
        self._reclaim = reclaim
        self._wake = wake
        self._clock = clock
        self._last = now

    async def tick(self, mono: float) -> None:
        if mono - self._last < self._every:
            return
        # leases of a node that died (here: an earlier run cut short without its own
        # start-up recovery) come back once they expire
        self._last = mono
        reclaimed = await self._reclaim(self._clock())
        if reclaimed:
            log.info("%d expired leases returned to the queue", reclaimed)
            self._wake()


class MemoryTarget:
    """About once a second, tells admission whether the node's memory is over
    ``target_mib``; warns once when even shedding every new link does not bring it
    under."""

    def __init__(
        self,
        target_mib: int,
        *,
        shed: Callable[[bool], int | None],
        rss_mib: Callable[[], float] = current_rss_mib,
    ) -> None:
        self._target = target_mib
        self._shed = shed
        self._rss_mib = rss_mib
        self._last = -math.inf
        self.warned = False  # the memory target is below what the node needs

    async def tick(self, mono: float) -> None:
        if mono - self._last < MEMORY_EVERY:
            return
        self._last = mono
        rss = self._rss_mib()
        if self._shed(rss > self._target) == 0 and not self.warned:
            self.warned = True
            log.warning(
                "the node's memory (%.0f MiB) is over --memory-target-mib %d even "
                "with every new link shed: only seeds are crawled until it falls; "
                "the node itself needs about 100 MiB, so set the target above that",
                rss,
                self._target,
            )


class Monitor:
    """Runs its duties every ``TICK`` seconds, then the end check (``run`` until
    cancelled)."""

    def __init__(
        self,
        duties: Sequence[Duty],
        check_end: Callable[[float], None],
        *,
        readings: Readings | None = None,
    ) -> None:
        self.duties = tuple(duties)
        self._check_end = check_end
        self.readings = readings  # the statistics duty, among ``duties``

    async def tick(self, mono: float) -> None:
        for duty in self.duties:
            await duty.tick(mono)
        self._check_end(mono)

    async def run(self) -> None:
        while True:
            await asyncio.sleep(TICK)
            await self.tick(time.monotonic())


def monitor_for(
    parts: NodeParts,
    node: Watched,
    settings: Settings,
    *,
    on_stats: Callable[[NodeStats], None] | None,
    stats_interval: float | None,
) -> Monitor:
    """The monitor of a node with ``parts``: its duties in the order they run."""
    now = time.monotonic()
    fw, frontier = parts.fw, parts.frontier
    shared = frontier.shared()
    readers: list[tuple[When, Callable[[NodeStats], None]]] = []
    if on_stats is not None and stats_interval is not None:
        readers.append((Due(stats_interval, now), on_stats))
    readers.append((Startup(settings.runtime.metrics_interval, now), parts.metrics_file.write))
    if shared is not None:
        publish = shared.publish

        def to_shared(stats: NodeStats) -> None:
            publish(stats.to_json())

        readers.append((Due(PUBLISH_EVERY, now, first=now), to_shared))

    async def read_counts() -> FrontierCounts:
        counts: FrontierCounts = await fw.call(frontier.counts)
        return counts

    async def reclaim(at: float) -> int:
        reclaimed: int = await fw.call(frontier.reclaim_expired, at)
        return reclaimed

    readings = Readings(
        read_counts=read_counts,
        use_counts=node.use_counts,
        idle=node.idle,
        statistics=node.statistics,
        readers=readers,
        now=now,
    )
    duties: list[Duty] = [readings]
    if shared is not None:
        verify_epoch = shared.verify_epoch

        async def verify() -> None:
            await fw.call(verify_epoch)

        duties.append(
            StoreRestarts(
                shared,
                verify=verify,
                offer_again=node.offer_seeds_again,
                read_counts=read_counts,
                use_counts=node.use_counts,
            )
        )
        duties.append(CrawlLost(shared, stop=node.request_stop))
    duties.append(
        QuotaResume(
            parts.paths.root / "resume",
            paused=lambda: node.paused_for_quota,
            resume=node.resume_quota,
        )
    )
    duties.append(
        LeaseSweep(
            lease_seconds_of(settings) / 4, reclaim=reclaim, wake=parts.scheduler.wake, now=now
        )
    )
    if settings.frontier.memory_target_mib:
        duties.append(MemoryTarget(settings.frontier.memory_target_mib, shed=node.shed_for_memory))
    return Monitor(duties, node.check_end, readings=readings)
