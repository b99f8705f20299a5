"""Which hosts a run reached: the ones whose robots.txt fetch got no answer at all (the
name did not resolve, the port refused, spoke plain HTTP to TLS, timed out) and why,
and the ones that answered.

A host is unreachable from its first robots.txt fetch without an HTTP answer until one
answers; ``warn`` says so once per host (the first time) with what the operator can do
about it. ``seeds_unreached`` is what decides the crawl's own exit code: every host of
the run's seeds was tried and none answered.
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Iterable
from dataclasses import dataclass

from headway.fetch.result import FetchResult
from headway.policy.outcome import Outcome
from headway.policy.robots import RobotsKind, RobotsRules

log = logging.getLogger(__name__)

#: Hosts named in a warning when they are unreachable; later ones only in the crawl log
#: and the summary's count (a seed list of thousands of dead hosts must not flood the
#: terminal).
UNREACHABLE_WARNINGS = 10
#: Unreachable hosts the summary lists by name (the rest are counted).
UNREACHABLE_LISTED = 20


@dataclass(frozen=True, slots=True)
class Unreachable:
    """A host no request of this run got an answer from, and why (the first failure)."""

    host: str
    reason: str


def why_unreachable(res: FetchResult) -> str:
    """A fetch without an HTTP answer, in words an operator can act on."""
    error = str(res.error or res.outcome.value)
    match res.outcome:
        case Outcome.DNS_ERROR:
            return (
                f"the name does not resolve ({error}); check the host name, or map it to an "
                "address with --resolve HOST=ADDRESS"
            )
        # Python's ssl: "[SSL: WRONG_VERSION_NUMBER] wrong version number";
        # OpenSSL 3 through libcurl: "error:0A00010B:SSL routines::wrong version number"
        case Outcome.TLS_ERROR if "wrong version number" in error.lower():
            return (
                "the port answers in plain HTTP, not TLS; give the seed with http:// "
                "(or the port that serves https)"
            )
        case Outcome.TLS_ERROR:
            return f"TLS failed ({error}); check the scheme and port of the seed"
        case Outcome.CONNECTION_ERROR if "refused" in error.lower():
            return (
                "the connection was refused: nothing listens on that port; check the "
                "seed's port and scheme (http: 80, https: 443)"
            )
        case Outcome.BLOCKED_ADDRESS:
            return f"refused by the address guard ({error})"
        case _:
            return f"no answer ({error})"


def name_unknown(res: FetchResult) -> bool:
    """The fetch failed because the host's name does not exist (not a resolver that did
    not answer this time: ``EAI_AGAIN``, "temporary failure", "try again")."""
    if res.outcome is not Outcome.DNS_ERROR:
        return False
    text = str(res.error or "").lower()
    return not any(
        mark in text for mark in (f"[errno {socket.EAI_AGAIN}]", "temporary", "try again")
    )


def answered_before(previous: RobotsRules | None) -> bool:
    """The host answered a robots.txt fetch before (this run or an earlier one: the rules
    it left are a verdict read from an answer, not only failures)."""
    return previous is not None and previous.kind in (RobotsKind.RULES, RobotsKind.ALLOW_ALL)


def nobody_answers(
    *,
    wait: float,
    running_for: float,
    reach: HostReach,
    fetched: int,
    queued_hosts: int,
    leased: int,
) -> bool:
    """The crawl should end (``crawl.unanswered_wait``): ``wait`` seconds into the run,
    no host ever answered (none this run, none of the unreachable ones before it, no
    page ever fetched), and nothing is queued but the URLs of hosts that gave no answer
    and wait for a retry (``queued_hosts``: the hosts with queued URLs). A crawl with any
    host that answered, or with hosts not tried yet, keeps its robots.txt retries."""
    if wait <= 0 or running_for < wait or fetched or leased:
        return False
    waiting = reach.waiting_hosts()
    return reach.none_answered() and bool(waiting) and queued_hosts <= len(waiting)


class HostReach:
    """Hosts this run reached, and the unreachable ones with their reason."""

    def __init__(self) -> None:
        self._reached: set[str] = set()
        self._unreachable: dict[str, str] = {}  # host -> reason, in first-failure order
        self._warned = 0
        self._given_up: set[str] = set()  # unreachable hosts whose URLs failed for good
        self._answered_before: set[str] = set()  # unreachable now, but answered before

    def on_answer(self, host: str) -> None:
        """An HTTP answer (any status) came from ``host``."""
        self._reached.add(host)
        self._unreachable.pop(host, None)

    def on_no_answer(self, host: str, res: FetchResult, *, waits: str, warn: bool = True) -> bool:
        """A robots.txt fetch of ``host`` got no answer; ``waits``: what happens to its
        URLs now. Warned the first time for the host (at most ``UNREACHABLE_WARNINGS``
        hosts by name) unless ``warn`` is False (the caller warned). True when this is
        the host's first failure of the run (it is recorded now)."""
        if host in self._reached or host in self._unreachable:
            return False
        reason = why_unreachable(res)
        self._unreachable[host] = reason
        if not warn:
            return True
        self._warned += 1
        if self._warned <= UNREACHABLE_WARNINGS:
            log.warning("host %s unreachable: %s; %s", host, reason, waits)
        elif self._warned == UNREACHABLE_WARNINGS + 1:
            log.warning(
                "more hosts unreachable: not named from here on (the crawl log has a line "
                "for each robots.txt request, the summary counts them)"
            )
        return True

    def note_history(self, host: str, *, answered_before: bool) -> None:
        """Whether ``host``, which gave no answer now, answered an earlier fetch."""
        if answered_before:
            self._answered_before.add(host)

    def on_given_up(self, host: str) -> None:
        """``host``'s robots.txt failed for good: its URLs fail, none waits for it."""
        self._given_up.add(host)

    def waiting_hosts(self) -> set[str]:
        """Unreachable hosts whose URLs wait for a robots.txt retry."""
        return {h for h in self._unreachable if h not in self._given_up}

    def none_answered(self) -> bool:
        """No host answered in this run, and none of the unreachable ones before it."""
        return not self._reached and not (self._answered_before & self._unreachable.keys())

    def unreachable(self) -> tuple[Unreachable, ...]:
        """Hosts with no answer in this run, in the order they first failed."""
        return tuple(Unreachable(h, r) for h, r in self._unreachable.items())

    def seeds_unreached(self, seed_hosts: Iterable[str]) -> bool:
        """True when there are seed hosts and every one of them was tried without an
        answer in this run (a resumed crawl's seed hosts it did not try again do not
        count as unreached)."""
        hosts = set(seed_hosts)
        return bool(hosts) and all(h in self._unreachable for h in hosts)
