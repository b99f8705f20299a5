"""The politeness gap runs from when a request was sent, not from when it was scheduled.

Loopback connects at once, so here the first page request to each host is held back
0.4 s after it was scheduled (a slow connection set-up); the next request, on the kept
connection, goes out at once. The times the request headers left (as the fetcher reports
them, the same clock the scheduler reads) must still be at least the delay apart, with
each HTTP client.
"""

from __future__ import annotations

import asyncio
import itertools
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from headway.fetch.result import FetchResult, Headers
from headway.runtime.node import Node
from headway.testing.simweb import HostSpec, SimWeb, SimWebSpec
from tests.integration.helpers import crawl_settings, page_requests, with_fetcher_mixin

pytestmark = pytest.mark.slow

DELAY = 0.5
SETUP = 0.4  # connection set-up time of the first request to a host


class SlowFirstConnect:  # a mixin over either client
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._connected: set[str] = set()

    async def fetch(self, url: str, extra_headers: Headers = ()) -> FetchResult:
        host = url.split("/")[2]
        if host not in self._connected:
            self._connected.add(host)
            await asyncio.sleep(SETUP)
        return _record(await super().fetch(url, extra_headers))

    async def fetch_robots(self, url: str) -> FetchResult:
        return _record(await super().fetch_robots(url))


SENT: dict[str, list[float]] = defaultdict(list)  # host -> send times, in order


def _record(res: FetchResult) -> FetchResult:
    assert res.sent_at is not None, res
    SENT[res.url.split("/")[2]].append(res.sent_at)
    return res


@pytest.mark.parametrize("client", ["aiohttp", "curl"])
async def test_gap_is_measured_from_the_send_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, client: str
) -> None:
    if client == "curl":
        pytest.importorskip("pycurl")
    with_fetcher_mixin(monkeypatch, SlowFirstConnect)
    SENT.clear()
    spec = SimWebSpec(hosts=2, host_spec=HostSpec(pages=3, links_per_page=3), cross_links=0.0)
    async with SimWeb(spec) as web:
        settings = crawl_settings(tmp_path / "c", delay=DELAY, max_duration=60, http_client=client)
        summary = await Node(settings, web.seeds()).run()
        assert summary.stopped_by == "finished"
        assert len(page_requests(web.log)) >= 6
    assert sum(len(times) for times in SENT.values()) >= 8
    for host, times in SENT.items():
        gaps = [b - a for a, b in itertools.pairwise(times)]
        assert min(gaps) >= DELAY - 0.001, (host, gaps)
