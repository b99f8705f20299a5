"""A resumed crawl's console keeps what earlier runs did: its seeds' first fetches."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from headway.cli.commands import asyncio_run_crawl
from headway.testing.simweb import HostSpec, SimWebSpec
from tests.integration.helpers import ThreadedSimWeb, crawl_settings

pytestmark = pytest.mark.slow


def _seed_rows(crawl: Path) -> dict[str, dict[str, object]]:
    snap = json.loads((crawl / "console.json").read_text())
    return {row["url"]: row for row in snap["seeds"]["rows"]}


def test_a_resumed_crawl_shows_its_seeds_first_fetch_from_an_earlier_run(
    tmp_path: Path,
) -> None:
    spec = SimWebSpec(hosts=2, host_spec=HostSpec(pages=10, links_per_page=3), seed=2)
    crawl = tmp_path / "c"
    with ThreadedSimWeb(spec) as web:
        seeds = web.seeds()
        asyncio_run_crawl(crawl_settings(crawl, max_pages=3), seeds, None)
        first = _seed_rows(crawl)
        fetched = [u for u in seeds if first[u]["first_fetch"] == "ok"]
        assert fetched, first
        before = len(web.log)
        asyncio_run_crawl(crawl_settings(crawl, max_pages=3), seeds, None)
        again = [r for r in list(web.log)[before:] if r.path == "/"]
    rows = _seed_rows(crawl)
    for url in fetched:
        assert rows[url]["first_fetch"] == "ok" and rows[url]["status"] == 200, rows[url]
        assert rows[url]["at"] == first[url]["at"]  # the first fetch's time, not this run's
    assert not again  # the second run fetched no seed again: the state came from the first
