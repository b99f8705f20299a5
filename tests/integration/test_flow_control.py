"""Flow control under stress, asserted from the simulated web's request log: pushback
slows only the host that pushes back, a slow parser slows fetching without losing pages,
timeouts are retried with backoff within the budget, floods are shed, the quota pause
stops everything until resumed, and a proxy's cap bounds in-flight requests."""

from __future__ import annotations

import asyncio
import itertools
import logging
import statistics
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import aiohttp
import pytest

from headway.runtime.node import Node
from headway.runtime.parsepool import PARSE_SLEEP_ENV
from headway.runtime.stats import NodeStats
from headway.testing.simweb import HostSpec, LoggedRequest, SimWeb, SimWebSpec
from tests.integration.helpers import (
    TOKEN,
    crawl_settings,
    fetched_urls,
    page_requests,
    read_crawl_log,
)

pytestmark = pytest.mark.slow


def _starts(log: list[LoggedRequest], host: str) -> list[LoggedRequest]:
    return sorted((r for r in page_requests(log) if r.host == host), key=lambda r: r.start)


def _gaps(reqs: list[LoggedRequest]) -> list[float]:
    return [b.start - a.start for a, b in itertools.pairwise(reqs)]


async def _wait_for(cond: object, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():  # type: ignore[operator]
        if time.monotonic() > deadline:
            pytest.fail("condition not reached in time")
        await asyncio.sleep(0.01)


def _metric_values(text: str) -> dict[str, float]:
    values: dict[str, float] = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            values[name] = float(value)
    return values


async def _scrape_until(
    url: str, done: Callable[[dict[str, float]], bool], timeout: float = 30.0
) -> dict[str, float]:
    """Scrape ``url`` (Prometheus text) until ``done`` holds for its values."""
    deadline = time.monotonic() + timeout
    async with aiohttp.ClientSession() as session:
        while True:
            try:
                async with session.get(url) as resp:
                    assert resp.status == 200
                    values = _metric_values(await resp.text())
            except aiohttp.ClientConnectionError:
                values = {}  # not serving yet
            if done(values):
                return values
            if time.monotonic() > deadline:
                pytest.fail(f"metrics never reached the condition: {sorted(values)[:5]}")
            await asyncio.sleep(0.02)


@pytest.mark.parametrize("retry_after", [None, 1.0])
async def test_429_slows_only_that_host_and_it_recovers(
    tmp_path: Path, retry_after: float | None
) -> None:
    gap = 0.05
    spec = SimWebSpec(hosts=3, host_spec=HostSpec(pages=70, links_per_page=4), cross_links=0.0)
    async with SimWeb(spec) as web:
        hot, calm = web.hosts[0], web.hosts[1]
        settings = crawl_settings(tmp_path / "c", delay=gap, retry_base=0.05, retry_budget=10)
        node = Node(settings, web.seeds())
        crawl = asyncio.create_task(node.run())
        await _wait_for(lambda: len(_starts(web.log, hot)) >= 10)
        web.set_pushback(hot, status=429, retry_after=retry_after)
        t_push = time.monotonic()
        await _wait_for(lambda: sum(1 for r in _starts(web.log, hot) if r.status == 429) >= 5)
        web.clear_pushback(hot)
        t_clear = time.monotonic()
        summary = await crawl
    assert summary.stopped_by == "finished"

    hot_reqs = _starts(web.log, hot)
    pushed = [r for r in hot_reqs if r.status == 429]
    assert len(pushed) >= 5
    after_429 = [b.start - a.end for a, b in itertools.pairwise(hot_reqs) if a.status == 429]
    if retry_after is not None:
        # Retry-After is honoured exactly, for that host
        assert min(after_429) >= retry_after - 0.03
    else:
        # the host's rate falls within a few requests: the gap at least doubles each time
        assert after_429[2] >= 4 * gap
        assert after_429[3] > after_429[1]
    # other hosts' rates do not change during the pushback
    calm_before = [
        g
        for g, r in zip(_gaps(_starts(web.log, calm)), _starts(web.log, calm)[1:], strict=False)
        if r.start < t_push
    ]
    calm_during = [
        g
        for g, r in zip(_gaps(_starts(web.log, calm)), _starts(web.log, calm)[1:], strict=False)
        if t_push <= r.start < t_clear
    ]
    assert calm_during, "the calm host kept being crawled during the pushback"
    assert statistics.median(calm_during) < 2 * max(gap, statistics.median(calm_before))
    # and the pushing host recovers once it stops pushing back: its last gaps are small again
    recovered = [
        g for g, r in zip(_gaps(hot_reqs), hot_reqs[1:], strict=False) if r.start > t_clear
    ]
    assert len(recovered) >= 15
    assert statistics.median(recovered[-5:]) < 4 * gap
    # no page was lost: every page of the pushing host was eventually fetched with 200
    ok = {web.url(r.host, r.path) for r in web.log if r.status == 200}
    assert web.expected_pages(TOKEN) <= ok


async def test_slow_parser_slows_fetching_without_losing_pages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(PARSE_SLEEP_ENV, "0.03")
    spec = SimWebSpec(hosts=4, host_spec=HostSpec(pages=30, links_per_page=4), cross_links=0.0)
    parse_queue = 6
    concurrency = 16
    async with SimWeb(spec) as web:
        settings = crawl_settings(
            tmp_path / "c",
            delay=0.0,
            max_per_host=4,
            concurrency=concurrency,
            parse_queue=parse_queue,
            parsers=1,
        )
        node = Node(settings, web.seeds())
        crawl = asyncio.create_task(node.run())
        samples: list[NodeStats] = []
        lag: list[int] = []
        while not crawl.done():
            await asyncio.sleep(0.02)
            stats = node.last_stats
            if stats is not None:
                samples.append(stats)
                fr = stats.frontier
                if fr is not None:
                    settled = fr.done + fr.failed
                    lag.append(len(page_requests(web.log)) - settled)
        summary = await crawl
    assert summary.stopped_by == "finished"
    assert samples
    # bounded: the parse queue never exceeds its capacity, fetches in flight never exceed
    # the global bound, and fetched-but-unsettled pages never exceed the stages' bounds
    for stats in samples:
        stages = {s.name: s for s in stats.stages}
        assert stages["parse-queue"].depth <= parse_queue
        assert stats.fetch.in_flight <= concurrency
    bound = parse_queue + 2 + concurrency + settings.runtime.store_queue
    assert max(lag) <= bound
    # fetching slowed to the parser's pace: the parse queue filled and puts waited
    assert max(s.stages[0].depth for s in samples) == parse_queue
    assert summary.seconds >= summary.fetches * 0.03 * 0.8
    # no page lost
    logged = {e["url"] for e in read_crawl_log(tmp_path / "c") if e["status"] == 200}
    assert web.expected_pages(TOKEN) <= logged


async def test_timeouts_are_retried_with_backoff_within_the_budget(tmp_path: Path) -> None:
    spec = SimWebSpec(hosts=2, host_spec=HostSpec(pages=3, links_per_page=2), cross_links=0.0)
    async with SimWeb(spec) as web:
        dead = web.hosts[1]
        web.set_timeout(dead, True)  # robots.txt answers; pages hang
        settings = crawl_settings(
            tmp_path / "c",
            delay=0.05,
            total_timeout=0.3,
            read_timeout=0.3,
            connect_timeout=0.3,
            retry_base=0.1,
            retry_budget=3,
            park_seconds=1.0,
        )
        summary = await Node(settings, web.seeds()).run()
    assert summary.stopped_by == "finished"
    dead_reqs = _starts(web.log, dead)
    per_url = Counter(r.path for r in dead_reqs)
    assert per_url["/"] == 1 + 3, per_url  # first attempt + the retry budget, never more
    assert max(per_url.values()) <= 4
    # each timeout is pushback: the host's gap between request starts doubles from
    # 2 x delay (0.1 s, 0.2 s, 0.4 s); retries wait for it (and for their own jittered delay)
    gaps = _gaps(dead_reqs)
    for i, g in enumerate(gaps):
        assert g >= 0.1 * 2**i - 0.03, (i, gaps)
    log = [e for e in read_crawl_log(tmp_path / "c") if dead in e["url"] and e["url"].endswith("/")]
    assert [e["attempt"] for e in log] == [1, 2, 3, 4]
    assert log[-1]["outcome"] == "timeout"


async def test_flooded_host_is_shed_keeping_the_best_urls(tmp_path: Path) -> None:
    spec = SimWebSpec(hosts=1, host_spec=HostSpec(pages=300, links_per_page=12))
    budget = 40
    async with SimWeb(spec) as web:
        settings = crawl_settings(tmp_path / "c", delay=0.0, max_per_host=4, host_budget=budget)
        summary = await Node(settings, web.seeds()).run()
    assert summary.stopped_by == "finished"
    assert summary.frontier.shed.get("host-budget", 0) > 0
    fetched = fetched_urls(web, web.log)
    assert len(fetched) <= budget
    log = read_crawl_log(tmp_path / "c")
    depth_of = {e["url"]: e["depth"] for e in log}
    # the home page and every page it links to (depth 1) were kept: shedding drops the
    # lowest-priority (deepest) URLs
    home = web.seeds()[0]
    assert depth_of[home] == 0
    depth1 = [u for u, d in depth_of.items() if d == 1]
    assert len(depth1) >= 10
    assert max(depth_of.values()) <= 3


async def test_quota_status_pauses_everything_until_resumed(tmp_path: Path) -> None:
    spec = SimWebSpec(hosts=2, host_spec=HostSpec(pages=20, links_per_page=3), cross_links=0.0)
    async with SimWeb(spec) as web:
        settings = crawl_settings(tmp_path / "c", delay=0.02, quota_status=509)
        node = Node(settings, web.seeds())
        crawl = asyncio.create_task(node.run())
        await _wait_for(lambda: len(page_requests(web.log)) >= 6)
        web.set_pushback(web.hosts[0], status=509)
        await _wait_for(lambda: node.last_stats is not None and node.last_stats.scheduler.paused)
        web.clear_pushback(web.hosts[0])
        n_paused = len(web.log)
        await asyncio.sleep(1.0)
        in_pause = web.log[n_paused:]
        (tmp_path / "c" / "resume").touch()
        summary = await crawl
    # at most the requests already in flight when the 509 came back finished during the pause
    assert len(in_pause) <= 2
    assert summary.stopped_by == "finished"
    ok = {web.url(r.host, r.path) for r in web.log if r.status == 200}
    assert web.expected_pages(TOKEN) <= ok


async def test_proxy_concurrency_caps_global_in_flight(tmp_path: Path) -> None:
    spec = SimWebSpec(
        hosts=4, host_spec=HostSpec(pages=10, links_per_page=3, delay=0.05), cross_links=0.0
    )
    async with SimWeb(spec) as web:
        # the simulated web serves by Host header, so it also works as a forward proxy
        settings = crawl_settings(
            tmp_path / "c",
            delay=0.0,
            max_per_host=4,
            resolve=[],
            proxy=f"http://127.0.0.1:{web.port}",
            proxy_concurrency=2,
        )
        summary = await Node(settings, web.seeds()).run()
    assert summary.stopped_by == "finished"
    events = sorted([(r.start, 1) for r in web.log] + [(r.end, -1) for r in web.log])
    level = peak = 0
    for _, delta in events:
        level += delta
        peak = max(peak, level)
    assert peak <= 2
    # through a proxy the request target is the absolute URL
    via_proxy = {r.path for r in web.log if r.path.startswith("http://")}
    assert len(via_proxy) == len(web.log)
    assert web.expected_pages(TOKEN) <= via_proxy


async def test_metrics_endpoint_serves_documented_names(tmp_path: Path) -> None:
    from headway.bench.harness import free_port

    port = free_port()
    spec = SimWebSpec(hosts=2, host_spec=HostSpec(pages=15, links_per_page=3), cross_links=0.0)
    async with SimWeb(spec) as web:
        settings = crawl_settings(tmp_path / "c", delay=0.1, metrics_port=port)
        node = Node(settings, web.seeds())
        crawl = asyncio.create_task(node.run())
        # scraped until a published snapshot counts 5 pages fetched (figures are
        # published each metrics interval), not after a fixed wait
        values = await _scrape_until(
            f"http://127.0.0.1:{port}/metrics",
            lambda v: v.get('headway_fetches_total{outcome="ok"}', 0.0) >= 5,
        )
        await crawl
    names = {n.split("{")[0] for n in values}
    for expected in (
        "headway_pages_per_second",
        "headway_retry_ratio",
        "headway_fetches_total",
        "headway_stage_depth",
        "headway_stage_capacity",
        "headway_stage_oldest_age_seconds",
        "headway_stage_blocked_puts_total",
        "headway_frontier_urls",
        "headway_hosts_active",
        "headway_host_gap_seconds",
        "headway_host_limit",
        "headway_host_in_flight",
        "headway_host_retry_ratio",
        "headway_host_health",
        "headway_requests_total",
    ):
        assert expected in names, expected
    assert values['headway_stage_capacity{stage="parse-queue"}'] == settings.runtime.parse_queue
    assert values['headway_fetches_total{outcome="ok"}'] >= 5
    assert 0.0 <= values["headway_retry_ratio"] <= 1.0
    gaps = [v for k, v in values.items() if k.startswith("headway_host_gap_seconds")]
    assert gaps and all(g >= 0.1 - 1e-9 for g in gaps)
    lines = (tmp_path / "c" / "metrics.jsonl").read_text().splitlines()
    assert len(lines) >= 2


async def test_memory_target_sheds_deep_links_counted_by_reason(tmp_path: Path) -> None:
    spec = SimWebSpec(hosts=2, host_spec=HostSpec(pages=400, links_per_page=3), cross_links=0.0)
    async with SimWeb(spec) as web:
        # a target below any real RSS: the node is always "over", so admission keeps
        # narrowing to shallower links and sheds the deeper ones, counted as "memory"
        settings = crawl_settings(tmp_path / "c", delay=0.02, memory_target_mib=1)
        summary = await Node(settings, web.seeds()).run()
        expected = web.expected_pages(TOKEN)
    assert summary.stopped_by == "finished"
    assert summary.admission_rejected.get("memory", 0) > 0
    fetched = {e["url"] for e in read_crawl_log(tmp_path / "c") if e["status"] == 200}
    assert len(fetched) < len(expected)  # deep pages were shed, before any fetch cost
    assert set(web.seeds()) <= fetched  # the highest-priority URLs were kept


async def test_a_memory_target_below_the_node_itself_is_warned_of_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    spec = SimWebSpec(hosts=2, host_spec=HostSpec(pages=400, links_per_page=3), cross_links=0.0)
    caplog.set_level(logging.WARNING, logger="headway.runtime.monitor")
    async with SimWeb(spec) as web:
        settings = crawl_settings(
            tmp_path / "c", delay=0.3, memory_target_mib=1, max_depth=2, max_duration=6
        )
        await Node(settings, web.seeds()).run()
    warned = [r.getMessage() for r in caplog.records if "--memory-target-mib 1 " in r.getMessage()]
    assert len(warned) == 1, warned


async def test_stuck_parser_is_replaced_and_the_crawl_finishes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(PARSE_SLEEP_ENV, "3.0")
    spec = SimWebSpec(hosts=2, host_spec=HostSpec(pages=5, links_per_page=2), cross_links=0.0)
    async with SimWeb(spec) as web:
        # every parse takes 3 s, the timeout is 0.5 s: each page is recorded as a parse
        # error (its URL settled, not held forever) and the parser processes are replaced
        settings = crawl_settings(tmp_path / "c", delay=0.0, parse_timeout=0.5)
        summary = await Node(settings, web.seeds()).run()
    assert summary.stopped_by == "finished"
    assert summary.frontier.leased == 0 and summary.frontier.queued == 0
    pages = [e for e in read_crawl_log(tmp_path / "c") if not e["url"].endswith("robots.txt")]
    assert {e["url"] for e in pages} == set(web.seeds())
    assert all(e["error"] and "parse timed out" in e["error"] for e in pages)
