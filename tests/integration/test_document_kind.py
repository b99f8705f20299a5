"""Documents are read as what they were admitted as, under their own size limit, crawled
end to end and asserted from the simulated web's own request log.

A Sitemap URL that serves an HTML page, an empty body, or a feed URL that serves HTML is
refused with a reason and none of its links is followed; a sitemap served as text/plain
is read (lenient on the media type, strict on the content); an uncompressed sitemap of
over 1 MB is read whole at the default settings (SQLite and Redis frontiers)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from headway.runtime.node import Node
from headway.testing.graph import LARGE_SITEMAP_URLS
from headway.testing.simweb import HostSpec, SimWeb, SimWebSpec
from tests.integration.helpers import TOKEN, crawl_settings, read_crawl_log
from tests.support.redisproc import RedisServer

pytestmark = pytest.mark.slow

FAULTS = SimWebSpec(
    hosts=1,
    host_spec=HostSpec(pages=3, links_per_page=2, features=frozenset({"sitemap-faults"})),
)
LARGE = SimWebSpec(
    hosts=1,
    host_spec=HostSpec(pages=3, links_per_page=2, features=frozenset({"large-sitemap"})),
)
#: The entry of the large sitemap that the test expects fetched: its last one (it has
#: the only <lastmod>, so under a page budget it is fetched before the other entries).
LAST_LISTED = f"/listed/{LARGE_SITEMAP_URLS - 1}"


def _by_path(web: SimWeb, log: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    host = web.hosts[0]
    return {e["url"].removeprefix(web.url(host, "")): e for e in log if host in e["url"]}


async def test_documents_that_are_not_what_they_were_admitted_as_are_refused(
    tmp_path: Path,
) -> None:
    async with SimWeb(FAULTS) as web:
        summary = await Node(crawl_settings(tmp_path / "c", delay=0.02), web.seeds()).run()
        paths = [r.path for r in web.log]
        expected = web.expected_pages(TOKEN)
    assert summary.stopped_by == "finished"
    for doc in ("/sitemap-html.xml", "/sitemap-empty.xml", "/sitemap-plain.xml", "/feed-html.xml"):
        assert paths.count(doc) == 1, doc
    # the links of the refused documents are not followed; the text/plain sitemap's are
    assert "/lure/sitemap" not in paths
    assert "/lure/feed" not in paths
    assert "/hidden/plain" in paths
    fetched = {web.url(web.hosts[0], p) for p in paths}
    assert expected <= fetched
    by_path = _by_path(web, read_crawl_log(tmp_path / "c"))
    html = by_path["/sitemap-html.xml"]
    assert (html["handler"], html["outcome"], html["outlinks"]) == ("sitemap", "ok", 0)
    assert html["error"].startswith("sitemap refused: not-a-sitemap: an HTML page"), html
    empty = by_path["/sitemap-empty.xml"]
    assert empty["error"] == "sitemap refused: xml-malformed: empty document", empty
    feed = by_path["/feed-html.xml"]
    assert feed["handler"] == "feed" and feed["outlinks"] == 0
    assert feed["error"].startswith("feed refused: not-a-feed: an HTML page"), feed
    plain = by_path["/sitemap-plain.xml"]
    assert plain["handler"] == "sitemap" and plain["error"] is None and plain["outlinks"] == 1
    assert plain["content_type"].startswith("text/plain")


async def test_refused_documents_are_not_revisited_while_read_ones_are(tmp_path: Path) -> None:
    settings = crawl_settings(
        tmp_path / "c",
        delay=0.02,
        recrawl=True,
        revisit_min=0.3,
        revisit_max=0.6,
        max_duration=4.0,
    )
    async with SimWeb(FAULTS) as web:
        summary = await Node(settings, web.seeds()).run()
        paths = [r.path for r in web.log]
    assert summary.stopped_by == "max-duration"
    for doc in ("/sitemap-html.xml", "/sitemap-empty.xml", "/feed-html.xml"):
        assert paths.count(doc) == 1, doc
    # the sitemap that was read is revisited, and read as a sitemap again each time
    assert paths.count("/sitemap-plain.xml") >= 2
    assert "/lure/sitemap" not in paths and "/lure/feed" not in paths
    log = read_crawl_log(tmp_path / "c")
    plain = [e for e in log if e["url"].endswith("/sitemap-plain.xml")]
    assert len(plain) >= 2 and all(e["handler"] == "sitemap" for e in plain), plain


async def _crawl_large(tmp_path: Path, **extra: Any) -> tuple[list[str], dict[str, Any]]:
    async with SimWeb(LARGE) as web:
        node = Node(crawl_settings(tmp_path / "c", delay=0.02, max_pages=8, **extra), web.seeds())
        await node.run()
        paths = [r.path for r in web.log]
    name = "crawl.log.jsonl" if "store" not in extra else f"crawl-{node.parts.node_id}.log.jsonl"
    log = [e for e in _read(tmp_path / "c" / name) if e["url"].endswith("/sitemap-large.xml")]
    assert len(log) == 1, log
    return paths, log[0]


def _read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


async def test_a_sitemap_over_a_megabyte_is_read_whole_at_the_default_settings(
    tmp_path: Path,
) -> None:
    paths, entry = await _crawl_large(tmp_path)
    assert entry["bytes"] > 1024 * 1024 and entry["truncated"] is None, entry
    assert (entry["error"], entry["outlinks"]) == (None, LARGE_SITEMAP_URLS)
    assert paths.count("/sitemap-large.xml") == 1
    assert LAST_LISTED in paths
    # the page budget held: only a few of the listed URLs were fetched
    assert len([p for p in paths if p.startswith("/listed/")]) < 8


async def test_a_large_sitemap_is_read_whole_through_redis(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    paths, entry = await _crawl_large(tmp_path, store=redis_server.url, crawl_id="large-doc")
    assert (entry["error"], entry["outlinks"]) == (None, LARGE_SITEMAP_URLS)
    assert LAST_LISTED in paths


async def test_a_document_over_max_document_bytes_is_refused_as_cut(tmp_path: Path) -> None:
    paths, entry = await _crawl_large(tmp_path, max_document_bytes=256 * 1024)
    assert entry["truncated"] == "length" and entry["bytes"] == 256 * 1024, entry
    assert entry["error"].startswith("sitemap refused: truncated"), entry
    assert not [p for p in paths if p.startswith("/listed/")]


def _most_at_once(intervals: list[tuple[float, float]]) -> int:
    """The largest number of the (start, end) intervals that overlap at one moment."""
    events = sorted([(s, 1) for s, _ in intervals] + [(e, -1) for _, e in intervals])
    most = now = 0
    for _, step in events:
        now += step
        most = max(most, now)
    return most


async def test_a_node_fetches_at_most_two_documents_at_once(tmp_path: Path) -> None:
    # four hosts whose every answer takes 0.3 s, each naming four documents: without
    # the bound their documents would be asked for side by side
    spec = SimWebSpec(
        hosts=4,
        host_spec=HostSpec(
            pages=1, links_per_page=1, features=frozenset({"sitemap-faults"}), delay=0.3
        ),
        cross_links=0.0,
    )
    documents = {"/sitemap-html.xml", "/sitemap-empty.xml", "/sitemap-plain.xml", "/feed-html.xml"}
    async with SimWeb(spec) as web:
        summary = await Node(crawl_settings(tmp_path / "c", delay=0.02), web.seeds()).run()
        asked = [(r.start, r.end) for r in web.log if r.path in documents]
    assert summary.stopped_by == "finished"
    assert len(asked) == 16
    assert _most_at_once(asked) <= 2
