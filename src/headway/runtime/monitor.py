"""The node's monitor: stop checks, lease sweep, quota resume file, memory target, and
statistics readings built only when something reads them.

A statistics reading (``Node.statistics()``, about 0.7 ms) and a read of the frontier's
counts (a trip to the frontier thread) are paid per wake-up, not per page, so at the
politeness gap, where pages arrive slowly, they weigh on every page. The monitor wakes
every ``TICK`` seconds for its checks but builds a reading only when one is due for a
reader: the ``on_stats`` callback every ``stats_interval`` seconds, ``metrics.jsonl``
every ``metrics_interval`` (every ``STARTUP_EVERY`` during the first), the shared
crawl's heartbeat record every ``PUBLISH_EVERY``.
The Prometheus endpoint builds its own reading on each scrape (``PrometheusExporter``).
The frontier's counts are read when a reading is due, whenever the node is idle (the
crawl may have finished: that needs a fresh count of queued and leased URLs), and at
least every ``COUNTS_EVERY`` seconds otherwise (``Node.last_stats`` shows them).
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from typing import TYPE_CHECKING

from headway.runtime.factory import lease_seconds as lease_seconds_of
from headway.runtime.stats import NodeStats
from headway.runtime.summary import current_rss_mib

if TYPE_CHECKING:
    from headway.frontier.redis import RedisFrontier
    from headway.runtime.node import Node

log = logging.getLogger(__name__)

#: Seconds between the monitor's wake-ups (stop checks: max-duration, finished).
TICK = 0.25
#: Seconds between two reads of the frontier's counts while the node is busy.
COUNTS_EVERY = 1.0
#: Seconds between two statistics records for the shared crawl's heartbeat.
PUBLISH_EVERY = 1.0
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


class Monitor:
    """Runs beside the node's stages (``run`` until cancelled)."""

    def __init__(self, node: Node, stats_interval: float | None) -> None:
        self._node = node
        s = node.settings
        now = time.monotonic()
        self._stats = Due(stats_interval if node.on_stats is not None else None, now)
        self._metrics = Due(s.runtime.metrics_interval, now, first=now)
        early = s.runtime.metrics_interval > 2 * STARTUP_EVERY
        self._early = Due(STARTUP_EVERY if early else None, now)
        self._early_until = now + s.runtime.metrics_interval
        shared = node.shared_store
        self._publish = Due(PUBLISH_EVERY if shared is not None else None, now, first=now)
        self.counts_read = 0  # reads of the frontier's counts
        self.readings = 0  # statistics readings built

    async def run(self) -> None:
        node = self._node
        s = node.settings
        last_memory_check = 0.0
        warned_memory = False  # the memory target is below what the node needs
        last_sweep = last_counts = time.monotonic()
        lease_seconds = lease_seconds_of(s)
        resume_file = node.paths.root / "resume"
        restarts = 0
        shared = node.shared_store
        while True:
            await asyncio.sleep(TICK)
            mono = time.monotonic()
            to_stats = self._stats.check(mono)
            to_metrics = self._metrics.check(mono)
            if not to_metrics and mono < self._early_until:
                to_metrics = self._early.check(mono)
            to_publish = self._publish.check(mono)
            reading = to_stats or to_metrics or to_publish
            if reading or node.idle() or mono - last_counts >= COUNTS_EVERY:
                last_counts = mono
                self.counts_read += 1
                node.use_counts(await node.fw.call(node.frontier.counts))
            if reading:
                self.readings += 1
                stats = node.statistics()
                self._deliver(stats, to_stats=to_stats, to_metrics=to_metrics)
                if to_publish and shared is not None:
                    shared.publish(stats.to_json())
            if shared is not None and shared.server_restarts != restarts:
                restarts = shared.server_restarts
                await after_store_restart(node, shared)
            if shared is not None and shared.crawl_lost is not None:
                node.request_stop("crawl lost")
            if node.paused_for_quota and resume_file.exists():
                resume_file.unlink(missing_ok=True)
                node.resume_quota()
            if mono - last_sweep >= lease_seconds / 4:
                # leases of a node that died (here: an earlier run cut short without its
                # own start-up recovery) come back once they expire
                last_sweep = mono
                reclaimed = await node.fw.call(node.frontier.reclaim_expired, time.time())
                if reclaimed:
                    log.info("%d expired leases returned to the queue", reclaimed)
                    node.scheduler.wake()
            if s.frontier.memory_target_mib and mono - last_memory_check >= 1.0:
                last_memory_check = mono
                rss = current_rss_mib()
                node.admission.adjust_for_memory(
                    rss > s.frontier.memory_target_mib, s.scope.max_depth
                )
                if node.admission.shed_depth == 0 and not warned_memory:
                    warned_memory = True
                    log.warning(
                        "the node's memory (%.0f MiB) is over --memory-target-mib %d even "
                        "with every new link shed: only seeds are crawled until it falls; "
                        "the node itself needs about 100 MiB, so set the target above that",
                        rss,
                        s.frontier.memory_target_mib,
                    )
            node.check_end(mono)

    def _deliver(self, stats: NodeStats, *, to_stats: bool, to_metrics: bool) -> None:
        node = self._node
        if to_stats and node.on_stats is not None:
            node.on_stats(stats)
        if to_metrics:
            node.metrics_file.write(stats)


async def after_store_restart(node: Node, shared: RedisFrontier) -> None:
    """The store may have lost its last second of admissions: offer links and seeds to
    it again instead of skipping them as recently admitted. A store that came back
    without the crawl at all is marked lost (the node then stops)."""
    await node.fw.call(shared.verify_epoch)
    if shared.crawl_lost is not None:
        return
    node.admission.forget_recent()
    entries = node.admission.admit(node.seeds, 0, None)
    await node.fw.call(node.frontier.add, entries, node.clock())
    # the counts read before may be the restarted store's, before the seeds came back:
    # the end check must not take them for a finished crawl
    node.use_counts(await node.fw.call(node.frontier.counts))
    log.warning("the store restarted: recently admitted links are offered again")
