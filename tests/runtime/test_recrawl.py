"""The node's recrawl part: which fetches are revisited, what a revisit found, how the
settlement carries the next due time, and the counts (no network, fake time)."""

from __future__ import annotations

from headway.cli.progress import progress_text
from headway.frontier.store import Completion, LeasedUrl, Settle
from headway.policy.outcome import Outcome
from headway.policy.retry import RetryParams
from headway.policy.revisit import (
    Capture,
    Change,
    RevisitBounds,
    RevisitState,
    SitemapHint,
    decode,
    encode,
    encode_hint,
)
from headway.runtime.recrawl import AdaptiveRecrawl, NoRecrawl
from headway.runtime.stats import NodeStats, RecrawlStats
from headway.store.warc import EarlierCapture, WrittenRecord
from headway.urls.canonical import DEFAULT_OPTIONS
from headway.urls.scope import Scope
from headway.work.admission import Admission
from headway.work.items import FetchedPage
from headway.work.settle import Ending, SettleRules, settle
from tests.store.factory import fetch_result

NOW = 1_700_000_000.0
URL = "http://example.com/a?b=1"
CAP = Capture(URL, "2023-11-14T22:13:20Z", "<urn:uuid:1>")


def lease(fetches: int = 0, validators: str | None = None) -> LeasedUrl:
    return LeasedUrl(7, URL, "example.com", 0, 0, 1, None, 0, NOW + 60, validators, fetches)


def written(digest: str = "sha1:A", refers_to: EarlierCapture | None = None) -> WrittenRecord:
    return WrittenRecord(
        "w.warc.gz", 0, 10, digest, refers_to is not None, "<urn:uuid:9>", refers_to
    )


def rc() -> AdaptiveRecrawl:
    return AdaptiveRecrawl(RevisitBounds(1.0, 16.0), share=0.5)


def rules() -> SettleRules:
    admission = Admission(Scope.for_seeds([URL]), current_year=2026)
    return SettleRules(admission, DEFAULT_OPTIONS, RetryParams(budget=2, base=1.0, cap=60.0), 0)


def test_first_fetch_is_planned_with_validators_and_capture() -> None:
    r = rc()
    previous, hint, headers = r.request(lease())
    assert (previous, hint, headers) == (None, None, ())
    res = fetch_result(response_headers=(("ETag", '"e"'), ("Last-Modified", "x")))
    work = FetchedPage(lease(), res, previous=previous)
    plan = r.plan(work, written(), NOW)
    assert plan is not None and plan.change is Change.FIRST
    assert plan.due_at == NOW + 4.0 and plan.state.digest == "sha1:A"
    assert plan.state.capture == Capture(URL, "2023-11-14T22:13:20Z", "<urn:uuid:9>")
    assert r.statistics().revisits == 0


def test_a_304_revisit_keeps_content_and_counts_not_modified() -> None:
    r = rc()
    state = RevisitState(interval=4.0, etag='"e"', digest="sha1:A", capture=CAP)
    previous, _, headers = r.request(lease(1, encode(state)))
    assert previous == state and ("If-None-Match", '"e"') in headers
    res = fetch_result(outcome=Outcome.NOT_MODIFIED, status=304, raw_body=b"", body=b"")
    work = FetchedPage(lease(1), res, previous=previous)
    plan = r.plan(work, written("sha1:A"), NOW)
    assert plan is not None and plan.change is Change.UNCHANGED
    assert plan.state.capture == CAP and plan.state.interval == 6.0
    done = settle(work, Ending(Completion(7, Settle.DONE)), rules(), now=NOW, revisit=plan)
    assert done.completion is not None and done.completion.revisit_at == NOW + 6.0
    assert decode(done.completion.validators) == plan.state
    r.settled(done, work)
    st = r.statistics()
    assert (st.revisits, st.unchanged, st.not_modified, st.changed, st.scheduled) == (1, 1, 1, 0, 1)


def test_identical_payload_capture_refers_to_the_first_one() -> None:
    r = rc()
    first = EarlierCapture("http://example.com/orig", "2020-01-01T00:00:00Z")
    work = FetchedPage(lease(), fetch_result(), previous=None)
    plan = r.plan(work, written(refers_to=first), NOW)
    assert plan is not None
    assert plan.state.capture == Capture("http://example.com/orig", "2020-01-01T00:00:00Z", None)


def test_other_answers_and_other_settlements_are_not_revisited() -> None:
    r = rc()
    for outcome, status in ((Outcome.CLIENT_ERROR, 404), (Outcome.REDIRECT, 301)):
        work = FetchedPage(lease(), fetch_result(outcome=outcome, status=status))
        assert r.plan(work, written(), NOW) is None
    work = FetchedPage(lease(), fetch_result())
    plan = r.plan(work, written(), NOW)
    retry = settle(
        work, Ending(Completion(7, Settle.RETRY, NOW + 5)), rules(), now=NOW, revisit=plan
    )
    assert retry.completion == Completion(7, Settle.RETRY, NOW + 5) and retry.revisit is None
    r.settled(retry, work)
    assert r.statistics().scheduled == 0


def test_without_recrawl_nothing_is_asked_planned_or_counted() -> None:
    r = NoRecrawl()
    assert r.request(lease(1, encode(RevisitState(interval=4.0, etag='"e"')))) == (None, None, ())
    work = FetchedPage(lease(), fetch_result())
    assert r.plan(work, written(), NOW) is None
    assert (r.statistics(), r.revisits_first()) == (None, None)


def test_progress_line_shows_revisits() -> None:
    stats = NodeStats(recrawl=RecrawlStats(revisits=6, changed=2, unchanged=4, not_modified=3))
    assert "revisits fetched 6 (changed 2 unchanged 4, 304 3)" in progress_text(stats)
    assert "revisits" not in progress_text(NodeStats())


def test_a_sitemap_hint_sets_the_first_interval() -> None:
    r = rc()
    text = encode_hint(SitemapHint(lastmod=NOW - 10, changefreq="never"))
    previous, hint, headers = r.request(lease(0, text))
    assert (previous, headers) == (None, ())
    assert hint == SitemapHint(NOW - 10, "never")
    work = FetchedPage(lease(0, text), fetch_result(), previous=None, hint=hint)
    plan = r.plan(work, written(), NOW)
    assert plan is not None and plan.state.interval == 16.0  # "never": the maximum


def test_a_document_its_handler_refused_is_not_revisited() -> None:
    import dataclasses

    from headway.parse.page import ParsedPage

    refused = ParsedPage(
        (), 0, False, False, None, None, "utf-8", None, 0, "sitemap", refused="xml-entities"
    )
    work = FetchedPage(lease(), fetch_result(), handler="sitemap", parsed=refused)
    assert rc().plan(work, written(), NOW) is None
    read = dataclasses.replace(work, parsed=dataclasses.replace(refused, refused=None))
    assert rc().plan(read, written(), NOW) is not None
