"""The pressure snapshot of a node: one JSON-ready dict, built about once a second,
shown in the progress display, written to metrics.jsonl and served to Prometheus."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from headway import __version__
from headway.runtime.metrics import Snapshot

if TYPE_CHECKING:
    from headway.runtime.node import Node


def build_snapshot(node: Node) -> Snapshot:
    """The pressure snapshot of a running node (keys documented in docs/metrics.md)."""
    c = node.counters
    mono = time.monotonic()
    t0, f0, b0 = node._rate_mark
    if mono - t0 >= 1.0:
        node._rates = ((c.fetches - f0) / (mono - t0), (c.bytes - b0) / (mono - t0))
        node._rate_mark = (mono, c.fetches, c.bytes)
    stages = [
        node.parse_stage.statistics(),
        node.pool.statistics(),
        node.store_stage.statistics(),
        node.settle_stage.statistics(),
    ]
    counts = node._counts
    hosts = node.scheduler.host_pressure(time.time())
    fstats = node.fetcher.statistics() if hasattr(node, "fetcher") else None
    return {
        "time": time.time(),
        "elapsed": mono - node._started,
        "fetches": c.fetches,
        "requests": c.requests,
        "bytes": c.bytes,
        "retries": c.retries,
        "robots_fetches": c.robots_fetches,
        "retry_ratio": c.retries / c.requests if c.requests else 0.0,
        "errors": c.errors,
        "outcomes": dict(c.outcomes),
        "pages_per_second": node._rates[0],
        "bytes_per_second": node._rates[1],
        "in_flight": fstats.in_flight if fstats else 0,
        "pipeline": node._pipeline,
        "stages": [
            {
                "name": st.name,
                "depth": st.depth,
                "capacity": st.capacity,
                "oldest_age": round(st.oldest_age, 3),
                "blocked_puts": st.blocked_puts,
                "bytes": st.bytes,
                "max_bytes": st.max_bytes,
            }
            for st in stages
        ],
        "admission_rejected": dict(node.admission.rejected),
        "hostile": dict(c.hostile),
        "admission_known": node.admission.known,
        "shed": dict(counts.shed) if counts else {},
        "frontier": {
            "queued": counts.queued,
            "leased": counts.leased,
            "done": counts.done,
            "failed": counts.failed,
            "seen": counts.seen,
            "hosts_queued": counts.hosts_queued,
        }
        if counts
        else {},
        "hosts": {
            "known": hosts.known,
            "active": hosts.active,
            "ready": node.scheduler.hosts_ready(),
            "parked": hosts.parked,
        },
        "throttled_hosts": [
            {
                "host": h,
                "in_flight": st.in_flight,
                "limit": round(st.limit, 3),
                "gap": round(st.gap, 3),
                "retry_ratio": round(st.retry_ratio, 3),
                "health": round(st.health, 3),
            }
            for h, st in hosts.top
        ],
        "paused": node._paused_for_quota,
        "software": f"headway/{__version__}",
    }
