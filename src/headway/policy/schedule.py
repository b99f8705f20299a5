"""The scheduler's decisions (pure): which host next, robots.txt first, lease, wait, drop.

``ScheduleCore`` holds the host heap (hosts ordered by the time the politeness rule lets
them start, Mercator's back queues), the per-host limiters, the robots verdicts, the
leases waiting for their host's turn, the page budget and the pause. It does no IO and
reads no clock: ``decide(now, waiting)`` returns the next thing to do, and the shell
(``runtime/scheduler.py``) performs it and feeds the answer back
(``offer_hosts``, ``offer_leases``) or reports what happened (``on_fetch_done``,
``on_robots_done``).

Decisions (values of ``decisions.py``), in the order they are returned:

- ``SkippedUrl`` (settle a leased URL without fetching it) and ``DropHost`` (fail a host's
  queued URLs): found while deciding about a host.
- ``FetchRobots`` / ``FetchPage``: a job for one waiting fetch slot; at most ``waiting``
  of them per call.
- ``LeaseFor``: ready hosts without a leased URL, leased together in one frontier call;
  each host as many URLs as its gap lets it fetch within ``lease_horizon`` seconds (at
  most ``lease_ahead``), held in order until the host's turns come (``held.py``).
- ``SaveStates`` / ``ForgetHosts``: host state to persist (robots verdicts, waits of
  hosts whose limiter is forgotten).
- ``Refill``: ask the frontier for ready hosts (when the heap has none ready and the
  frontier changed, or at least every ``refill_interval``; with ``inlinks``, also while
  every slot is served from hosts it holds, every ``refill_interval`` up to
  ``max_ready_hosts`` hosts, so that hosts it does not hold yet can compete).

Between hosts: without ``inlinks`` the ready host that was ready first goes next; with
``inlinks`` (host -> distinct hosts seen linking to it) the most important of the hosts
ready at ``now`` goes next (``policy/importance.py``, with ``quality``: host -> its
quality), counting the pages this core handed out for each host in this run.
- ``Wait(until)``: nothing to do before ``until`` unless an event comes first.

Politeness invariant: a ``FetchRobots`` or ``FetchPage`` for a host is returned only when
the host's limiter ``can_start(now)``, and ``on_start`` is applied before it is returned.
"""

from __future__ import annotations

import dataclasses
import math
from collections import deque
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass

from headway.frontier.store import LeasedUrl
from headway.policy.decisions import (
    EXCLUDED,
    ROBOTS_DISALLOWED,
    Decision,
    DropHost,
    FetchPage,
    FetchRobots,
    Job,
    LeaseFor,
    Refill,
    SaveStates,
    SkippedUrl,
    Wait,
)
from headway.policy.held import HeldLeases, lease_count
from headway.policy.hoststate import HostState, HostWait, restore, wait_of, waits_of
from headway.policy.importance import host_importance
from headway.policy.limiters import HostLimiters
from headway.policy.outcome import Outcome
from headway.policy.overrides import HostOverride, OverrideBook
from headway.policy.politeness import HostLimiter, HostLimitParams, HostLimitStats
from headway.policy.pressure import HostPressure, held_back, host_pressure
from headway.policy.readyheap import ReadyHeap
from headway.policy.robots import (
    RobotsCache,
    RobotsKind,
    RobotsRules,
    clamp_crawl_delay,
    given_up,
)
from headway.urls.scope import OptOut

__all__ = [
    "ROBOTS_DISALLOWED",
    "Decision",
    "DropHost",
    "FetchPage",
    "FetchRobots",
    "HostPressure",
    "Job",
    "LeaseFor",
    "Refill",
    "SaveStates",
    "ScheduleCore",
    "ScheduleParams",
    "SkippedUrl",
    "Wait",
]


@dataclass(frozen=True, slots=True)
class ScheduleParams:
    limits: HostLimitParams
    crawl_delay_max: float
    user_agent: str = ""
    robots_give_up: int = 4
    host_ceilings: Mapping[str, int] = dataclasses.field(default_factory=dict)
    refill_batch: int = 256
    lease_batch: int = 256
    lease_ahead: int = 1  # most URLs leased for one host at once
    lease_horizon: float = 4.0  # seconds of a host's fetches (by its gap) leased at once
    refill_interval: float = 1.0
    recheck_interval: float = 0.1
    max_limiters: int = 50_000
    max_ready_hosts: int = 1024  # most hosts held for the importance order to choose from


class ScheduleCore:
    """The scheduler's state and decisions (see the module docstring)."""

    def __init__(
        self,
        params: ScheduleParams,
        *,
        robots: RobotsCache | None = None,
        optout: OptOut | None = None,
        page_budget: float = math.inf,
        waits_for_parser: Callable[[str], bool] | None = None,
        inlinks: Callable[[str], int] | None = None,
        quality: Callable[[str], float] | None = None,
    ) -> None:
        self.params = params
        self._inlinks = inlinks  # None: ready hosts go by ready time alone
        self._quality = quality  # host quality for the importance order (None: 1)
        self._served: dict[str, int] = {}  # pages handed out per host (importance order)
        # whether a host's last page still waits for a parser (see _decide_host)
        self._waits_for_parser = waits_for_parser
        self.robots = robots if robots is not None else RobotsCache()
        self._optout = optout
        # the crawl's rules on URLs alone (scope.url_refusal): a leased URL they exclude
        # (an exclusion added after it was queued) is dropped without a fetch
        self._url_refusal: Callable[[str], str | None] | None = None
        self.overrides = OverrideBook()  # an operator's per-host overrides (overrides.py)
        self._lims = HostLimiters(params.limits, params.host_ceilings, self.overrides)
        # hosts by the time each is next ready; among the ready, by importance
        self._ready = ReadyHeap(self._importance if inlinks is not None else None)
        # hosts waiting in the heap only until their last page leaves the parse queue
        self._parser_wait: set[str] = set()
        self._busy: set[str] = set()  # at the concurrency limit, or fetching robots.txt
        self._leasing: set[str] = set()  # in a LeaseFor not yet answered
        self._held = HeldLeases()  # leased, waiting for their host's turn
        self._robots_out: set[str] = set()  # hosts fetching their robots.txt
        self._fresh: deque[str] = deque()  # hosts whose lease just came: served first
        self._limiters = self._lims.by_host  # least recently used first
        self.parked: set[str] = set()
        self._active: set[str] = set()
        self._throttled: set[str] = set()
        self._actions: deque[Decision] = deque()
        self._to_save: dict[str, HostState] = {}
        self._refill_due = True
        self._recheck = False  # a lease came back empty: refill soon
        self._last_refill = -math.inf
        self._frontier_next: float | None = None
        self.page_budget = page_budget
        self.paused = False

    def _importance(self, host: str) -> float:
        assert self._inlinks is not None
        q = self._quality(host) if self._quality is not None else 1.0
        return host_importance(self._inlinks(host), self._served.get(host, 0), q)

    # -- limiters ----------------------------------------------------------------------
    def limiter(self, host: str) -> HostLimiter:
        return self._lims.get(host)

    def knows(self, host: str) -> bool:
        return host in self._limiters

    def host_stats(self, hosts: Collection[str]) -> dict[str, HostLimitStats]:
        """The limits of each of ``hosts`` that has a limiter (creates none, moves none)."""
        return self._lims.stats(hosts)

    def host_gaps(self, hosts: Iterable[str]) -> dict[str, float]:
        """The current gap of each of ``hosts`` that has a limiter (creates none)."""
        return self._lims.gaps(hosts)

    def known_hosts(self) -> Iterator[str]:
        """The hosts with a limiter, least recently used first."""
        return iter(self._limiters)

    def set_overrides(self, overrides: Mapping[str, HostOverride]) -> None:
        """Put an operator's per-host overrides in force (``policy/overrides.py``); a
        known host's limiter takes its new delay and concurrency at once."""
        self._lims.set_overrides(overrides)

    def _idle(self, host: str, lim: HostLimiter) -> bool:
        return (
            lim.statistics().in_flight == 0
            and host not in self._ready
            and host not in self._busy
            and host not in self._held
            and host not in self._leasing
        )

    def forget_idle(self, now: float) -> list[tuple[str, float, HostWait | None]]:
        """Drop the least recently used idle limiters beyond ``max_limiters``; returns
        (host, ready_at, wait) of each, so the shell persists a wait before the limiter
        is gone (forgetting a limiter must never let a host be fetched sooner)."""
        excess = len(self._limiters) - self.params.max_limiters
        victims = self._lims.forget(excess, self._idle, now)
        self._throttled.difference_update(host for host, _, _ in victims)
        for host, _, _ in victims:
            self._served.pop(host, None)
        return victims

    def waits(self, now: float) -> list[tuple[str, HostState]]:
        """The waits of every known host that holds one (saved at a clean stop)."""
        return waits_of(self._limiters, now)

    # -- the heap ----------------------------------------------------------------------
    def _push(self, host: str, ready_at: float) -> None:
        if host in self._ready:
            return
        if math.isinf(ready_at):
            self._busy.add(host)
            return
        self._busy.discard(host)
        self._ready.push(host, ready_at)

    def parser_took(self, host: str, now: float) -> bool:
        """``host``'s last page left the parse queue: if its next fetch waited for that,
        it may go now (politeness is checked again when it comes up). True when the
        host was waiting for it."""
        if host not in self._parser_wait:
            return False
        self._parser_wait.discard(host)
        if host in self._ready:
            self._ready.advance(host, now)
        return True

    def held(self) -> int:
        """Leased URLs waiting for their host's turn that will still be fetched: none once
        the page budget is spent (those leases go back to the queue when the node stops,
        with the rest of its leases), so that a spent budget never holds the stop."""
        return len(self._held) if self.page_budget > 0 else 0

    def hosts_ready(self, now: float) -> int:
        return self._ready.count(now, ready=True)

    def hosts_waiting(self, now: float) -> int:
        """Hosts in the heap whose next request must wait (their gap, a backoff)."""
        return self._ready.count(now, ready=False)

    def next_ready(self) -> float | None:
        top = self._ready.top()
        return None if math.isinf(top) else top

    # -- answers from the frontier -----------------------------------------------------
    def unknown(self, hosts: Collection[str]) -> list[str]:
        """Hosts this node has no limiter and no robots verdict for (load their state)."""
        return [h for h in hosts if h not in self._limiters and self.robots.previous(h) is None]

    def offer_hosts(
        self,
        hosts: Collection[tuple[str, float]],
        frontier_next: float | None,
        states: Mapping[str, HostState],
        now: float,
    ) -> None:
        """Ready hosts from the frontier (answer to ``Refill``), with the saved state of
        the hosts ``unknown`` named."""
        self._last_refill = now
        self._refill_due = self._recheck = False
        self._frontier_next = frontier_next
        for host, state in states.items():
            lim = self.limiter(host)
            rules = restore(state, lim, self.params.user_agent, now)
            if rules is not None:
                self.robots.put(host, rules)
                self._apply_delay(host, lim, rules)
        for host, ready in hosts:
            if host in self._busy or host in self._leasing or host in self._held:
                continue
            self._push(host, max(ready, self.limiter(host).ready_at()))

    def offer_leases(
        self, wants: Collection[tuple[str, int]], leases: Collection[LeasedUrl], now: float
    ) -> None:
        """The frontier's answer to ``LeaseFor``: hosts that got a URL are ready again at
        once; hosts that got none wait for the frontier to offer them again, and the next
        refill comes ``recheck_interval`` after the last one rather than a whole
        ``refill_interval`` (it learns when such a host is due: a URL put back to wait,
        e.g. for its revisit, may be due soon after the host's politeness allowed)."""
        got = {lease.host for lease in leases}
        asked = dict(wants)
        for host, _ in wants:
            self._leasing.discard(host)
            if host not in got:
                self._recheck = True
        for lease in leases:
            if self._held.count(lease.host) >= asked.get(lease.host, 1):
                # more than asked for: put back untried
                self._actions.append(SkippedUrl(lease, "requeued", now))
                continue
            if lease.host not in self._held:
                self._fresh.append(lease.host)
            self._held.add(lease)

    def frontier_changed(self) -> None:
        """URLs were added or put back: refill at the next chance."""
        self._refill_due = True

    # -- events ------------------------------------------------------------------------
    def on_fetch_done(
        self,
        host: str,
        now: float,
        outcome: Outcome,
        *,
        latency: float,
        retry_after: float | None,
        extra_gap: float = 0.0,
    ) -> float:
        """Feed an outcome to the host's limiter; returns the host's next ready time,
        ``extra_gap`` seconds later than politeness alone asks (never earlier)."""
        lim = self.limiter(host)
        lim.on_finish(now, outcome, latency=latency, retry_after=retry_after)
        self._note(host, lim, now)
        ready = lim.ready_at() + max(0.0, extra_gap)
        if host in self._busy and host not in self._robots_out:
            self._push(host, ready)
        return ready

    def on_not_sent(self, host: str, now: float) -> float:
        """A page job handed out was never sent (its lease was no longer safe to use);
        returns the host's next ready time."""
        lim = self.limiter(host)
        lim.on_cancel(now)
        self._note(host, lim, now)
        ready = lim.ready_at()
        if host in self._busy and host not in self._robots_out:
            self._push(host, ready)
        return ready

    def on_robots_done(
        self,
        host: str,
        rules: RobotsRules,
        now: float,
        outcome: Outcome,
        latency: float,
        saved: dict[str, object] | None = None,
    ) -> None:
        """A robots.txt fetch ended; ``saved``: the verdict to persist (``robots_state``)."""
        self.robots.put(host, rules)
        lim = self.limiter(host)
        self._apply_delay(host, lim, rules)
        lim.on_finish(now, outcome, latency=latency, retry_after=None)
        self._note(host, lim, now)
        self._busy.discard(host)
        self._robots_out.discard(host)
        if saved is not None:
            self._to_save[host] = HostState(robots=saved, wait=wait_of(lim, now))
        if host in self._held:  # a host given up is decided at once, while its verdict holds
            gave_up = given_up(rules, self.params.robots_give_up)
            self._push(host, now if gave_up else lim.ready_at())

    def _apply_delay(self, host: str, lim: HostLimiter, rules: RobotsRules) -> None:
        # A site asking for more than crawl_delay_max between requests still gets its full
        # delay (never hammered); it is reported as parked.
        delay, parked = clamp_crawl_delay(rules.crawl_delay, self.params.crawl_delay_max)
        lim.crawl_delay = delay
        if parked:
            self.parked.add(host)
        else:
            self.parked.discard(host)

    def _note(self, host: str, lim: HostLimiter, now: float) -> None:
        st = lim.statistics()
        if not st.in_flight:
            self._active.discard(host)
        if held_back(lim, st, now):
            self._throttled.add(host)
        else:
            self._throttled.discard(host)

    # -- deciding ----------------------------------------------------------------------
    def decide(self, now: float, waiting: int) -> Decision:
        """The next thing to do at ``now`` with ``waiting`` fetch slots asking for work."""
        if not self._actions and not self.paused and self.page_budget > 0 and waiting > 0:
            if self._refill_while_served(now):
                return self._refill(now)
            self._scan(now, waiting)
        if self._actions:
            return self._actions.popleft()
        if self._to_save:
            states = tuple(self._to_save.items())
            self._to_save.clear()
            return SaveStates(states)
        if self.paused or self.page_budget <= 0 or waiting <= 0:
            return Wait(math.inf)
        top = self._ready.top()
        more = self._frontier_next is not None and self._frontier_next <= now
        since = now - self._last_refill
        recheck = self._recheck and since >= self.params.recheck_interval
        if top > now and (
            self._refill_due or more or recheck or since >= self.params.refill_interval
        ):
            return self._refill(now)
        until = min(top, self._last_refill + self.params.refill_interval)
        if self._recheck:
            until = min(until, self._last_refill + self.params.recheck_interval)
        if self._frontier_next is not None:
            until = min(until, self._frontier_next)
        return Wait(until)

    def _refill(self, now: float) -> Refill:
        self._last_refill = now
        self._refill_due = self._recheck = False
        exclude = self._ready.hosts() | self._busy | self._leasing | set(self._held.hosts())
        return Refill(self.params.refill_batch, frozenset(exclude))

    def _refill_while_served(self, now: float) -> bool:
        """Under the importance order, hosts not held yet compete with the held ones: a
        refill every ``refill_interval`` even while held hosts are ready, up to
        ``max_ready_hosts`` hosts in the heap."""
        return (
            self._inlinks is not None
            and now - self._last_refill >= self.params.refill_interval
            and len(self._ready) < self.params.max_ready_hosts
            and self._ready.top() <= now
        )

    def _scan(self, now: float, waiting: int) -> None:
        jobs = 0
        wants: list[tuple[str, int]] = []
        room = min(waiting, self.params.lease_batch)
        while self._fresh and jobs < room and self.page_budget > 0:
            host = self._fresh.popleft()
            if host in self._held and host not in self._ready:
                jobs += self._decide_host(host, now) == "job"
        while self._ready.top() <= now and jobs + len(wants) < room and self.page_budget > 0:
            host = self._ready.pop(now)
            self._parser_wait.discard(host)
            got = self._decide_host(host, now)
            if got == "lease":
                p = self.params
                n = lease_count(self.limiter(host).gap(), p.lease_ahead, p.lease_horizon)
                wants.append((host, max(1, int(min(self.page_budget, n)))))
                self._leasing.add(host)
            elif got is not None:
                jobs += 1
        if wants:
            self._actions.append(LeaseFor(tuple(wants)))

    def _decide_host(self, host: str, now: float) -> str | None:
        """Append what ``host`` needs to the actions: "lease" when it needs a URL first."""
        optout = self._optout is not None and self._optout.blocks(host)
        stop = "opted-out" if optout else self.overrides.stop_reason(host)
        if stop is not None:  # opted out, excluded or over its budget: final
            self._final(host, stop)
            return None
        lim = self.limiter(host)
        known = self.robots.get(host, now)
        # given up: final, no request, so no wait for the host's turn
        if given_up(known, self.params.robots_give_up):
            self._final(host, "robots-unreachable")
            return None
        if not lim.can_start(now):
            self._push(host, lim.ready_at())
            return None
        held = self._held.first(host)
        if known is not None and known.kind is RobotsKind.BLOCKED:
            # the address guard refused the host's address: final, its URLs fail at once
            self._final(host, "blocked-address")
            return None
        if known is not None and known.kind is RobotsKind.DISALLOW_ALL:
            # robots.txt unreachable or 5xx (RFC 9309 2.3.1.3): wait for its retry time
            for url in self._held.pop_all(host):
                self._actions.append(SkippedUrl(url, "robots-unavailable", known.expires_at))
            self._push(host, known.expires_at)
            return None
        if held is None:
            return "lease"
        if known is None:  # the held URL waits for the robots.txt verdict
            lim.on_start(now)
            self._active.add(host)
            self._busy.add(host)
            self._robots_out.add(host)
            scheme = held.url.split(":", 1)[0]
            self._actions.append(FetchRobots(host, f"{scheme}://{host}/robots.txt"))
            return "job"
        if self._waits_for_parser is not None and self._waits_for_parser(host):
            # its last page still waits in the parse queue: its next fetch waits too (a
            # look every recheck_interval), so that when parsing sets the pace, hosts
            # share fetch starts the way the parse queue shares the parser, instead of
            # the hosts ready longest taking every start. It goes as soon as the page leaves
            # the queue (``parser_took``); the look is the fallback
            self._parser_wait.add(host)
            self._push(host, now + self.params.recheck_interval)
            return None
        self._held.pop(host)
        if self._url_refusal is not None and self._url_refusal(held.url) == EXCLUDED:
            self._actions.append(SkippedUrl(held, EXCLUDED, None))
            self._push(host, now)  # no request: its next URL may go at once
            return None
        if not known.allowed(held.url):
            self._actions.append(SkippedUrl(held, ROBOTS_DISALLOWED, None))
            self._push(host, now)  # its next URL: held, or in the next lease batch
            return None
        retry = held.attempts > 0
        self.page_budget -= 1
        self.overrides.on_fetch(host)
        self._served[host] = self._served.get(host, 0) + 1
        lim.on_start(now, retry=retry)
        self._active.add(host)
        self._push(host, lim.ready_at())
        self._actions.append(FetchPage(held, retry))
        return "job"

    def refuse_urls(self, url_refusal: Callable[[str], str | None]) -> None:
        """Drop, when leased, the URLs ``url_refusal`` says are excluded (settled without
        a fetch, note ``excluded``): exclusions added after they were queued."""
        self._url_refusal = url_refusal

    def _final(self, host: str, reason: str) -> None:
        for url in self._held.pop_all(host):
            self._actions.append(SkippedUrl(url, reason, None))
        self._actions.append(DropHost(host, reason))

    # -- pressure ----------------------------------------------------------------------
    def host_pressure(self, now: float, top: int = 20) -> HostPressure:
        """Hosts known, in flight and parked, and the ``top`` most throttled (filled up with
        the most recently used when fewer are throttled); costs O(active + throttled)."""
        watched = self._active | self._throttled
        return host_pressure(self._limiters, watched, self.parked, now, top)
