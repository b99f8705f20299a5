"""Which hosts a run reached, and when a crawl none of whose hosts ever answered ends
(``runtime/reach.py``): plain values in, decisions out."""

from __future__ import annotations

import pytest

from headway.fetch.result import FetchResult
from headway.policy.outcome import Outcome
from headway.policy.robots import RobotsKind, RobotsRules
from headway.runtime.reach import HostReach, answered_before, name_unknown, nobody_answers


def _failed(outcome: Outcome, error: str) -> FetchResult:
    return FetchResult("http://a.test/robots.txt", 0.0, 0.01, outcome, error=error)


@pytest.mark.parametrize(
    ("outcome", "error", "final"),
    [
        (Outcome.DNS_ERROR, "DNS: [Errno -2] Name or service not known", True),
        (Outcome.DNS_ERROR, "DNS: a.test: no address", True),
        (Outcome.DNS_ERROR, "DNS: Could not resolve host: a.test", True),
        (Outcome.DNS_ERROR, "DNS: [Errno -3] Temporary failure in name resolution", False),
        (Outcome.DNS_ERROR, "DNS: server said: try again", False),
        (Outcome.CONNECTION_ERROR, "Connection refused", False),
        (Outcome.TIMEOUT, "timeout", False),
    ],
)
def test_a_name_that_does_not_exist_is_final(outcome: Outcome, error: str, final: bool) -> None:
    assert name_unknown(_failed(outcome, error)) is final


def test_answered_before_is_a_verdict_read_from_an_answer() -> None:
    assert not answered_before(None)
    assert not answered_before(RobotsRules(RobotsKind.DISALLOW_ALL, 0, 60, failures=2))
    assert not answered_before(RobotsRules(RobotsKind.BLOCKED, 0, 60))
    assert answered_before(RobotsRules(RobotsKind.RULES, 0, 60))
    assert answered_before(RobotsRules(RobotsKind.ALLOW_ALL, 0, 60))


def _reach(*hosts: str) -> HostReach:
    reach = HostReach()
    for h in hosts:
        reach.on_no_answer(h, _failed(Outcome.CONNECTION_ERROR, "refused"), waits="", warn=False)
    return reach


def _ends(reach: HostReach, **kw: float) -> bool:
    args = {"wait": 50.0, "running_for": 51.0, "fetched": 0, "queued_hosts": 1, "leased": 0}
    args.update(kw)
    return nobody_answers(reach=reach, **args)  # type: ignore[arg-type]


def test_a_crawl_whose_hosts_never_answered_ends_after_the_wait() -> None:
    reach = _reach("a.test", "b.test")
    assert _ends(reach, queued_hosts=2)
    assert not _ends(reach, running_for=49.0, queued_hosts=2)  # not before the wait
    assert not _ends(reach, wait=0.0, queued_hosts=2)  # 0: never
    assert not _ends(reach, queued_hosts=3)  # a host not tried yet is queued
    assert not _ends(reach, queued_hosts=2, leased=1)  # something in flight
    assert not _ends(reach, queued_hosts=2, fetched=1)  # the crawl fetched a page once
    assert not _ends(HostReach(), queued_hosts=0)  # nothing unreachable: not this rule


def test_a_host_that_answered_keeps_the_crawl_going() -> None:
    reach = _reach("a.test", "b.test")
    reach.on_answer("c.test")  # this run
    assert not _ends(reach, queued_hosts=2)
    before = _reach("a.test")
    before.note_history("a.test", answered_before=True)  # an earlier run
    assert not _ends(before)
    gone = _reach("a.test", "b.test")
    gone.on_given_up("b.test")  # its URLs failed: a.test's are all that is queued
    assert _ends(gone, queued_hosts=1)
    assert not _ends(gone, queued_hosts=2)
