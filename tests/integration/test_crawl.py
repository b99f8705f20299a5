"""End-to-end crawls of the simulated web, asserted from the server's own request log."""

from __future__ import annotations

import itertools
import logging
from collections import Counter
from pathlib import Path

import pytest
from warcio.archiveiterator import ArchiveIterator

from headway.runtime.node import Node
from headway.testing.simweb import HostSpec, SimWeb, SimWebSpec
from headway.urls.scope import OptOut
from tests.integration.helpers import (
    TOKEN,
    crawl_settings,
    fetched_urls,
    page_requests,
    politeness_violations,
    read_crawl_log,
)

pytestmark = pytest.mark.slow

FEATURES = frozenset(
    {"private", "redirects", "duplicates", "tracking", "errors", "non-html", "redirect-loop"}
)


def polite_spec() -> SimWebSpec:
    return SimWebSpec(
        hosts=4,
        host_spec=HostSpec(pages=10, links_per_page=4, features=FEATURES),
        overrides={
            1: HostSpec(pages=6, links_per_page=3, crawl_delay=0.3),
            2: HostSpec(pages=6, links_per_page=3, features=frozenset({"trap"})),
            3: HostSpec(pages=6, links_per_page=3),
        },
        cross_links=0.3,
        seed=7,
    )


async def test_polite_crawl_fetches_every_page_once_and_obeys_rules(tmp_path: Path) -> None:
    delay = 0.1
    async with SimWeb(polite_spec()) as web:
        opted_out = web.hosts[3]
        settings = crawl_settings(tmp_path / "c", delay=delay, max_depth=6, retry_base=0.05)
        seeds = web.seeds()[:3]
        summary = await Node(settings, seeds, optout=OptOut([opted_out])).run()
        assert summary.stopped_by == "finished"

        in_scope = lambda url: opted_out not in url  # noqa: E731
        expected = web.expected_pages(TOKEN, seeds=seeds, in_scope=in_scope)
        fetched = fetched_urls(web, web.log)
        counts = Counter(fetched)
        assert expected, "the simulated web offers pages"
        missing = expected - set(counts)
        assert not missing, f"reachable pages not fetched: {sorted(missing)[:5]}"
        twice = {u: n for u, n in counts.items() if n > 1 and not u.endswith("/boom")}
        assert not twice, f"fetched more than once: {twice}"
        # a 500 is retried: first attempt plus the retry budget, never more
        assert {n for u, n in counts.items() if u.endswith("/boom")} == {1 + 3}
        # robots.txt obeyed, opt-out honoured, nofollow respected
        assert not [u for u in fetched if "/private/" in u]
        assert not [r for r in web.log if r.host == opted_out]
        assert not [u for u in fetched if "/nofollow-target" in u]
        # politeness from the server's clock: no overlap, gaps >= delay / Crawl-delay
        problems = politeness_violations(web.log, {web.hosts[1]: 0.3}, delay)
        assert not problems, problems[:5]
        # the trap is contained by depth: at most the months within max_depth of the entry
        trap = [r for r in page_requests(web.log) if r.path.startswith("/cal/")]
        assert 0 < len(trap) <= 2 * 6 + 1
        # every request carried our User-Agent
        assert {r.user_agent for r in web.log} == {settings.identity.user_agent}

    log = read_crawl_log(tmp_path / "c")
    by_url = {e["url"]: e for e in log}
    # the summary counts the URLs robots.txt kept from being fetched, apart from failures
    disallowed = [e for e in log if e["note"] == "robots-disallowed"]
    assert disallowed and summary.robots_disallowed == len(disallowed)
    assert any(e["note"] and e["note"].startswith("redirect -> ") for e in log)
    assert any(e["revisit"] for e in log), "duplicate content becomes revisit records"
    assert {e["status"] for e in log if "/gone" in e["url"]} == {410}
    for url in expected:
        assert by_url[url]["status"] == 200
    # no tracking-parameter variant was fetched separately
    assert not [u for u in fetched if "utm_" in u]


async def test_warc_records_are_valid_and_indexed(tmp_path: Path) -> None:
    spec = SimWebSpec(
        hosts=2,
        host_spec=HostSpec(
            pages=8, links_per_page=3, features=frozenset({"duplicates", "huge"}), gzip=True
        ),
    )
    async with SimWeb(spec) as web:
        settings = crawl_settings(tmp_path / "c", delay=0.0, max_body=64 * 1024)
        await Node(settings, web.seeds()).run()
    warc_files = sorted((tmp_path / "c" / "warc").glob("*.warc.gz"))
    assert warc_files
    types: Counter[str] = Counter()
    truncated = 0
    for path in warc_files:
        with path.open("rb") as fh:
            for rec in ArchiveIterator(fh, check_digests="raise"):
                types[rec.rec_type] += 1
                assert rec.rec_headers.get_header("WARC-Type")
                assert rec.rec_headers.protocol == "WARC/1.1"
                if rec.rec_headers.get_header("WARC-Truncated"):
                    truncated += 1
                rec.content_stream().read()
    assert types["warcinfo"] >= 1
    assert types["request"] == types["response"] + types["revisit"]
    assert types["revisit"] >= 2  # /dup/2 and /dup/3 repeat /dup/1 on each host
    assert truncated >= 1  # the 2 MB page is cut at max_body
    # every CDXJ line points at a record of the URL it names
    index = (tmp_path / "c" / "index.cdxj").read_text().splitlines()
    assert len(index) == types["response"] + types["revisit"]
    import json

    for line in index[:20]:
        _key, _ts, data = line.split(" ", 2)
        rec_info = json.loads(data)
        with (tmp_path / "c" / "warc" / rec_info["filename"]).open("rb") as fh:
            fh.seek(int(rec_info["offset"]))
            rec = next(iter(ArchiveIterator(fh)))
            assert rec.rec_headers.get_header("WARC-Target-URI") == rec_info["url"]


async def test_limits_stop_the_crawl_and_resume_continues(tmp_path: Path) -> None:
    spec = SimWebSpec(hosts=2, host_spec=HostSpec(pages=15, links_per_page=3))
    async with SimWeb(spec) as web:
        out = tmp_path / "c"
        first = await Node(crawl_settings(out, delay=0.0, max_pages=10), web.seeds()).run()
        assert first.stopped_by == "max-pages"
        assert first.fetches == 10
        assert first.frontier.queued > 0
        second = await Node(crawl_settings(out, delay=0.0), web.seeds()).run()
        assert second.stopped_by == "finished"
        assert second.resumed
        counts = Counter(fetched_urls(web, web.log))
        assert set(counts) >= web.expected_pages(TOKEN)
        assert max(counts.values()) == 1, "resume refetched nothing already done"


async def test_robots_429_means_unavailable_and_the_host_is_crawled(tmp_path: Path) -> None:
    """RFC 9309 2.3.1.3: a 4xx robots.txt, 429 included, is "unavailable": everything
    is allowed. The simulated web's oracle and the crawler must agree end to end."""
    spec = SimWebSpec(
        hosts=2,
        host_spec=HostSpec(pages=4, links_per_page=2),
        overrides={1: HostSpec(pages=4, links_per_page=2, robots_status=429)},
        cross_links=0.0,
    )
    async with SimWeb(spec) as web:
        settings = crawl_settings(tmp_path / "c", delay=0.0, max_duration=15)
        summary = await Node(settings, web.seeds()).run()
        assert summary.stopped_by == "finished"
        expected = web.expected_pages(TOKEN)
        on_429_host = {u for u in expected if web.hosts[1] in u}
        assert len(on_429_host) >= 2, "the oracle counts the host's pages as allowed"
        fetched = Counter(fetched_urls(web, web.log))
        assert set(fetched) == expected
        assert max(fetched.values()) == 1
        robots = [r for r in web.log if r.host == web.hosts[1] and r.path == "/robots.txt"]
        assert [r.status for r in robots] == [429]


def _robots_503_spec() -> SimWebSpec:
    """Two hosts; the second one's robots.txt answers 503."""
    return SimWebSpec(
        hosts=2,
        host_spec=HostSpec(pages=4, links_per_page=2),
        overrides={1: HostSpec(pages=4, links_per_page=2, robots_status=503)},
        cross_links=0.0,
    )


async def test_robots_unavailable_means_wait_not_fetch(tmp_path: Path) -> None:
    spec = _robots_503_spec()
    async with SimWeb(spec) as web:
        summary = await Node(
            crawl_settings(tmp_path / "c", delay=0.0, max_duration=3.0), web.seeds()
        ).run()
        blocked = [r for r in web.log if r.host == web.hosts[1]]
        assert blocked and all(r.path == "/robots.txt" for r in blocked)
        assert summary.stopped_by == "max-duration"
        assert summary.frontier.queued >= 1  # the host's seed waits, it is not dropped


async def test_robots_unreachable_for_good_gives_up_on_the_host(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    spec = _robots_503_spec()
    caplog.set_level(logging.WARNING, logger="headway.runtime.fetchjobs")
    async with SimWeb(spec) as web:
        summary = await Node(
            crawl_settings(
                tmp_path / "c", delay=0.0, robots_retry_base=0.2, robots_give_up=3, max_duration=30
            ),
            web.seeds(),
        ).run()
        assert summary.stopped_by == "finished"
        robots = [r for r in web.log if r.host == web.hosts[1]]
        assert [r.path for r in robots] == ["/robots.txt"] * 3
        gaps = [b.start - a.start for a, b in itertools.pairwise(robots)]
        assert gaps[0] >= 0.2 - 0.03 and gaps[1] >= 0.4 - 0.03  # backoff doubles
        assert summary.frontier.failed >= 1 and summary.frontier.queued == 0
    notes = [e["note"] for e in read_crawl_log(tmp_path / "c") if web.hosts[1] in e["url"]]
    assert "robots-unreachable" in notes
    assert notes.count("robots.txt unreachable: disallow-all until its retry") == 3
    # the user is told, once when the host first fails and once when it is given up
    warned = [r.getMessage() for r in caplog.records if "robots.txt of" in r.getMessage()]
    assert len(warned) == 2 and all(web.hosts[1] in w and "HTTP 503" in w for w in warned)
    assert "its URLs wait" in warned[0] and "its URLs fail" in warned[1]
