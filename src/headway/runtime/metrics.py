"""Where a node's statistics leave the process: ``metrics.jsonl`` and Prometheus text.

The node combines its components' ``statistics()`` into a ``NodeStats`` (``stats.py``)
when a reader needs one (``monitor.py``). ``MetricsFile`` appends its JSON to
``metrics.jsonl`` every ``metrics_interval`` seconds; on each scrape of ``--metrics-port``
``StatsCollector`` has the node build a reading on its event loop (the latest one when
the loop does not answer within ``SCRAPE_WAIT`` seconds) and turns it into Prometheus
metric families. The metric names are documented in
``docs/metrics.md``; per-host series are limited to the ``TOP_HOSTS`` most throttled
hosts so a crawl of millions of hosts keeps a bounded number of series.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import logging
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from prometheus_client import CollectorRegistry, start_http_server
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from headway.runtime.book import ConsoleBook
from headway.runtime.stats import FetchStats, NodeStats

log = logging.getLogger(__name__)

TOP_HOSTS = 20
#: Seconds over which pages/s and bytes/s are computed (a sliding window).
RATE_WINDOW = 20.0
#: Readings closer than this are not kept as the window's marks (a bounded window).
RATE_STEP = 0.5
#: Seconds a scrape waits for the node's event loop to build a reading.
SCRAPE_WAIT = 2.0


class Hostile(StrEnum):
    """What a hostile page or server made the crawl cut or refuse (the ``reason`` label of
    ``headway_hostile_total``)."""

    CREDENTIALS_STRIPPED = "credentials-stripped"  # links whose user:password@ was removed
    BLOCKED_HOST = "blocked-host"  # a host whose own address the address guard refused
    LINKS_CUT = "links-cut"  # a page with more links than --max-links
    PARSE_CUT = "parse-cut"  # a page parsed only up to --max-parsed decoded bytes


@dataclass(slots=True)
class Counters:
    """Running totals of one node's fetching for this run (a resumed crawl starts them
    at zero; the frontier's counts cover the whole crawl)."""

    fetches: int = 0  # page fetches finished (any outcome)
    requests: int = 0  # every HTTP request incl. robots.txt
    retries: int = 0  # requests that were retries
    bytes: int = 0  # raw body bytes received
    robots_fetches: int = 0
    robots_disallowed: int = 0  # URLs settled unfetched: robots.txt disallows them
    excluded_dropped: int = 0  # queued URLs settled unfetched: an exclusion matches them
    robots_errors: int = 0  # robots.txt fetches without an HTTP answer
    stale_leases: int = 0  # leased URLs not sent: their leases ran out in a stall
    outcomes: Counter[str] = field(default_factory=Counter)
    #: what a hostile page or server made the crawl cut or refuse, by reason
    hostile: Counter[Hostile] = field(default_factory=Counter)
    #: per host, per seed and recent problems, for the console
    book: ConsoleBook = field(default_factory=ConsoleBook)
    #: (monotonic time, fetches, bytes) readings of the last ``RATE_WINDOW`` seconds
    _marks: deque[tuple[float, int, int]] = field(default_factory=deque)
    _rates: tuple[float, float] = (0.0, 0.0)

    def statistics(self, in_flight: int, mono: float | None = None) -> FetchStats:
        """The totals, with rates over the last ``RATE_WINDOW`` seconds (``mono``: the
        monotonic time of the reading). Pages arrive in bursts (one per host every
        politeness gap), so a rate over a short interval swings between 0 and bursts;
        over the window it is the crawl's rate. Early in a run the rate is over the time
        since the first reading (0 during its first second)."""
        mono = time.monotonic() if mono is None else mono
        marks = self._marks
        if not marks or mono - marks[-1][0] >= RATE_STEP:
            marks.append((mono, self.fetches, self.bytes))
        # keep one reading at or before the window's start: the rate spans the window
        while len(marks) > 1 and marks[1][0] <= mono - RATE_WINDOW:
            marks.popleft()
        t0, f0, b0 = marks[0]
        if mono - t0 >= 1.0:
            span = mono - t0
            self._rates = ((self.fetches - f0) / span, (self.bytes - b0) / span)
        return FetchStats(
            fetches=self.fetches,
            requests=self.requests,
            bytes=self.bytes,
            retries=self.retries,
            robots_fetches=self.robots_fetches,
            robots_errors=self.robots_errors,
            outcomes=dict(self.outcomes),
            hostile={str(k): n for k, n in self.hostile.items()},
            in_flight=in_flight,
            pages_per_second=self._rates[0],
            bytes_per_second=self._rates[1],
        )


class MetricsFile:
    def __init__(self, path: Path) -> None:
        self._fh = open(path, "a", encoding="utf-8")  # noqa: SIM115 - lives with the node

    def write(self, stats: NodeStats) -> None:
        self._fh.write(json.dumps(stats.to_json(), separators=(",", ":")) + "\n")
        self._fh.flush()

    def close(self) -> None:
        self._fh.close()


def _gauge(name: str, doc: str, value: float) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, doc, value=value)


class StatsCollector(Collector):
    """Turns a ``NodeStats`` into Prometheus metric families on each scrape: one built
    for the scrape by the source given to ``read_from``, else the latest ``update``."""

    def __init__(self) -> None:
        self._stats: NodeStats | None = None
        self._lock = threading.Lock()
        self._source: tuple[asyncio.AbstractEventLoop, Callable[[], NodeStats]] | None = None

    def update(self, stats: NodeStats) -> None:
        with self._lock:
            self._stats = stats

    def read_from(self, loop: asyncio.AbstractEventLoop, build: Callable[[], NodeStats]) -> None:
        """Each scrape calls ``build`` on ``loop`` (it reads event-loop state)."""
        with self._lock:
            self._source = (loop, build)

    def _fresh(self) -> NodeStats | None:
        with self._lock:
            source, stats = self._source, self._stats
        if source is None:
            return stats
        loop, build = source
        done: concurrent.futures.Future[NodeStats] = concurrent.futures.Future()

        def run() -> None:
            try:
                done.set_result(build())
            except Exception as exc:  # reported to the scrape as the latest reading
                done.set_exception(exc)

        try:
            loop.call_soon_threadsafe(run)
            fresh = done.result(timeout=SCRAPE_WAIT)
        except Exception as exc:  # the loop is closed or busy past the wait
            log.debug("scrape: no fresh reading (%s); the latest one is served", exc)
            return stats
        self.update(fresh)
        return fresh

    def collect(self) -> Iterator[Any]:
        stats = self._fresh()
        if stats is None:
            return
        f = stats.fetch
        yield _gauge(
            "headway_pages_per_second",
            "Page fetches per second (last interval)",
            f.pages_per_second,
        )
        yield _gauge(
            "headway_bytes_per_second",
            "Body bytes per second (last interval)",
            f.bytes_per_second,
        )
        yield _gauge("headway_retry_ratio", "Retries / requests over the crawl", f.retry_ratio)
        c = CounterMetricFamily("headway_fetches", "Page fetches by outcome", labels=["outcome"])
        for outcome, n in sorted(f.outcomes.items()):
            c.add_metric([outcome], n)
        yield c
        yield CounterMetricFamily(
            "headway_requests", "HTTP requests incl. robots.txt", value=f.requests
        )
        yield CounterMetricFamily("headway_bytes", "Body bytes received", value=f.bytes)
        depth = GaugeMetricFamily(
            "headway_stage_depth", "Items waiting in a stage", labels=["stage"]
        )
        capacity = GaugeMetricFamily("headway_stage_capacity", "Bound of a stage", labels=["stage"])
        oldest = GaugeMetricFamily(
            "headway_stage_oldest_age_seconds", "Age of the oldest waiting item", labels=["stage"]
        )
        held = GaugeMetricFamily(
            "headway_stage_bytes", "Estimated bytes held in a stage", labels=["stage"]
        )
        blocked = CounterMetricFamily(
            "headway_stage_blocked_puts", "Puts that waited for room", labels=["stage"]
        )
        for st in stats.stages:
            depth.add_metric([st.name], st.depth)
            capacity.add_metric([st.name], st.capacity)
            oldest.add_metric([st.name], st.oldest_age)
            held.add_metric([st.name], st.bytes)
            blocked.add_metric([st.name], st.blocked_puts)
        yield from (depth, capacity, oldest, held, blocked)
        rej = CounterMetricFamily(
            "headway_admission_rejected", "URLs refused at admission, by reason", labels=["reason"]
        )
        for reason, n in sorted(stats.admission.rejected.items()):
            rej.add_metric([reason], n)
        yield rej
        hostile = CounterMetricFamily(
            "headway_hostile",
            "What a page or server made the crawl cut or refuse, by reason",
            labels=["reason"],
        )
        for reason, n in sorted(f.hostile.items()):
            hostile.add_metric([reason], n)
        yield hostile
        fr = stats.frontier
        shed = CounterMetricFamily(
            "headway_frontier_shed", "URLs shed by the frontier", labels=["reason"]
        )
        for reason, n in sorted(fr.shed.items() if fr is not None else ()):
            shed.add_metric([reason], n)
        yield shed
        front = GaugeMetricFamily(
            "headway_frontier_urls", "Frontier URLs by state", labels=["state"]
        )
        if fr is not None:
            for state, n in (
                ("queued", fr.queued),
                ("leased", fr.leased),
                ("done", fr.done),
                ("failed", fr.failed),
                ("revisit-parked", fr.revisits_parked),
            ):
                front.add_metric([state], n)
        yield front
        sch = stats.scheduler
        yield _gauge("headway_hosts_active", "Hosts with a request in flight", sch.active)
        yield _gauge("headway_hosts_ready", "Hosts ready to start a request", sch.ready)
        yield _gauge(
            "headway_hosts_waiting",
            "Hosts waiting for their gap, a backoff or a robots.txt retry",
            sch.waiting,
        )
        yield _gauge(
            "headway_hosts_parked", "Hosts parked (cool-down or long Crawl-delay)", sch.parked
        )
        yield _gauge("headway_leases_held", "Leases this node holds", stats.leases.held)
        yield CounterMetricFamily(
            "headway_lease_extensions",
            "Leases extended by the lease heartbeat",
            value=stats.leases.extended,
        )
        in_flight = GaugeMetricFamily(
            "headway_host_in_flight", "Requests in flight", labels=["host"]
        )
        limit = GaugeMetricFamily(
            "headway_host_limit", "Current concurrency limit", labels=["host"]
        )
        gap = GaugeMetricFamily(
            "headway_host_gap_seconds", "Current gap between starts", labels=["host"]
        )
        retry = GaugeMetricFamily("headway_host_retry_ratio", "Retries / requests", labels=["host"])
        health = GaugeMetricFamily("headway_host_health", "Health score 0..1", labels=["host"])
        for h in sch.throttled[:TOP_HOSTS]:
            in_flight.add_metric([h.host], h.in_flight)
            limit.add_metric([h.host], h.limit)
            gap.add_metric([h.host], h.gap)
            retry.add_metric([h.host], h.retry_ratio)
            health.add_metric([h.host], h.health)
        yield from (in_flight, limit, gap, retry, health)
        lag = stats.loop_lag
        yield _gauge(
            "headway_loop_lag_seconds",
            "Worst lag of the event loop over the last 10 to 20 s",
            lag.recent,
        )
        yield _gauge(
            "headway_loop_lag_worst_seconds", "Worst lag of the event loop in this run", lag.worst
        )
        yield CounterMetricFamily(
            "headway_loop_lag_over_bound",
            "Wake-ups of the loop-lag probe that came over 1 s late",
            value=lag.over_bound,
        )
        rc = stats.recrawl
        for name, doc, value in (
            ("headway_revisits", "Page fetches of URLs fetched before (recrawl)", rc.revisits),
            ("headway_revisits_changed", "Revisits that found new content", rc.changed),
            (
                "headway_revisits_unchanged",
                "Revisits that found the same content (304 or same digest)",
                rc.unchanged,
            ),
            ("headway_revisits_not_modified", "Revisits answered 304", rc.not_modified),
        ):
            yield CounterMetricFamily(name, doc, value=value)


class PrometheusExporter:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.collector = StatsCollector()
        self.registry.register(self.collector)
        self._server: Any = None

    def start(self, port: int, addr: str = "127.0.0.1") -> None:
        self._server, _thread = start_http_server(port, addr=addr, registry=self.registry)
        log.info("Prometheus metrics on http://%s:%d/metrics", addr, port)

    def update(self, stats: NodeStats) -> None:
        self.collector.update(stats)

    def read_from(self, loop: asyncio.AbstractEventLoop, build: Callable[[], NodeStats]) -> None:
        """Each scrape builds a reading with ``build`` on ``loop``."""
        self.collector.read_from(loop, build)

    def close(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server = None
