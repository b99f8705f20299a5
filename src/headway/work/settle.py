"""How one fetched (or skipped) URL is settled in the frontier, and which links it
contributes: the decision between the store stage and the settle stage."""

from __future__ import annotations

from dataclasses import dataclass

from headway.frontier.store import Completion, Settle, UrlEntry
from headway.policy.outcome import Outcome
from headway.policy.retry import RETRYABLE, RetryParams, retry_delay
from headway.policy.revisit import SitemapHint, encode_hint
from headway.urls.canonical import CanonOptions, canonicalize
from headway.work.admission import Admission
from headway.work.items import FetchedPage, RobotsAnswer, SkippedUrl, Work

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
class Settlement:
    """How one item ends in the frontier: ``completion`` None for a robots.txt answer
    (nothing to settle, but the sitemaps it names are admitted); ``discovered`` the links
    it admits; ``note`` what the crawl log says about it."""

    completion: Completion | None
    discovered: tuple[UrlEntry, ...] = ()
    note: str | None = None


def decide(
    work: Work, now: float, rules: SettleRules, *, quota_paused: bool, rand: float
) -> Settlement:
    """The settlement of ``work`` (``work`` is not changed).

    A robots.txt answer settles nothing and admits the sitemaps it names; a skip without
    fetch fails or is requeued untried, as is a page a stop left unparsed; a quota answer
    is requeued untried; a retryable failure is retried after ``retry_delay`` (full
    jitter, ``rand`` in [0, 1)) until the budget is spent; anything else is done or
    failed, and a page's links and a redirect's target go through admission."""
    match work:
        case RobotsAnswer():
            return Settlement(None, work.sitemaps, note=work.note)
        case SkippedUrl():
            if work.requeue_at is None:
                return Settlement(Completion(work.lease.id, Settle.FAILED), note=work.note)
            completion = Completion(work.lease.id, Settle.REQUEUE, work.requeue_at)
            return Settlement(completion, note=work.note)
        case FetchedPage():
            return _decide_fetched(work, now, rules, quota_paused=quota_paused, rand=rand)


def _decide_fetched(
    work: FetchedPage, now: float, rules: SettleRules, *, quota_paused: bool, rand: float
) -> Settlement:
    lease, res, note = work.lease, work.result, work.note
    if work.requeue_at is not None:  # a stop left it unparsed: back untried
        return Settlement(Completion(lease.id, Settle.REQUEUE, work.requeue_at), note=note)
    outcome = res.outcome
    if quota_paused and res.status == rules.quota_status:
        return Settlement(Completion(lease.id, Settle.REQUEUE, now), note="quota-exhausted")
    if outcome in RETRYABLE:
        delay = retry_delay(outcome, lease.attempts + 1, rules.retry, rand, work.retry_after)
        if delay is not None:
            return Settlement(
                Completion(lease.id, Settle.RETRY, now + delay), note=f"retry in {delay:.1f}s"
            )
        return Settlement(
            Completion(lease.id, Settle.FAILED),
            note="retries exhausted" if lease.attempts else None,
        )
    settle = Settle.DONE if outcome in DONE_OUTCOMES else Settle.FAILED
    completion = Completion(lease.id, settle)
    admission = rules.admission
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
    if outcome is Outcome.REDIRECT:
        location = res.header("Location")
        target = canonicalize(location, lease.url, rules.canon) if location else None
        if target is None:
            note = f"bad redirect location {location!r}"
        else:
            note = f"redirect -> {target}"
            discovered = admission.admit_redirect(
                target, lease.url, lease.depth, handler=lease.handler
            )
    return Settlement(completion, tuple(discovered), note)
