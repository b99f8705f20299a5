"""Durability ordering, checked event by event: a URL is settled in the frontier only after
the store batch holding its records was written and flushed.

The store is made slow (as a busy disk is) so that a settlement racing ahead of its write
cannot hide behind the store being faster than the settle stage's linger.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from headway.frontier.sqlite import SqliteFrontier
from headway.frontier.store import Completion
from headway.runtime.node import Node
from headway.runtime.storewriter import StoreWriter
from headway.testing.simweb import HostSpec, SimWeb, SimWebSpec
from headway.work.items import FetchedPage, SkippedUrl, Work
from tests.integration.helpers import TOKEN, crawl_settings

pytestmark = pytest.mark.slow


async def test_settled_only_after_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seq = itertools.count()
    lock = threading.Lock()
    written: dict[int, int] = {}  # lease id -> sequence number when its write ended
    settled: dict[int, int] = {}  # lease id -> sequence number when its settle began
    real_write = StoreWriter._write
    real_complete = SqliteFrontier.complete

    def slow_write(self: StoreWriter, batch: Sequence[Work], *args: Any) -> Any:
        time.sleep(0.02)
        plans = real_write(self, batch, *args)
        with lock:
            n = next(seq)
            for work in batch:
                if isinstance(work, FetchedPage | SkippedUrl):
                    written[work.lease.id] = n
        return plans

    def recording_complete(
        self: SqliteFrontier, completions: Sequence[Completion], *args: Any
    ) -> Any:
        with lock:
            n = next(seq)
            for c in completions:
                settled[c.id] = n
        return real_complete(self, completions, *args)

    monkeypatch.setattr(StoreWriter, "_write", slow_write)
    monkeypatch.setattr(SqliteFrontier, "complete", recording_complete)
    spec = SimWebSpec(hosts=2, host_spec=HostSpec(pages=12, links_per_page=4), seed=4)
    async with SimWeb(spec) as web:
        settings = crawl_settings(tmp_path / "c", delay=0.0, concurrency=4, max_duration=60)
        summary = await Node(settings, web.seeds()).run()
        assert summary.stopped_by == "finished"
        assert summary.frontier.done >= len(web.expected_pages(TOKEN))
    assert len(settled) >= len(web.expected_pages(TOKEN))
    early = {
        i: (settled[i], written.get(i)) for i in settled if settled[i] < written.get(i, 1 << 60)
    }
    assert not early, f"settled before (or without) their write: {early}"
