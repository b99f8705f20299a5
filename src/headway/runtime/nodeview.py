"""What a node shows of itself: its statistics reading (``NodeStats``, docs/metrics.md),
the parts its console snapshot reads (``SnapshotParts``), the host problems the console
names and the run's summary (``CrawlSummary``). Functions of the node's parts and
counters; ``node.py`` calls them."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

from headway import __version__
from headway.control.applier import ControlApplier, ControlStats
from headway.fetch.client import HttpClient
from headway.frontier.store import FrontierCounts
from headway.runtime.book import ConsoleBook
from headway.runtime.factory import NodeParts
from headway.runtime.looplag import LoopLagProbe
from headway.runtime.metrics import Counters
from headway.runtime.reach import HostReach
from headway.runtime.snapshot import PUBLISH_TTL, SnapshotParts
from headway.runtime.stats import NodeStats, RecrawlStats
from headway.runtime.summary import (
    CrawlSummary,
    StopReason,
    current_rss_mib,
    peak_rss_mib,
    process_cpu_seconds,
)
from headway.settings import Settings
from headway.work.admission import Admission

#: Skip notes that drop a whole host, as the console names them.
HOST_PROBLEMS = {
    "opted-out": "in the opt-out list: its queued URLs are dropped",
    "blocked-address": "its address is refused by the address guard: its URLs fail",
    "robots-unreachable": "robots.txt unreachable too many times: its URLs fail",
}


def node_statistics(
    parts: NodeParts,
    *,
    started: float,
    in_flight: int,
    counters: Counters,
    fetcher: HttpClient | None,
    admission: Admission,
    frontier: FrontierCounts | None,
    loop_lag: LoopLagProbe,
    controls: ControlApplier | None,
) -> NodeStats:
    """The node's statistics now: each component's own ``statistics()`` value, the
    frontier's counts as last read (``frontier``), ``started`` in monotonic seconds."""
    return NodeStats(
        time=time.time(),
        elapsed=time.monotonic() - started,
        pipeline=in_flight,
        fetch=counters.statistics(fetcher.statistics().in_flight if fetcher is not None else 0),
        stages=(
            parts.parse_stage.statistics(),
            parts.pool.statistics(),
            parts.store_stage.statistics(),
            parts.settle_stage.statistics(),
        ),
        admission=admission.statistics(),
        frontier=frontier,
        scheduler=parts.scheduler.statistics(),
        store=parts.store.statistics(),
        leases=parts.leases.statistics(),
        recrawl=parts.recrawl.statistics() or RecrawlStats(),
        loop_lag=loop_lag.statistics(),
        software=f"headway/{__version__}",
        control=controls.statistics() if controls else ControlStats(),
    )


def snapshot_parts(
    parts: NodeParts, settings: Settings, book: ConsoleBook, stats: Callable[[], NodeStats]
) -> SnapshotParts:
    """What the node's console snapshot reads (``runtime/snapshot.py``)."""
    shared = parts.frontier.shared()
    return SnapshotParts(
        node_id=parts.node_id,
        directory=parts.paths.root,
        book=book,
        core=parts.scheduler.core,
        worker=parts.fw,
        frontier=parts.frontier,
        stats=stats,
        cpu_seconds=lambda: process_cpu_seconds() + parts.pool.cpu_seconds(),
        rss_mib=current_rss_mib,
        shards_held=shared.shards_held if shared else lambda: None,
        publish=(lambda data: shared.publish_console(data, PUBLISH_TTL)) if shared else None,
        host_budget=settings.frontier.host_budget,
        crawl={
            "directory": str(parts.paths.root),
            "store": shared.store_url if shared is not None else "",
            "crawl_id": settings.distributed.crawl_id if shared is not None else None,
        },
    )


def crawl_summary(
    parts: NodeParts,
    *,
    stopped_by: StopReason,
    resumed: bool,
    seconds: float,
    cpu_seconds: float,
    counters: Counters,
    counts: FrontierCounts,
    admission: Admission,
    reach: HostReach,
    given_hosts: Iterable[str],
    controls: ControlApplier | None,
    seeds_added: int,
    requeued_at_stop: int,
) -> CrawlSummary:
    """The run's summary; ``cpu_seconds`` of this process (the parser processes' are
    added), ``given_hosts`` the hosts of the seeds this command gave."""
    return CrawlSummary(
        stopped_by=stopped_by,
        resumed=resumed,
        seconds=seconds,
        cpu_seconds=cpu_seconds + parts.pool.cpu_seconds(),
        fetches=counters.fetches,
        requests=counters.requests,
        bytes=counters.bytes,
        outcomes=dict(counters.outcomes),
        frontier=counts,
        revisits=parts.store.revisits,
        warc_files=parts.store.files,
        admission_rejected=dict(admission.rejected),
        peak_rss_mib=peak_rss_mib(),
        recrawl=parts.recrawl.statistics(),
        robots_disallowed=counters.robots_disallowed,
        excluded_dropped=counters.excluded_dropped,
        unreachable=reach.unreachable(),
        seeds_unreached=reach.seeds_unreached(given_hosts),
        optout_dropped=controls.statistics().optout_dropped if controls else 0,
        seeds_added=seeds_added,
        requeued_at_stop=requeued_at_stop,
    )
