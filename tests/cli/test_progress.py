"""The live progress line: never wider than the terminal, most important figures kept."""

from __future__ import annotations

import io
import json
import logging
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from headway.cli.progress import Progress, fit_fields, progress_text
from headway.frontier.store import FrontierCounts
from headway.runtime.looplag import LoopLagStats
from headway.runtime.stage import StageStats
from headway.runtime.stats import FetchStats, HostRow, NodeStats, SchedulerStats


def _stats(paused: bool = False) -> NodeStats:
    """A big crawl: every figure as wide as it gets in practice."""
    return NodeStats(
        fetch=FetchStats(
            fetches=12_345_678,
            requests=12_400_000,
            bytes=987_654_321_000,
            retries=54_321,
            outcomes={"ok": 12_000_000, "timeout": 345_678},
            pages_per_second=1234.5,
        ),
        stages=tuple(
            StageStats(name, 250, 256, 0.5, 40, 2, 40_000, 67_108_864)
            for name in ("parse-queue", "parse", "store", "settle")
        ),
        frontier=FrontierCounts(98_765_432, 70, 12_000_000, 345_678, 111_111_110, 543_210, {}),
        scheduler=SchedulerStats(
            known=50_000,
            active=3,
            ready=0,
            waiting=49_876,
            parked=12,
            paused=paused,
            throttled=(HostRow("a-rather-long-host-name.example.com:8080", 1, 1.0, 4, 0.25, 0.6),),
        ),
    )


@pytest.mark.parametrize("width", [20, 40, 60, 80, 100, 132, 200])
@pytest.mark.parametrize("paused", [False, True])
def test_live_line_fits_the_terminal(width: int, paused: bool) -> None:
    text = progress_text(_stats(paused), width)
    assert len(text) <= width, (width, text)
    assert text.startswith("12345678 pages")
    if paused and width >= 40:
        assert "PAUSED" in text


def test_narrow_terminal_keeps_the_important_figures() -> None:
    full = progress_text(_stats())
    assert len(full) > 132  # everything, for a log line
    for part in ("1234.5 pages/s", "98765432 URLs queued", "543210 with URLs", "49876 waiting"):
        assert part in full
    assert "parse-queue 250/256" in full and "12 parked" in full
    at_80 = progress_text(_stats(), 80)
    for part in ("12345678 pages", "1234.5", "98765432", "543210 hosts", "49876 waiting"):
        assert part in at_80, at_80
    assert "parse-queue" not in at_80  # the stages go first
    wide = progress_text(_stats(), 200)
    assert "parse-queue 250/256" in wide or "stages 250/256" in wide


def test_fit_fields_shortens_then_drops_the_last_first() -> None:
    fields = [["aaaa"], ["bbbbbb", "bb"], ["cccccc", "cc"]]
    assert fit_fields(fields, None) == "aaaa bbbbbb cccccc".replace(" ", "  ")
    assert fit_fields(fields, 16, sep=" ") == "aaaa bbbbbb cc"
    assert fit_fields(fields, 10, sep=" ") == "aaaa bb cc"
    assert fit_fields(fields, 7, sep=" ") == "aaaa bb"
    assert fit_fields(fields, 4, sep=" ") == "aaaa"
    assert fit_fields(fields, 3, sep=" ") == "aa…"


def test_live_display_never_wraps_at_80_columns() -> None:
    console = Console(file=io.StringIO(), width=80, force_terminal=True)
    progress = Progress(enabled=True, console=console)
    progress.start()
    try:
        stats = _stats()
        slow = replace(
            stats.scheduler,
            throttled=tuple(
                HostRow(f"host-{i}-with-a-long-name.example.org:8443", 1, 1.0, 30.0, 0.5, 0.1)
                for i in range(3)
            ),
        )
        progress.update(replace(stats, scheduler=slow))
        lines = progress.shown.plain.splitlines()
    finally:
        progress.stop()
    assert len(lines) == 4  # the line and three throttled hosts
    assert all(len(line) < 80 for line in lines), lines
    assert "gap 30.0s" in lines[1]


async def test_hosts_waiting_for_their_gap_are_seen_at_a_one_second_gap(tmp_path: Path) -> None:
    """At the default gap, fetches take milliseconds and hosts wait about a second: the
    instant counts of hosts fetching or ready read 0 nearly always, the hosts waiting
    for their gap do not (that is what the live line shows)."""
    from headway.runtime.node import Node
    from headway.testing.simweb import HostSpec, SimWeb, SimWebSpec
    from tests.integration.helpers import crawl_settings

    spec = SimWebSpec(hosts=4, host_spec=HostSpec(pages=40, links_per_page=6), seed=3)
    readings: list[NodeStats] = []
    async with SimWeb(spec) as web:
        settings = crawl_settings(tmp_path / "c", delay=1.0, max_duration=4)
        await Node(settings, web.seeds(), on_stats=readings.append).run()
    late = [r for r in readings if r.elapsed > 1.5 and r.fetch.fetches > 0]
    assert len(late) >= 4, len(late)
    waiting = sorted(r.scheduler.waiting for r in late)
    assert waiting[len(waiting) // 2] >= 2, waiting  # the median reading: most hosts wait
    line = progress_text(late[-1], 80)
    assert f"{late[-1].scheduler.waiting} waiting" in line, line


def test_log_lines_print_above_the_live_display_not_into_it() -> None:
    from headway.cli.commands import _setup_logging

    out = io.StringIO()
    console = Console(file=out, width=80, force_terminal=True)
    root = logging.getLogger()
    saved = (root.handlers[:], root.level)
    _setup_logging("text", quiet=False)
    progress = Progress(enabled=True, console=console)
    progress.start()
    try:
        logging.getLogger("headway.test").warning("a message while the display runs")
    finally:
        progress.stop()
        root.handlers[:], root.level = saved
    lines = [line for line in out.getvalue().splitlines() if "a message while" in line]
    assert len(lines) == 1 and "starting..." not in lines[0], out.getvalue()


def test_the_summary_counts_pages_parked_for_a_revisit(capsys: pytest.CaptureFixture[str]) -> None:
    from headway.cli.progress import print_summary
    from headway.runtime.summary import CrawlSummary, StopReason
    from headway.settings import build_settings

    def summary(parked: int, requeued: int = 0) -> str:
        counts = FrontierCounts(
            queued=3,
            leased=0,
            done=5,
            failed=0,
            seen=132,
            hosts_queued=1,
            shed={},
            revisits_parked=parked,
        )
        print_summary(
            CrawlSummary(
                StopReason.FINISHED,
                True,
                1.0,
                0.5,
                5,
                6,
                1000,
                {"ok": 5},
                counts,
                0,
                0,
                1,
                {},
                90.0,
                requeued_at_stop=requeued,
            ),
            build_settings({"user_agent": "testbot/1.0 (+https://example.org/bot)"}),
            quiet=False,
        )
        # the table wraps long cells: read its words in order, without the box
        return " ".join(capsys.readouterr().out.replace("│", " ").split())

    assert "parked for a revisit 124" in summary(124)
    assert "parked" not in summary(0)
    assert "5 (7 of them not parsed at the stop" in summary(0, requeued=7)
    assert "not parsed" not in summary(0)


def _finished(failed: int, disallowed: int, resumed: bool = False) -> Any:
    from headway.runtime.summary import CrawlSummary, StopReason

    counts = FrontierCounts(
        queued=0, leased=0, done=500, failed=failed, seen=510, hosts_queued=0, shed={}
    )
    return CrawlSummary(
        StopReason.FINISHED,
        resumed,
        10.0,
        1.5,
        500,
        505,
        10_000,
        {"ok": 500},
        counts,
        3,
        0,
        1,
        {},
        90.0,
        robots_disallowed=disallowed,
    )


def test_the_summary_counts_robots_disallowed_urls_apart_from_failed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from headway.cli.progress import print_summary
    from headway.settings import build_settings

    settings = build_settings({"user_agent": "testbot/1.0 (+https://example.org/bot)"})

    def text(summary: Any, quiet: bool = False) -> str:
        print_summary(summary, settings, quiet=quiet)
        return " ".join(capsys.readouterr().out.replace("│", " ").split())

    first = text(_finished(failed=10, disallowed=8))
    assert "failed 2, robots-disallowed 8" in first
    assert "robots-disallowed 8 URLs not fetched this run: robots.txt disallows them" in first
    assert "failed 2, robots-disallowed 8" in text(_finished(10, 8), quiet=True)
    # a resumed crawl: the frontier's failed count spans runs, the node's only this one
    assert "failed 10 (robots-disallowed ones included)" in text(_finished(10, 8, True))
    assert "robots-disallowed none" in text(_finished(failed=2, disallowed=0))


def test_the_summary_is_one_json_line_with_json_logs(capsys: pytest.CaptureFixture[str]) -> None:
    from headway.cli.progress import print_summary
    from headway.settings import build_settings

    settings = build_settings(
        {"user_agent": "testbot/1.0 (+https://example.org/bot)", "log_format": "json"}
    )
    for quiet in (False, True):
        print_summary(_finished(failed=10, disallowed=8), settings, quiet=quiet)
        lines = capsys.readouterr().out.splitlines()
        assert len(lines) == 1, lines
        line = json.loads(lines[0])
        assert line["message"] == "crawl summary"
        body = line["summary"]
        assert body["stopped_by"] == "finished" and body["fetches"] == 500
        assert body["robots_disallowed"] == 8 and body["frontier"]["failed"] == 10
        assert body["crawl_directory"] == str(settings.crawl.out)


def test_live_line_shows_the_event_loop_lag() -> None:
    calm = replace(_stats(), loop_lag=LoopLagStats(worst=0.012, recent=0.012, samples=50))
    assert "loop lag 12 ms" in progress_text(calm)
    stalled = replace(_stats(), loop_lag=LoopLagStats(worst=2.5, recent=0.02, samples=50))
    assert "loop lag 20 ms (worst 2.5 s)" in progress_text(stalled)
    assert len(progress_text(stalled, 80)) <= 80
