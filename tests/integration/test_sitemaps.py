"""Sitemaps named by robots.txt and feeds announced by pages, crawled end to end and
asserted from the simulated web's own request log."""

from __future__ import annotations

from pathlib import Path

import pytest

from headway.runtime.node import Node
from headway.testing.simweb import HostSpec, SimWeb, SimWebSpec
from tests.integration.helpers import TOKEN, crawl_settings, read_crawl_log

pytestmark = pytest.mark.slow


async def test_sitemap_and_feed_pages_are_fetched_and_bombs_refused(tmp_path: Path) -> None:
    spec = SimWebSpec(
        hosts=2,
        host_spec=HostSpec(pages=6, links_per_page=3, features=frozenset({"sitemaps"})),
        overrides={1: HostSpec(pages=4, links_per_page=2)},
        cross_links=0.0,
    )
    async with SimWeb(spec) as web:
        settings = crawl_settings(tmp_path / "c", delay=0.02)
        summary = await Node(settings, web.seeds()).run()
        assert summary.stopped_by == "finished"
        paths = [(r.host, r.path) for r in web.log]
        expected = web.expected_pages(TOKEN)
    host = web.hosts[0]
    # reachable only through the sitemap (robots.txt -> index -> gzipped urlset) and only
    # through the feed the home page announces
    assert (host, "/hidden/sitemap") in paths
    assert (host, "/hidden/feed") in paths
    assert web.url(host, "/hidden/sitemap") in expected
    # robots.txt first, then the sitemap it names, each once
    assert paths.index((host, "/robots.txt")) < paths.index((host, "/sitemap.xml"))
    for doc in ("/sitemap.xml", "/sitemap-pages.xml.gz", "/feed.xml", "/sitemap-bomb.xml"):
        assert paths.count((host, doc)) == 1, doc
    # the same admission as links: robots.txt and scope still hold
    assert (host, "/private/2") not in paths
    log = read_crawl_log(tmp_path / "c")
    assert not [e for e in log if "outside.example" in e["url"]]
    by_path = {e["url"].removeprefix(web.url(host, "")): e for e in log if host in e["url"]}
    assert by_path["/sitemap.xml"]["handler"] == "sitemap"
    assert by_path["/feed.xml"]["handler"] == "feed"
    assert by_path["/sitemap-bomb.xml"]["error"].startswith("sitemap refused: xml-entities")
    big = by_path["/sitemap-big.xml.gz"]
    assert big["error"].startswith("sitemap refused: too-large"), big
    # the plain host has no sitemap: nothing asked beyond its robots.txt and pages
    assert not [p for h, p in paths if h == web.hosts[1] and "sitemap" in p]


async def test_sitemap_guess_reads_sitemap_xml_when_asked(tmp_path: Path) -> None:
    spec = SimWebSpec(hosts=1, host_spec=HostSpec(pages=3, links_per_page=2))
    async with SimWeb(spec) as web:
        await Node(crawl_settings(tmp_path / "a", delay=0.02), web.seeds()).run()
        without = [r.path for r in web.log]
        web.log.clear()
        await Node(
            crawl_settings(tmp_path / "b", delay=0.02, sitemap_guess=True), web.seeds()
        ).run()
        with_guess = [r.path for r in web.log]
    assert "/sitemap.xml" not in without
    assert with_guess.count("/sitemap.xml") == 1
