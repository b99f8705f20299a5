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
from collections.abc import Iterable
from dataclasses import dataclass

from headway.fetch.result import FetchResult
from headway.policy.outcome import Outcome

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


class HostReach:
    """Hosts this run reached, and the unreachable ones with their reason."""

    def __init__(self) -> None:
        self._reached: set[str] = set()
        self._unreachable: dict[str, str] = {}  # host -> reason, in first-failure order
        self._warned = 0

    def on_answer(self, host: str) -> None:
        """An HTTP answer (any status) came from ``host``."""
        self._reached.add(host)
        self._unreachable.pop(host, None)

    def on_no_answer(self, host: str, res: FetchResult, *, waits: str, warn: bool = True) -> None:
        """A robots.txt fetch of ``host`` got no answer; ``waits``: what happens to its
        URLs now. Warned the first time for the host (at most ``UNREACHABLE_WARNINGS``
        hosts by name) unless ``warn`` is False (the caller warned)."""
        if host in self._reached or host in self._unreachable:
            return
        reason = why_unreachable(res)
        self._unreachable[host] = reason
        if not warn:
            return
        self._warned += 1
        if self._warned <= UNREACHABLE_WARNINGS:
            log.warning("host %s unreachable: %s; %s", host, reason, waits)
        elif self._warned == UNREACHABLE_WARNINGS + 1:
            log.warning(
                "more hosts unreachable: not named from here on (the crawl log has a line "
                "for each robots.txt request, the summary counts them)"
            )

    def unreachable(self) -> tuple[Unreachable, ...]:
        """Hosts with no answer in this run, in the order they first failed."""
        return tuple(Unreachable(h, r) for h, r in self._unreachable.items())

    def seeds_unreached(self, seed_hosts: Iterable[str]) -> bool:
        """True when there are seed hosts and every one of them was tried without an
        answer in this run (a resumed crawl's seed hosts it did not try again do not
        count as unreached)."""
        hosts = set(seed_hosts)
        return bool(hosts) and all(h in self._unreachable for h in hosts)
