"""Near-duplicates and the quality priority, measured on the simulated web."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import pytest

from headway.runtime.node import Node
from headway.testing.graph import near_dup_group
from headway.testing.simweb import HostSpec, SimWeb, SimWebSpec
from tests.integration.helpers import TOKEN, crawl_settings, read_crawl_log

pytestmark = pytest.mark.slow


def _path(url: str) -> str:
    return urlsplit(url).path


def _label(url: str) -> object:
    """The labelled set's truth: pages of one near-duplicate group are one article; any
    other page is itself, whatever its query (the simulated web ignores queries, so a
    session id in the query serves the same page)."""
    group = near_dup_group(_path(url))
    return ("group", group) if group is not None else ("page", _path(url))


async def test_near_duplicates_precision_and_recall(tmp_path: Path) -> None:
    spec = SimWebSpec(
        hosts=2,
        host_spec=HostSpec(pages=24, links_per_page=4, features=frozenset({"near-dups"})),
        cross_links=0.0,
        seed=3,
    )
    async with SimWeb(spec) as web:
        settings = crawl_settings(tmp_path / "c", delay=0.01, max_depth=4, quality_gap=0)
        summary = await Node(settings, web.seeds()).run()
        assert summary.stopped_by == "finished"
    pages = [
        e
        for e in read_crawl_log(tmp_path / "c")
        if e["status"] == 200 and e["handler"] == "html" and not e["url"].endswith("robots.txt")
    ]
    assert all(e["simhash"] and len(e["simhash"]) == 16 for e in pages)
    fetched_at: dict[str, int] = {}
    tp = fp = fn = 0
    seen_labels: set[tuple[str | None, object]] = set()
    for i, e in enumerate(pages):
        host = urlsplit(e["url"]).hostname
        fetched_at[e["url"]] = i
        label = _label(e["url"])
        # truth: an earlier page of the same host carries the same label
        actual = (host, label) in seen_labels
        seen_labels.add((host, label))
        claimed = e["near_dup_of"]
        if claimed is not None:
            assert fetched_at.get(claimed, i) < i, "a near-duplicate points at an earlier page"
            assert urlsplit(claimed).hostname == host
            right = actual and _label(claimed) == label
            tp += right
            fp += not right
        elif actual:
            fn += 1
    labelled = sum(1 for e in pages if near_dup_group(_path(e["url"])) is not None)
    assert labelled == 2 * 32, "both hosts serve the whole labelled set"
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    print(
        f"\nnear-duplicates: {len(pages)} pages, {tp + fn} labelled near-duplicates; "
        f"flagged {tp + fp}: precision {precision:.2f}, recall {recall:.2f}"
    )
    assert tp + fn == 2 * 8 * 3  # per host: 3 variants after the first page of 8 groups
    assert precision >= 0.95 and recall >= 0.9


def _spam_web() -> SimWebSpec:
    good = HostSpec(pages=30, links_per_page=6)
    spam = HostSpec(pages=200, links_per_page=40, features=frozenset({"spam"}))
    return SimWebSpec(
        hosts=11, host_spec=good, overrides={8: spam, 9: spam, 10: spam}, cross_links=0.05, seed=5
    )


async def _good_share(tmp_path: Path, priority: str) -> tuple[float, int, int]:
    """Share of the good hosts' pages fetched in the first 20% of fetches."""
    spec = _spam_web()
    async with SimWeb(spec) as web:
        expected = web.expected_pages(TOKEN)
        spam_hosts = {web.hosts[i] for i in (8, 9, 10)}
        good = {u for u in expected if urlsplit(u).hostname not in spam_hosts}
        budget = len(expected) // 5
        settings = crawl_settings(
            tmp_path / priority, delay=0.05, max_pages=budget, priority=priority, quality_gap=5.0
        )
        await Node(settings, web.seeds()).run()
        fetched = {web.url(r.host, r.path) for r in web.fetched()}
    reached = len(good & fetched)
    return reached / len(good), reached, budget


async def test_quality_priority_reaches_more_good_pages_early(tmp_path: Path) -> None:
    depth_share, depth_n, budget = await _good_share(tmp_path, "depth")
    quality_share, quality_n, _ = await _good_share(tmp_path, "quality")
    print(
        f"\nfirst {budget} fetches (20%): good pages reached: depth order {depth_n} "
        f"({depth_share:.0%}), quality priority {quality_n} ({quality_share:.0%})"
    )
    assert quality_share > depth_share
