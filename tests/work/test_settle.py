"""The settle decision for one URL, table-driven."""

from __future__ import annotations

import dataclasses

import pytest

from headway.fetch.result import FetchResult
from headway.frontier.store import LeasedUrl, Settle
from headway.parse.page import ParsedPage
from headway.policy.outcome import Outcome, outcome_for_status
from headway.policy.retry import RetryParams
from headway.policy.revisit import Change, RevisitState, decode
from headway.urls.canonical import DEFAULT_OPTIONS
from headway.urls.scope import Scope
from headway.work.admission import Admission
from headway.work.items import FetchedPage, Revisit, RobotsAnswer, SkippedUrl
from headway.work.settle import SettleRules, decide

URL = "https://example.org/a"


def _rules() -> SettleRules:
    admission = Admission(Scope.for_seeds(["https://example.org/"]), current_year=2026)
    return SettleRules(admission, DEFAULT_OPTIONS, RetryParams(budget=2, base=1.0, cap=60.0), 509)


def _work(
    status: int | None,
    attempts: int = 0,
    *,
    outcome: Outcome | None = None,
    headers: tuple[tuple[str, str], ...] = (),
    links: tuple[str, ...] = (),
) -> FetchedPage:
    lease = LeasedUrl(7, URL, "example.org", 1, 1, 123, None, attempts, 100.0)
    if outcome is None:
        assert status is not None
        outcome = outcome_for_status(status, any(k == "Location" for k, _ in headers))
    res = FetchResult(
        url=URL,
        started_at=0.0,
        duration=0.1,
        outcome=outcome,
        status=status,
        response_headers=headers,
    )
    parsed = (
        ParsedPage(links, 0, False, False, None, None, "utf-8", None, len(links)) if links else None
    )
    return FetchedPage(lease, res, parsed=parsed)


@pytest.mark.parametrize(
    ("status", "outcome", "attempts", "settle", "note"),
    [
        (200, None, 0, Settle.DONE, None),
        (404, None, 0, Settle.DONE, None),
        (410, None, 0, Settle.DONE, None),
        (500, None, 0, Settle.RETRY, "retry in"),
        (503, None, 1, Settle.RETRY, "retry in"),
        (429, None, 2, Settle.FAILED, "retries exhausted"),
        (None, Outcome.TIMEOUT, 0, Settle.RETRY, "retry in"),
        (None, Outcome.BLOCKED_ADDRESS, 0, Settle.FAILED, None),
        (None, Outcome.TLS_ERROR, 0, Settle.FAILED, None),
        (403, None, 0, Settle.DONE, None),
    ],
)
def test_settle_table(
    status: int | None, outcome: Outcome | None, attempts: int, settle: Settle, note: str | None
) -> None:
    work = _work(status, attempts, outcome=outcome)
    got = decide(work, 1000.0, _rules(), quota_paused=False, rand=0.5)
    assert got.completion is not None and got.completion.settle is settle
    if settle is Settle.RETRY:
        # full jitter of min(cap, base * 2**(attempt-1)), at least 0
        assert 1000.0 <= got.completion.not_before <= 1000.0 + 2**attempts
    assert (got.note or "").startswith(note or "")
    assert work.note is None  # the work item itself is left as it was


def test_retry_after_is_a_floor_for_the_retry_delay() -> None:
    work = dataclasses.replace(_work(429), retry_after=30.0)
    got = decide(work, 1000.0, _rules(), quota_paused=False, rand=0.1)
    assert got.completion is not None and got.completion.not_before >= 1030.0


def test_links_and_redirect_targets_go_through_admission() -> None:
    work = _work(200, links=("https://example.org/b", "https://other.net/"))
    rules = _rules()
    got = decide(work, 1000.0, rules, quota_paused=False, rand=0.5)
    assert [e.url for e in got.discovered] == ["https://example.org/b"]
    assert all(e.depth == 2 for e in got.discovered)
    assert rules.admission.rejected["out-of-scope"] == 1
    red = _work(301, headers=(("Location", "/c#frag"),))
    moved = decide(red, 1000.0, rules, quota_paused=False, rand=0.5)
    assert moved.completion is not None and moved.completion.settle is Settle.DONE
    assert [e.url for e in moved.discovered] == ["https://example.org/c"]
    assert moved.note == "redirect -> https://example.org/c"


def test_skips_and_quota_answers_are_requeued_untried() -> None:
    rules = _rules()
    lease = _work(200).lease
    skipped = SkippedUrl(lease, "robots.txt unavailable", requeue_at=5000.0)
    got = decide(skipped, 1000.0, rules, quota_paused=False, rand=0.5)
    assert got.completion is not None
    assert (got.completion.settle, got.completion.not_before) == (Settle.REQUEUE, 5000.0)
    assert (got.discovered, got.note) == ((), "robots.txt unavailable")
    dropped = decide(SkippedUrl(lease, "disallowed"), 1000.0, rules, quota_paused=False, rand=0.5)
    assert dropped.completion is not None and dropped.completion.settle is Settle.FAILED
    quota = _work(509)
    paused = decide(quota, 1000.0, rules, quota_paused=True, rand=0.5)
    assert paused.completion is not None and paused.completion.settle is Settle.REQUEUE
    assert paused.note == "quota-exhausted"


def test_sitemap_lastmod_reaches_the_priority_of_its_links() -> None:
    from headway.parse.page import LinkHint
    from headway.policy.quality import QualityBook

    admission = Admission(
        Scope.for_seeds(["https://example.org/"]), current_year=2026, quality=QualityBook()
    )
    rules = dataclasses.replace(_rules(), admission=admission)
    links = ("https://example.org/fresh", "https://example.org/stale")
    work = _work(200, links=links)
    assert work.parsed is not None
    hints = (LinkHint(links[0], 1000.0 - 60.0), LinkHint(links[1], 1000.0 - 200 * 86400.0))
    work = dataclasses.replace(
        work, parsed=dataclasses.replace(work.parsed, kind="sitemap", hints=hints)
    )
    got = decide(work, 1000.0, rules, quota_paused=False, rand=0.5)
    fresh, stale = sorted(got.discovered, key=lambda e: e.url)
    assert fresh.priority < stale.priority


def test_a_robots_answer_settles_nothing_and_admits_its_sitemaps() -> None:
    rules = _rules()
    res = _work(200).result
    sitemap = rules.admission.admit(["https://example.org/sitemap.xml"], 1, None)
    answer = RobotsAnswer("https://example.org/robots.txt", res, "robots.txt full", tuple(sitemap))
    got = decide(answer, 1000.0, rules, quota_paused=False, rand=0.5)
    assert got.completion is None
    assert [e.url for e in got.discovered] == ["https://example.org/sitemap.xml"]
    assert got.note == "robots.txt full"


def test_documents_are_admitted_with_the_handler_that_must_read_them() -> None:
    rules = _rules()
    base = _work(200, links=("https://example.org/page",))
    assert base.parsed is not None
    index = dataclasses.replace(
        base.parsed,
        kind="sitemap",
        documents=("https://example.org/child.xml",),
        documents_handler="sitemap",
    )
    work = dataclasses.replace(base, parsed=index)
    got = decide(work, 1000.0, rules, quota_paused=False, rand=0.5)
    kinds = {e.url: e.handler for e in got.discovered}
    assert kinds == {"https://example.org/page": None, "https://example.org/child.xml": "sitemap"}
    feeds = dataclasses.replace(
        base.parsed, documents=("https://example.org/feed.xml",), documents_handler="feed"
    )
    work = dataclasses.replace(base, parsed=feeds)
    got = decide(work, 1000.0, rules, quota_paused=False, rand=0.5)
    assert {e.url: e.handler for e in got.discovered}["https://example.org/feed.xml"] == "feed"


def test_the_redirect_target_of_a_document_is_the_same_kind_of_document() -> None:
    rules = _rules()
    red = _work(301, headers=(("Location", "/moved.xml"),))
    doc = dataclasses.replace(red, lease=dataclasses.replace(red.lease, handler="sitemap"))
    moved = decide(doc, 1000.0, rules, quota_paused=False, rand=0.5)
    assert [(e.url, e.handler) for e in moved.discovered] == [
        ("https://example.org/moved.xml", "sitemap")
    ]
    page = decide(
        _work(301, headers=(("Location", "/p2"),)), 1000.0, rules, quota_paused=False, rand=0.5
    )
    assert [e.handler for e in page.discovered] == [None]


def test_only_a_done_page_is_settled_with_its_revisit() -> None:
    plan = Revisit(Change.FIRST, RevisitState(interval=4.0, etag='"e"'), 1004.0)
    done = decide(_work(200), 1000.0, _rules(), quota_paused=False, rand=0.5, revisit=plan)
    assert done.completion is not None and done.completion.settle is Settle.DONE
    assert done.completion.revisit_at == 1004.0 and done.revisit == plan
    assert decode(done.completion.validators) == plan.state
    unparsed = dataclasses.replace(_work(200), requeue_at=1001.0)  # a stop left it
    for work, paused in ((_work(503), False), (_work(509), True), (unparsed, False)):
        got = decide(work, 1000.0, _rules(), quota_paused=paused, rand=0.5, revisit=plan)
        assert got.completion is not None and got.completion.settle is not Settle.DONE
        assert (got.completion.revisit_at, got.completion.validators, got.revisit) == (
            None,
            None,
            None,
        )


def test_a_seed_makes_its_host_a_seed_host_before_its_links_are_admitted() -> None:
    """In a shared crawl a seed added by a control may be leased by a node that has not
    applied the control yet: its host must count as a seed's, or the seed's links are
    dropped as out of scope and the host ends after one page."""
    rules = _rules()
    new = "https://added.example.net/"
    links = ("https://added.example.net/b", "https://elsewhere.net/")

    def fetched(lease: LeasedUrl) -> FetchedPage:
        return dataclasses.replace(_work(200, links=links), lease=lease)

    seed = LeasedUrl(8, new, "added.example.net", 0, 0, 124, None, 0, 100.0)
    got = decide(fetched(seed), 1000.0, rules, quota_paused=False, rand=0.5)
    assert [e.url for e in got.discovered] == ["https://added.example.net/b"]
    assert "added.example.net" in rules.admission.scope.seed_hosts
    # found by a page, or moved there (via set), or a document: not a seed, no new scope
    for lease in (
        dataclasses.replace(
            seed, url="https://linked.example.io/", host="linked.example.io", depth=1, via=URL
        ),
        dataclasses.replace(
            seed, url="https://moved.example.io/", host="moved.example.io", via=URL
        ),
        dataclasses.replace(
            seed, url="https://doc.example.io/", host="doc.example.io", handler="sitemap"
        ),
    ):
        before = rules.admission.rejected["out-of-scope"]
        linked = (lease.url + "x",)
        work = dataclasses.replace(_work(200, links=linked), lease=lease)
        assert decide(work, 1000.0, rules, quota_paused=False, rand=0.5).discovered == ()
        assert rules.admission.rejected["out-of-scope"] == before + 1
        assert lease.host not in rules.admission.scope.seed_hosts
