"""The politeness gap runs from when a request was sent, not from when it was scheduled.

Loopback connects at once, so here the first page request to each host is held back
0.4 s after it was scheduled (a slow connection set-up); the next request, on the kept
connection, goes out at once. Measured in the server's own log, starts must still be at
least the delay apart.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from headway.fetch.client import Fetcher
from headway.fetch.result import FetchResult
from headway.runtime import node as node_module
from headway.runtime.node import Node
from headway.testing.simweb import HostSpec, SimWeb, SimWebSpec
from tests.integration.helpers import crawl_settings, page_requests, politeness_violations

pytestmark = pytest.mark.slow

DELAY = 0.5
SETUP = 0.4  # connection set-up time of the first request to a host


class SlowFirstConnect(Fetcher):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._connected: set[str] = set()

    async def fetch(self, url: str) -> FetchResult:
        host = url.split("/")[2]
        if host not in self._connected:
            self._connected.add(host)
            await asyncio.sleep(SETUP)
        return await super().fetch(url)


async def test_gap_is_measured_from_the_send_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(node_module, "Fetcher", SlowFirstConnect)
    spec = SimWebSpec(hosts=2, host_spec=HostSpec(pages=3, links_per_page=3), cross_links=0.0)
    async with SimWeb(spec) as web:
        summary = await Node(crawl_settings(tmp_path / "c", delay=DELAY), web.seeds()).run()
        assert summary.stopped_by == "finished"
        assert len(page_requests(web.log)) >= 6
        assert politeness_violations(web.log, {}, DELAY) == []
