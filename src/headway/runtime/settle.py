"""How one fetched (or skipped) URL is settled in the frontier, and which links it
contributes: the decision between the store stage and the settle stage."""

from __future__ import annotations

from dataclasses import dataclass

from headway.frontier.store import Completion, Settle
from headway.policy.outcome import Outcome
from headway.policy.retry import RETRYABLE, RetryParams, retry_delay
from headway.runtime.admission import Admission
from headway.runtime.work import PageWork
from headway.urls.canonical import CanonOptions, canonicalize

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


def decide(
    work: PageWork, now: float, rules: SettleRules, *, quota_paused: bool, rand: float
) -> None:
    """Fill in ``work.completion``, ``work.discovered`` and ``work.note``.

    A skip without fetch fails or is requeued untried; a quota answer is requeued untried;
    a retryable failure is retried after ``retry_delay`` (full jitter, ``rand`` in [0, 1))
    until the budget is spent; anything else is done or failed, and a page's links and a
    redirect's target go through admission."""
    lease = work.lease
    if lease is None:
        return
    res = work.result
    if res is None:
        if work.requeue_at is not None:
            work.completion = Completion(lease.id, Settle.REQUEUE, work.requeue_at)
        else:
            work.completion = Completion(lease.id, Settle.FAILED)
        return
    outcome = res.outcome
    if quota_paused and res.status == rules.quota_status:
        work.completion = Completion(lease.id, Settle.REQUEUE, now)
        work.note = "quota-exhausted"
        return
    if outcome in RETRYABLE:
        delay = retry_delay(outcome, lease.attempts + 1, rules.retry, rand, work.retry_after)
        if delay is not None:
            work.completion = Completion(lease.id, Settle.RETRY, now + delay)
            work.note = f"retry in {delay:.1f}s"
        else:
            work.completion = Completion(lease.id, Settle.FAILED)
            work.note = "retries exhausted" if lease.attempts else None
        return
    settle = Settle.DONE if outcome in DONE_OUTCOMES else Settle.FAILED
    work.completion = Completion(lease.id, settle)
    admission = rules.admission
    if work.parsed is not None and work.parsed.links:
        work.discovered = admission.admit(work.parsed.links, lease.depth + 1, lease.url)
    if outcome is Outcome.REDIRECT:
        location = res.header("Location")
        target = canonicalize(location, lease.url, rules.canon) if location else None
        if target is None:
            work.note = f"bad redirect location {location!r}"
        else:
            work.note = f"redirect -> {target}"
            work.discovered = admission.admit_redirect(target, lease.url, lease.depth)
