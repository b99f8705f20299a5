"""The monitor builds a statistics reading only when a reader is due."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from headway.runtime.monitor import TICK, Due
from headway.runtime.stats import NodeStats


@pytest.mark.parametrize(
    ("every", "first", "times", "expected"),
    [
        (None, None, [0.0, 1.0, 100.0], [False, False, False]),  # no reader: never due
        (1.0, None, [0.25, 0.75, 1.0, 1.25, 2.0], [False, False, True, False, True]),
        (1.0, 0.0, [0.0, 0.25, 1.0], [True, False, True]),  # due at once
        # late: due once, the next time from now, not a burst to catch up
        (1.0, None, [5.0, 5.25, 6.0], [True, False, True]),
    ],
)
def test_due(
    every: float | None, first: float | None, times: list[float], expected: list[bool]
) -> None:
    due = Due(every, 0.0, first=first)
    assert [due.check(t) for t in times] == expected


def test_absent_reader_is_never_due() -> None:
    assert math.isinf(Due(None, 5.0).at)


async def test_readings_only_for_their_readers(tmp_path: Path) -> None:
    """A crawl at a gap for about 3 s: the on_stats reader asked for one reading a
    second and metrics.jsonl for one every 2 s; the monitor wakes every TICK but builds
    only the readings these two need."""
    from headway.runtime.node import Node
    from headway.testing.simweb import HostSpec, SimWeb, SimWebSpec
    from tests.integration.helpers import crawl_settings

    spec = SimWebSpec(hosts=3, host_spec=HostSpec(pages=40, links_per_page=6), seed=5)
    readings: list[NodeStats] = []
    async with SimWeb(spec) as web:
        settings = crawl_settings(tmp_path / "c", delay=0.2, max_duration=3, metrics_interval=2.0)
        node = Node(settings, web.seeds(), on_stats=readings.append, stats_interval=1.0)
        summary = await node.run()
    assert summary.fetches > 10
    monitor = node.monitor
    ticks = summary.seconds / TICK
    # about one reading a second for on_stats (never one a tick)
    assert 2 <= len(readings) <= summary.seconds + 1, len(readings)
    lines = (tmp_path / "c" / "metrics.jsonl").read_text().splitlines()
    written = [json.loads(line) for line in lines]
    # the metrics file: at the start, every 2 s, and the final line at the stop
    assert 2 <= len(written) <= summary.seconds / 2 + 2, len(written)
    # every reading built went to a reader: on_stats or the file (the final line is
    # built by the stop, not by the monitor)
    assert monitor.readings <= len(readings) + len(written) - 1
    assert monitor.readings < ticks / 2, (monitor.readings, ticks)
    assert readings[-1].frontier is not None


async def test_metrics_file_has_a_record_a_second_at_the_start(tmp_path: Path) -> None:
    """During its first metrics interval (10 s) a run writes a record every second, so
    that ``headway status`` of a crawl a few seconds old shows what it fetched rather
    than the start-up record."""
    from headway.runtime.node import Node
    from headway.testing.simweb import HostSpec, SimWeb, SimWebSpec
    from tests.integration.helpers import crawl_settings

    spec = SimWebSpec(hosts=3, host_spec=HostSpec(pages=40, links_per_page=6), seed=5)
    async with SimWeb(spec) as web:
        settings = crawl_settings(
            tmp_path / "c", delay=0.2, max_duration=3.5, metrics_interval=10.0
        )
        summary = await Node(settings, web.seeds()).run()
    assert summary.fetches > 10
    lines = (tmp_path / "c" / "metrics.jsonl").read_text().splitlines()
    written = [json.loads(line) for line in lines]
    # start-up, about one a second, and the final line at the stop
    assert 4 <= len(written) <= summary.seconds + 3, len(written)
    before_stop = [w["fetches"] for w in written[1:-1]]
    assert before_stop and before_stop[-1] > 0, before_stop
