"""Recrawl of the simulated web with short intervals, asserted from the server's own log:
conditional GET, 304 revisit records, adaptive intervals, durable due times and
politeness across new and revisit fetches."""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from warcio.archiveiterator import ArchiveIterator

from headway.frontier.sqlite import SqliteFrontier
from headway.frontier.store import UrlState
from headway.policy.revisit import decode
from headway.runtime.node import Node
from headway.store.warc import NOT_MODIFIED_PROFILE
from headway.testing.freshness import changes
from headway.testing.simweb import HostSpec, LoggedRequest, SimWeb, SimWebSpec
from tests.integration.helpers import (
    Sends,
    crawl_settings,
    frontier_rows,
    page_requests,
    politeness_violations,
    record_sends,
)
from tests.support.redisproc import RedisServer

pytestmark = pytest.mark.slow

#: every even /p/i changes to a new content version each PERIOD seconds; the rest never
PERIOD = 0.4
SPEC = SimWebSpec(
    hosts=2,
    host_spec=HostSpec(
        pages=6, links_per_page=2, validators=True, change_every=2, change_period=PERIOD
    ),
    cross_links=0.0,
    seed=3,
)
DELAY = 0.05
RUN_SECONDS = 9.0


def recrawl_settings(out: Path, **extra: Any) -> Any:
    return crawl_settings(
        out,
        delay=DELAY,
        recrawl=True,
        revisit_min=PERIOD,
        revisit_max=3.2,
        max_duration=RUN_SECONDS,
        **extra,
    )


def _by_url(web: SimWeb, log: list[LoggedRequest]) -> dict[str, list[LoggedRequest]]:
    out: dict[str, list[LoggedRequest]] = defaultdict(list)
    for r in page_requests(log):
        out[web.url(r.host, r.path)].append(r)
    return out


def _warc_records(out: Path) -> list[Any]:
    recs = []
    for path in sorted((out / "warc").glob("*.warc.gz")):
        with open(path, "rb") as f:
            for rec in ArchiveIterator(f, check_digests="raise"):
                rec.content_stream().read()
                recs.append(rec)
    return recs


def _check_run(web: SimWeb, out: Path, sends: Sends, log_name: str = "crawl.log.jsonl") -> None:
    by_url = _by_url(web, web.log)
    pages = [u for u in by_url if "/p/" in u or u.endswith("/")]
    changing = {u for u in pages if changes(SPEC.host_spec, "/" + u.split("/", 3)[3])}
    stable = set(pages) - changing
    assert changing and stable
    revisited = {u for u in pages if len(by_url[u]) >= 3}
    assert changing <= revisited, "every changing page is revisited at least twice"
    assert stable & revisited, "stable pages are revisited too"
    for url in pages:
        reqs = by_url[url]
        first, rest = reqs[0], reqs[1:]
        assert (first.status, first.if_none_match, first.if_modified_since) == (200, None, None)
        # every revisit is conditional: it sends the validators the server gave before
        for r in rest:
            assert r.if_none_match and r.if_modified_since, (url, r)
        if url in changing:
            assert [r.status for r in rest] == [200] * len(rest), url
        else:
            assert [r.status for r in rest] == [304] * len(rest), url
    problems = politeness_violations(web.log, {}, DELAY, sends)
    assert not problems, problems[:5]

    # intervals: changing pages come back sooner, stable ones later (from the crawl log)
    lines = [json.loads(x) for x in (out / log_name).read_text().splitlines()]
    intervals: dict[str, list[float]] = defaultdict(list)
    for e in lines:
        if e["revisit_in"] is not None:
            intervals[e["url"]].append(e["revisit_in"])
    for url in revisited:
        seq = intervals[url]
        assert len(seq) >= 3, (url, seq)
        pairs = list(itertools.pairwise(seq))
        if url in changing:
            assert all(b <= a for a, b in pairs) and seq[-1] < seq[0], (url, seq)
            assert seq[-1] == pytest.approx(PERIOD)
        else:
            assert all(b >= a for a, b in pairs) and seq[-1] > seq[0], (url, seq)
    kinds = {(e["url"], e["outcome"], e["change"]) for e in lines if e["change"]}
    assert any(o == "not_modified" and c == "unchanged" for _, o, c in kinds)
    assert any(o == "ok" and c == "changed" for _, o, c in kinds)
    assert not any(u in changing and c == "unchanged" for u, _, c in kinds)

    # WARC: each 304 is a server-not-modified revisit pointing at the URL's response record
    recs = _warc_records(out)
    responses = {
        r.rec_headers.get_header("WARC-Record-ID"): r for r in recs if r.rec_type == "response"
    }
    not_modified = [
        r
        for r in recs
        if r.rec_type == "revisit"
        and r.rec_headers.get_header("WARC-Profile") == NOT_MODIFIED_PROFILE
    ]
    assert len(not_modified) == sum(1 for reqs in by_url.values() for r in reqs if r.status == 304)
    for rv in not_modified:
        h = rv.rec_headers
        target = h.get_header("WARC-Target-URI")
        assert target in stable
        assert rv.http_headers.get_statuscode() == "304"
        first = responses[h.get_header("WARC-Refers-To")]
        fh = first.rec_headers
        assert fh.get_header("WARC-Target-URI") == h.get_header("WARC-Refers-To-Target-URI")
        assert fh.get_header("WARC-Target-URI") == target
        assert fh.get_header("WARC-Date") == h.get_header("WARC-Refers-To-Date")
        assert fh.get_header("WARC-Payload-Digest") == h.get_header("WARC-Payload-Digest")
    digests: dict[str, set[str]] = defaultdict(set)
    for r in responses.values():
        digests[r.rec_headers.get_header("WARC-Target-URI")].add(
            r.rec_headers.get_header("WARC-Payload-Digest")
        )
    for url in changing & revisited:
        assert len(digests[url]) >= 3, "each changed version is a response of its own"


async def test_recrawl_asks_with_validators_and_adapts_intervals(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "c"
    sends = record_sends(monkeypatch)
    async with SimWeb(SPEC) as web:
        summary = await Node(recrawl_settings(out), web.seeds()).run()
    # nothing was left unfetched for long, yet the crawl ran until its limit
    assert summary.stopped_by == "max-duration"
    assert summary.recrawl is not None
    rc = summary.recrawl
    assert rc.revisits > 0 and rc.changed > 0 and rc.not_modified > 0
    assert rc.unchanged >= rc.not_modified
    assert summary.frontier.done == 0 and summary.frontier.queued >= 14
    _check_run(web, out, sends)

    # the frontier keeps every fetched page with its due time, validators and interval
    store = SqliteFrontier(out / "frontier.sqlite3", node_id="check")
    try:
        assert store.next_ready_time() is not None
        hosts = store.ready_hosts(now=1e12, limit=10)
        assert len(hosts) == 2
        leased = store.lease_many([(h, 100) for h, _ in hosts], now=1e12, lease_seconds=1)
        states = {u.url: decode(u.validators) for u in leased}
        assert len(states) == store.counts().leased >= 14
        for url, state in states.items():
            assert state is not None and state.etag and state.last_modified, url
            assert 0.4 <= state.interval <= 3.2
    finally:
        store.close()


async def test_recrawl_on_redis(
    redis_server: RedisServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "c"
    sends = record_sends(monkeypatch)
    settings = recrawl_settings(out, store=redis_server.url, crawl_id="recrawl-redis")
    async with SimWeb(SPEC) as web:
        node = Node(settings, web.seeds())
        summary = await node.run()
    assert summary.stopped_by == "max-duration"
    _check_run(web, out, sends, f"crawl-{node.parts.node_id}.log.jsonl")


async def test_without_recrawl_the_crawl_ends_and_nothing_is_revisited(tmp_path: Path) -> None:
    out = tmp_path / "c"
    async with SimWeb(SPEC) as web:
        summary = await Node(crawl_settings(out, delay=DELAY, max_duration=20), web.seeds()).run()
    assert summary.stopped_by == "finished"
    assert summary.recrawl is None
    by_url = _by_url(web, web.log)
    assert all(len(reqs) == 1 for reqs in by_url.values())
    assert not [r for r in web.log if r.if_none_match or r.if_modified_since]


async def test_a_lone_page_is_revisited_after_its_interval(tmp_path: Path) -> None:
    # one page, nothing else ever queued: the node must wake up for the revisit by itself
    spec = SimWebSpec(hosts=1, host_spec=HostSpec(pages=0, robots=None, validators=True))
    settings = crawl_settings(
        tmp_path / "c",
        delay=DELAY,
        recrawl=True,
        revisit_min=0.3,
        revisit_max=0.3,
        max_duration=3.0,
    )
    async with SimWeb(spec) as web:
        summary = await Node(settings, web.seeds()[:1]).run()
    assert summary.stopped_by == "max-duration"
    home = [r for r in page_requests(web.log) if r.path == "/"]
    assert len(home) >= 4, [(round(r.start, 3), r.status) for r in home]
    assert [r.status for r in home] == [200] + [304] * (len(home) - 1)
    # never early: each revisit waits for the interval after the previous fetch
    assert all(b.start - a.start >= 0.3 - 0.03 for a, b in itertools.pairwise(home))


@pytest.mark.parametrize(
    ("share", "low", "high"), [(0.0, 0.0, 0.0), (0.5, 0.3, 0.7), (1.0, 0.8, 1.0)]
)
async def test_recrawl_share_divides_fetches_between_revisits_and_new_urls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, share: float, low: float, high: float
) -> None:
    sends = record_sends(monkeypatch)
    # every page is a seed, so new URLs are ready from the start; a fetched page is due
    # again almost at once: while new URLs remain, the share decides who goes next. The
    # gap leaves time for a page to be parsed and settled (its revisit queued) before
    # the host's next turn, as any real gap does; at 0.05 s a loaded machine settled
    # too late for some turns, which then found no revisit to prefer
    spec = SimWebSpec(hosts=1, host_spec=HostSpec(pages=12, links_per_page=1, validators=True))
    settings = crawl_settings(
        tmp_path / "c",
        delay=0.15,
        recrawl=True,
        revisit_min=0.001,
        revisit_max=0.001,
        recrawl_share=share,
        max_pages=30,
        max_duration=20,
    )
    async with SimWeb(spec) as web:
        seeds = [web.url(web.hosts[0], "/")] + [web.url(web.hosts[0], f"/p/{i}") for i in range(12)]
        summary = await Node(settings, seeds).run()
    assert summary.stopped_by == "max-pages"
    reqs = page_requests(web.log)
    seen: set[str] = set()
    while_new = []  # was each request made while new URLs were still waiting a revisit?
    for r in reqs:
        if len(seen) == len(seeds):
            break
        while_new.append(r.if_none_match is not None)
        seen.add(r.path)
    if share < 1:
        assert len(seen) == len(seeds), [(r.path, r.status) for r in reqs]
    else:  # revisits always first: a page due again at once keeps the host to itself
        assert len(seen) < len(seeds)
    revisit_share = sum(while_new) / len(while_new)
    assert low <= revisit_share <= high, (share, revisit_share, while_new)
    problems = politeness_violations(web.log, {}, 0.05, sends)
    assert not problems, problems[:5]


async def test_sitemap_and_feed_hints_set_the_first_interval(tmp_path: Path) -> None:
    # /hidden/sitemap is listed with <changefreq>daily</changefreq>, /hidden/feed in a
    # feed dated 2024-05-01; other pages come without a hint
    spec = SimWebSpec(
        hosts=1,
        host_spec=HostSpec(pages=2, links_per_page=1, features=frozenset({"sitemaps"})),
    )
    out = tmp_path / "c"
    settings = crawl_settings(
        out, delay=DELAY, recrawl=True, revisit_min=1, revisit_max=1e6, max_duration=4
    )
    async with SimWeb(spec) as web:
        await Node(settings, web.seeds()).run()
        fetched = {r.path for r in page_requests(web.log)}
    assert {"/hidden/sitemap", "/hidden/feed", "/p/0"} <= fetched
    first = {}
    for line in (out / "crawl.log.jsonl").read_text().splitlines():
        e = json.loads(line)
        if e["change"] == "first":
            first[e["url"].split("/", 3)[3]] = e["revisit_in"]
    assert first["hidden/sitemap"] == 86_400.0  # daily
    assert first["hidden/feed"] == 1e6  # changed years ago: the longest interval
    assert first["p/0"] == 1000.0  # no hint: sqrt(min * max)


@pytest.mark.parametrize("store", ["sqlite", "redis"])
async def test_a_run_without_recrawl_leaves_the_revisits_waiting_for_a_later_recrawl(
    tmp_path: Path, request: pytest.FixtureRequest, caplog: pytest.LogCaptureFixture, store: str
) -> None:
    spec = SimWebSpec(
        hosts=2,
        host_spec=HostSpec(pages=3, links_per_page=2, validators=True),
        cross_links=0.0,
        seed=4,
    )
    out = tmp_path / "c"
    extra: dict[str, Any] = {}
    if store == "redis":
        server: RedisServer = request.getfixturevalue("redis_server")
        extra = {"store": server.url, "crawl_id": f"park-{tmp_path.name}"}
    recrawl = {"recrawl": True, "revisit_min": 0.5, "revisit_max": 1.0}
    async with SimWeb(spec) as web:
        new = web.hosts[1]
        seeds = web.seeds()
        # a shared crawl keeps the seeds it was created with: there both hosts are
        # crawled from the start, and the second run has no new URL to fetch
        first_seeds = seeds[:1] if store == "sqlite" else seeds
        new_hosts = {new} if store == "sqlite" else set()
        # 1: a recrawl of the first host only
        first = await Node(
            crawl_settings(out, delay=DELAY, max_duration=2, **recrawl, **extra), first_seeds
        ).run()
        assert first.recrawl is not None and first.recrawl.revisits > 0
        waiting = first.frontier.queued
        assert waiting >= 4 and first.frontier.done == 0
        before = frontier_rows(out) if store == "sqlite" else {}
        await asyncio.sleep(1.2)  # every page of the first host is now due

        # 2: without --recrawl, with a new seed: the new host is crawled, the due
        # revisits are not fetched, and the crawl ends by itself
        mark = len(web.log)
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="headway"):
            second = await Node(
                crawl_settings(out, delay=DELAY, max_duration=30, **extra), seeds
            ).run()
        assert second.stopped_by == "finished"
        run2 = page_requests(web.log[mark:])
        assert {r.host for r in run2} == new_hosts, [(r.host, r.path) for r in run2]
        assert not [r for r in run2 if r.if_none_match or r.if_modified_since]
        assert second.frontier.revisits_parked == waiting
        assert second.frontier.queued == 0
        notes = [
            r.getMessage() for r in caplog.records if "wait for their revisit" in r.getMessage()
        ]
        assert notes == [
            f"{waiting} pages wait for their revisit (an earlier --recrawl run); they are left "
            "waiting: run with --recrawl to continue them"
        ]
        if store == "sqlite":
            after = frontier_rows(out)
            for url, (state, due, validators, fetches) in before.items():
                if state != UrlState.QUEUED:
                    continue
                # parked with the due time and validators the first run stored
                assert after[url] == (UrlState.PARKED, due, validators, fetches), url

        # 3: --recrawl again: every waiting page is revisited with its validators
        mark = len(web.log)
        third = await Node(
            crawl_settings(out, delay=DELAY, max_duration=2.5, **recrawl, **extra), seeds
        ).run()
        assert third.frontier.revisits_parked == 0
        run3 = page_requests(web.log[mark:])
    revisited = {(r.host, r.path) for r in run3 if r.if_none_match and r.status == 304}
    recrawled = {(r.host, r.path) for r in page_requests(web.log) if r.host not in new_hosts}
    assert revisited == recrawled
    if store == "sqlite":
        for url, (state, due, _, _) in before.items():
            if state == UrlState.QUEUED:
                r = next(r for r in run3 if web.url(r.host, r.path) == url)
                assert r.wall >= due - 0.05, (url, r.wall, due)


@pytest.mark.parametrize("recrawl", [False, True], ids=["crawl", "recrawl"])
async def test_max_pages_counts_the_fetches_of_earlier_runs(tmp_path: Path, recrawl: bool) -> None:
    spec = SimWebSpec(
        hosts=1, host_spec=HostSpec(pages=20, links_per_page=3, validators=True), seed=2
    )
    out = tmp_path / "c"
    options: dict[str, Any] = {"delay": 0.02, "max_duration": 30}
    if recrawl:  # three pages, revisited again and again
        spec = SimWebSpec(hosts=1, host_spec=HostSpec(pages=2, links_per_page=2, validators=True))
        options |= {"recrawl": True, "revisit_min": 0.05, "revisit_max": 0.05}
    async with SimWeb(spec) as web:
        first = await Node(crawl_settings(out, max_pages=8, **options), web.seeds()).run()
        assert first.stopped_by == "max-pages"
        assert len(page_requests(web.log)) == 8
        # the same command again: the budget is spent, nothing more is fetched
        mark = len(web.log)
        again = await Node(crawl_settings(out, max_pages=8, **options), web.seeds()).run()
        assert again.stopped_by == "max-pages"
        assert page_requests(web.log[mark:]) == []
        # a larger budget fetches only the difference
        mark = len(web.log)
        more = await Node(crawl_settings(out, max_pages=11, **options), web.seeds()).run()
        assert more.stopped_by == "max-pages"
        assert len(page_requests(web.log[mark:])) == 3
    if recrawl:
        assert any(r.if_none_match for r in page_requests(web.log))
