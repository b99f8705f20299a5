"""A 304 answer to a revisit is never parsed, whatever its Content-Type: it goes to the
store stage (a revisit record), never to a content handler."""

from __future__ import annotations

import pytest

from headway.fetch.result import FetchResult, Headers
from headway.frontier.store import LeasedUrl
from headway.parse.handlers import load_handlers
from headway.policy.outcome import Outcome
from headway.runtime.fetchjobs import PageFetch
from headway.runtime.metrics import Counters
from headway.runtime.recrawl import NoRecrawl
from headway.runtime.scheduler import PageJob
from headway.runtime.stage import Stage
from headway.settings import build_settings
from headway.work.items import FetchedPage, Work

UA = "testbot/1.0 (+https://example.org/bot)"
#: A body a careless server sends with its 304, full of links a parser would follow.
BODY = b'<?xml version="1.0"?><html><body><a href="/x">x</a><loc>http://a.test/y</loc></body>'


class _Limiter:
    crawl_delay = None

    def gap(self) -> float:
        return 1.0

    def mark_sent(self, at: float) -> None:
        pass


class _Robots:
    def put(self, host: str, rules: object) -> None:
        pass


class _Scheduler:
    """What a page fetch tells the scheduler (recorded, nothing decided here)."""

    def __init__(self) -> None:
        self.robots = _Robots()
        self.outcomes: list[Outcome] = []

    def limiter(self, host: str) -> _Limiter:
        return _Limiter()

    def may_send(self, lease: object, now: float) -> bool:
        return True  # the lease is fresh: this test is about what follows the send

    def on_fetch_done(self, host: str, now: float, outcome: Outcome, **_: object) -> None:
        self.outcomes.append(outcome)


class _Fetcher:
    """Answers every request with one fixed result."""

    def __init__(self, result: FetchResult) -> None:
        self.result = result

    async def fetch(self, url: str, extra_headers: Headers = ()) -> FetchResult:
        return self.result

    async def fetch_document(self, url: str, extra_headers: Headers = ()) -> FetchResult:
        return self.result


CONTENT_TYPES = [
    "text/html; charset=utf-8",
    "application/xhtml+xml",
    "application/xml",
    "text/xml",
    "application/rss+xml",
    "application/atom+xml",
    None,
]


@pytest.mark.parametrize("content_type", CONTENT_TYPES)
@pytest.mark.parametrize("admitted_as", [None, "sitemap", "feed"])
async def test_a_304_goes_to_the_store_unparsed(
    content_type: str | None, admitted_as: str | None
) -> None:
    headers: Headers = () if content_type is None else (("Content-Type", content_type),)
    result = FetchResult(
        url="http://a.test/page",
        started_at=0.0,
        duration=0.01,
        outcome=Outcome.NOT_MODIFIED,
        status=304,
        response_headers=headers,
        raw_body=BODY,
        body=BODY,
        sent_at=0.0,
    )
    lease = LeasedUrl(
        id=1,
        url=result.url,
        host="a.test",
        depth=1,
        priority=0,
        fp=7,
        via=None,
        attempts=0,
        lease_expires=60.0,
        validators=None,
        fetches=1,
        handler=admitted_as,
    )
    parse_stage: Stage[FetchedPage] = Stage("parse-queue", 10)
    store_stage: Stage[Work] = Stage("store", 10)
    scheduler = _Scheduler()
    fetch = PageFetch(
        _Fetcher(result),  # type: ignore[arg-type]
        scheduler,  # type: ignore[arg-type]
        build_settings({"user_agent": UA}),
        Counters(),
        clock=lambda: 0.0,
        handlers=load_handlers(),
        parse_stage=parse_stage,
        store_stage=store_stage,
        on_quota=lambda url: None,
        recrawl=NoRecrawl(),
    )
    await fetch.run(PageJob(lease, retry=False))
    assert scheduler.outcomes == [Outcome.NOT_MODIFIED]
    assert len(parse_stage) == 0
    (page,) = await store_stage.get_batch(10)
    assert isinstance(page, FetchedPage)
    assert page.handler is None and page.parsed is None
    assert page.result.status == 304
