"""How one fetched (or skipped) URL is settled in the frontier, and which links it
contributes: the decision between the store stage and the settle stage.

Contract: one settlement per item, in two pure steps around the write of its records.
``end_of`` decides how the item ends (done, failed, retried or requeued, and the note
its crawl-log line carries) before the write; ``settle`` builds the settlement once the
records are written: the completion, with the revisit the recrawl planned from the
written record when the page is done, and the links it admits. ``decide`` is both in
one call."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from headway.frontier.store import Completion, Settle, UrlEntry
from headway.policy.outcome import Outcome
from headway.policy.retry import RETRYABLE, RetryParams, retry_delay
from headway.policy.revisit import SitemapHint, encode, encode_hint
from headway.urls.canonical import CanonOptions, canonicalize
from headway.work.admission import Admission
from headway.work.items import FetchedPage, Revisit, RobotsAnswer, SkippedUrl, Work

#: Outcomes that finish a URL: the site answered, even if with a 4xx or a redirect.
DONE_OUTCOMES = frozenset(
    {Outcome.OK, Outcome.NOT_MODIFIED, Outcome.CLIENT_ERROR, Outcome.REDIRECT}
)


@dataclass(frozen=True, slots=True)
class SettleRules:
    admission: Admission
    canon: CanonOptions
    retry: RetryParams
    quota_status: int  # 0: no quota status


@dataclass(frozen=True, slots=True)
class Ending:
    """How an item ends, decided before its records are written (the crawl log says
    ``note``): ``completion`` how its lease is settled, without a revisit (None for a
    robots.txt answer); ``admits`` whether its links and documents go through admission;
    ``redirect_to`` a redirect's canonical target."""

    completion: Completion | None
    note: str | None = None
    admits: bool = False
    redirect_to: str | None = None


@dataclass(frozen=True, slots=True)
class Settlement:
    """How one item ends in the frontier: ``completion`` None for a robots.txt answer
    (nothing to settle, but the sitemaps it names are admitted); ``discovered`` the links
    it admits; ``note`` what the crawl log says about it; ``revisit`` the next revisit a
    DONE page was settled with (recrawl)."""

    completion: Completion | None
    discovered: tuple[UrlEntry, ...] = ()
    note: str | None = None
    revisit: Revisit | None = None


def decide(
    work: Work,
    now: float,
    rules: SettleRules,
    *,
    quota_paused: bool,
    rand: float,
    revisit: Revisit | None = None,
) -> Settlement:
    """The settlement of ``work`` in one call: ``settle(work, end_of(...))``."""
    ending = end_of(work, now, rules, quota_paused=quota_paused, rand=rand)
    return settle(work, ending, rules, now=now, revisit=revisit)


def end_of(
    work: Work, now: float, rules: SettleRules, *, quota_paused: bool, rand: float
) -> Ending:
    """How ``work`` ends (``work`` is not changed; nothing is admitted).

    A robots.txt answer settles nothing; a skip without fetch fails or is requeued
    untried, as is a page a stop left unparsed; a quota answer is requeued untried; a
    retryable failure is retried after ``retry_delay`` (full jitter, ``rand`` in [0, 1))
    until the budget is spent; anything else is done or failed, and then a page's links
    and a redirect's target go through admission."""
    match work:
        case RobotsAnswer():
            return Ending(None, note=work.note)
        case SkippedUrl():
            if work.requeue_at is None:
                return Ending(Completion(work.lease.id, Settle.FAILED), note=work.note)
            return Ending(
                Completion(work.lease.id, Settle.REQUEUE, work.requeue_at), note=work.note
            )
        case FetchedPage():
            return _end_of_fetched(work, now, rules, quota_paused=quota_paused, rand=rand)


def _end_of_fetched(
    work: FetchedPage, now: float, rules: SettleRules, *, quota_paused: bool, rand: float
) -> Ending:
    lease, res, note = work.lease, work.result, work.note
    if work.requeue_at is not None:  # a stop left it unparsed: back untried
        return Ending(Completion(lease.id, Settle.REQUEUE, work.requeue_at), note=note)
    outcome = res.outcome
    if quota_paused and res.status == rules.quota_status:
        return Ending(Completion(lease.id, Settle.REQUEUE, now), note="quota-exhausted")
    if outcome in RETRYABLE:
        delay = retry_delay(outcome, lease.attempts + 1, rules.retry, rand, work.retry_after)
        if delay is not None:
            return Ending(
                Completion(lease.id, Settle.RETRY, now + delay), note=f"retry in {delay:.1f}s"
            )
        return Ending(
            Completion(lease.id, Settle.FAILED),
            note="retries exhausted" if lease.attempts else None,
        )
    settle = Settle.DONE if outcome in DONE_OUTCOMES else Settle.FAILED
    target = None
    if outcome is Outcome.REDIRECT:
        location = res.header("Location")
        target = canonicalize(location, lease.url, rules.canon) if location else None
        note = f"bad redirect location {location!r}" if target is None else f"redirect -> {target}"
    return Ending(Completion(lease.id, settle), note, admits=True, redirect_to=target)


def settle(
    work: Work, ending: Ending, rules: SettleRules, *, now: float, revisit: Revisit | None = None
) -> Settlement:
    """The settlement of ``work`` that ends as ``ending``, once its records are written:
    a DONE page with a ``revisit`` (recrawl) is settled with its next due time and
    revisit state; a robots.txt answer admits the sitemaps it names; a page that
    ``admits`` its links sends them (and a redirect its target) through admission."""
    completion = ending.completion
    if isinstance(work, RobotsAnswer):
        return Settlement(None, work.sitemaps, note=ending.note)
    if completion is not None and completion.settle is Settle.DONE and revisit is not None:
        completion = dataclasses.replace(
            completion, revisit_at=revisit.due_at, validators=encode(revisit.state)
        )
    else:
        revisit = None
    if not ending.admits or not isinstance(work, FetchedPage):
        return Settlement(completion, note=ending.note, revisit=revisit)
    return Settlement(
        completion, _admitted(work, ending, rules, now), note=ending.note, revisit=revisit
    )


def _admitted(
    work: FetchedPage, ending: Ending, rules: SettleRules, now: float
) -> tuple[UrlEntry, ...]:
    lease = work.lease
    admission = rules.admission
    if lease.depth == 0 and lease.via is None and lease.handler is None:
        # a seed (depth 0, found by no page): its host is a seed host, also on a node
        # that leased it before it applied the control that added the seed on another
        admission.scope.add_seed(lease.url)
    discovered: list[UrlEntry] = []
    parsed = work.parsed
    if parsed is not None and parsed.links:
        # a sitemap's <lastmod> (a feed entry's date) raises its link's priority
        ages = {h.url: now - h.lastmod for h in parsed.hints if h.lastmod is not None}
        # and both it and <changefreq> set the first revisit interval (recrawl)
        hinted = {h.url: encode_hint(SitemapHint(h.lastmod, h.changefreq)) for h in parsed.hints}
        discovered = admission.admit(
            parsed.links,
            lease.depth + 1,
            lease.url,
            near_dup=work.near_dup_of is not None,
            lastmod_age=ages or None,
            validators=hinted or None,
        )
    if parsed is not None and parsed.documents:
        # feeds a page announces, child sitemaps of an index: nesting is capped
        discovered += admission.admit_documents(
            parsed.documents, lease.depth + 1, lease.url, lease.fp, parsed.documents_handler
        )
    if ending.redirect_to is not None:
        discovered = admission.admit_redirect(
            ending.redirect_to, lease.url, lease.depth, handler=lease.handler
        )
    return tuple(discovered)
