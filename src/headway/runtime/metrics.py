"""Pressure metrics: one snapshot, three outlets.

The node builds a ``Snapshot`` (plain JSON-ready dict) about once a second. It is shown in
the progress display, appended to ``metrics.jsonl`` every ``metrics_interval`` seconds, and
served in Prometheus text format on ``--metrics-port``. The metric names are documented in
``docs/metrics.md``; per-host series are limited to the ``TOP_HOSTS`` most throttled hosts
so a crawl of millions of hosts keeps a bounded number of series.
"""

from __future__ import annotations

import json
import logging
import threading
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prometheus_client import CollectorRegistry, start_http_server
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

log = logging.getLogger(__name__)

TOP_HOSTS = 20
Snapshot = dict[str, Any]


@dataclass(slots=True)
class Counters:
    """Running totals of one node for this run (a resumed crawl starts them at zero;
    the frontier's counts cover the whole crawl)."""

    fetches: int = 0  # page fetches finished (any outcome)
    requests: int = 0  # every HTTP request incl. robots.txt
    retries: int = 0  # requests that were retries
    bytes: int = 0  # raw body bytes received
    robots_fetches: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    #: what a hostile page or server made the crawl cut or refuse, by reason
    hostile: Counter[str] = field(default_factory=Counter)

    @property
    def errors(self) -> int:
        ok = ("ok", "redirect", "not_modified", "client_error")
        return sum(n for k, n in self.outcomes.items() if k not in ok)


class MetricsFile:
    def __init__(self, path: Path) -> None:
        self._fh = open(path, "a", encoding="utf-8")  # noqa: SIM115 - lives with the node

    def write(self, snap: Snapshot) -> None:
        self._fh.write(json.dumps(snap, separators=(",", ":"), default=str) + "\n")
        self._fh.flush()

    def close(self) -> None:
        self._fh.close()


def _gauge(name: str, doc: str, value: float) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, doc, value=value)


class SnapshotCollector(Collector):
    """Turns the latest snapshot into Prometheus metric families on each scrape."""

    def __init__(self) -> None:
        self._snap: Snapshot = {}
        self._lock = threading.Lock()

    def update(self, snap: Snapshot) -> None:
        with self._lock:
            self._snap = snap

    def collect(self) -> Iterator[Any]:
        with self._lock:
            snap = self._snap
        if not snap:
            return
        yield _gauge(
            "headway_pages_per_second",
            "Page fetches per second (last interval)",
            snap["pages_per_second"],
        )
        yield _gauge(
            "headway_bytes_per_second",
            "Body bytes per second (last interval)",
            snap["bytes_per_second"],
        )
        yield _gauge(
            "headway_retry_ratio", "Retries / requests over the crawl", snap["retry_ratio"]
        )
        c = CounterMetricFamily("headway_fetches", "Page fetches by outcome", labels=["outcome"])
        for outcome, n in sorted(snap["outcomes"].items()):
            c.add_metric([outcome], n)
        yield c
        yield CounterMetricFamily(
            "headway_requests", "HTTP requests incl. robots.txt", value=snap["requests"]
        )
        yield CounterMetricFamily("headway_bytes", "Body bytes received", value=snap["bytes"])
        stage_metrics: dict[str, GaugeMetricFamily | CounterMetricFamily] = {
            "depth": GaugeMetricFamily(
                "headway_stage_depth", "Items waiting in a stage", labels=["stage"]
            ),
            "capacity": GaugeMetricFamily(
                "headway_stage_capacity", "Bound of a stage", labels=["stage"]
            ),
            "oldest_age": GaugeMetricFamily(
                "headway_stage_oldest_age_seconds",
                "Age of the oldest waiting item",
                labels=["stage"],
            ),
            "bytes": GaugeMetricFamily(
                "headway_stage_bytes", "Estimated bytes held in a stage", labels=["stage"]
            ),
            "blocked_puts": CounterMetricFamily(
                "headway_stage_blocked_puts", "Puts that waited for room", labels=["stage"]
            ),
        }
        for st in snap["stages"]:
            for key, fam in stage_metrics.items():
                fam.add_metric([st["name"]], st.get(key, 0))
        yield from stage_metrics.values()
        rej = CounterMetricFamily(
            "headway_admission_rejected", "URLs refused at admission, by reason", labels=["reason"]
        )
        for reason, n in sorted(snap["admission_rejected"].items()):
            rej.add_metric([reason], n)
        yield rej
        hostile = CounterMetricFamily(
            "headway_hostile",
            "What a page or server made the crawl cut or refuse, by reason",
            labels=["reason"],
        )
        for reason, n in sorted(snap.get("hostile", {}).items()):
            hostile.add_metric([reason], n)
        yield hostile
        shed = CounterMetricFamily(
            "headway_frontier_shed", "URLs shed by the frontier", labels=["reason"]
        )
        for reason, n in sorted(snap["shed"].items()):
            shed.add_metric([reason], n)
        yield shed
        front = GaugeMetricFamily(
            "headway_frontier_urls", "Frontier URLs by state", labels=["state"]
        )
        for state in ("queued", "leased", "done", "failed"):
            front.add_metric([state], snap["frontier"].get(state, 0))
        yield front
        yield _gauge(
            "headway_hosts_active", "Hosts with a request in flight", snap["hosts"]["active"]
        )
        yield _gauge(
            "headway_hosts_ready", "Hosts ready to start a request", snap["hosts"]["ready"]
        )
        yield _gauge(
            "headway_hosts_parked",
            "Hosts parked (cool-down or long Crawl-delay)",
            snap["hosts"]["parked"],
        )
        per_host: dict[str, GaugeMetricFamily] = {
            "in_flight": GaugeMetricFamily(
                "headway_host_in_flight", "Requests in flight", labels=["host"]
            ),
            "limit": GaugeMetricFamily(
                "headway_host_limit", "Current concurrency limit", labels=["host"]
            ),
            "gap": GaugeMetricFamily(
                "headway_host_gap_seconds", "Current gap between starts", labels=["host"]
            ),
            "retry_ratio": GaugeMetricFamily(
                "headway_host_retry_ratio", "Retries / requests", labels=["host"]
            ),
            "health": GaugeMetricFamily(
                "headway_host_health", "Health score 0..1", labels=["host"]
            ),
        }
        for h in snap["throttled_hosts"]:
            for key, fam in per_host.items():
                fam.add_metric([h["host"]], h[key])
        yield from per_host.values()


class PrometheusExporter:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.collector = SnapshotCollector()
        self.registry.register(self.collector)
        self._server: Any = None

    def start(self, port: int, addr: str = "127.0.0.1") -> None:
        self._server, _thread = start_http_server(port, addr=addr, registry=self.registry)
        log.info("Prometheus metrics on http://%s:%d/metrics", addr, port)

    def update(self, snap: Snapshot) -> None:
        self.collector.update(snap)

    def close(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server = None
