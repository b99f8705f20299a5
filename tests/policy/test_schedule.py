"""The scheduler's pure core: decisions from values and ``now``, no IO, no sleeping."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from headway.frontier.store import LeasedUrl
from headway.policy import hoststate
from headway.policy.hoststate import HostState, HostWait
from headway.policy.outcome import Outcome
from headway.policy.politeness import HostLimitParams
from headway.policy.robots import RobotsKind, RobotsRules, robots_from_response
from headway.policy.schedule import (
    Decision,
    DropHost,
    FetchPage,
    FetchRobots,
    LeaseFor,
    Refill,
    SaveStates,
    ScheduleCore,
    ScheduleParams,
    SkippedUrl,
    Wait,
)
from headway.urls.scope import OptOut

UA = "testbot/1.0 (+https://example.org/bot)"
T0 = 1_000.0
_ids = iter(range(1, 10**9))


def lease(host: str, path: str = "/", attempts: int = 0) -> LeasedUrl:
    return LeasedUrl(next(_ids), f"http://{host}{path}", host, 0, 0, 0, None, attempts, T0 + 60)


def allow_all(now: float = T0) -> RobotsRules:
    return RobotsRules(RobotsKind.ALLOW_ALL, now, now + 86400)


def core(gap: float = 1.0, ahead: int = 1, **kw: object) -> ScheduleCore:
    params = ScheduleParams(
        limits=HostLimitParams(min_gap=gap, ceiling=1),
        crawl_delay_max=30,
        user_agent=UA,
        lease_ahead=ahead,
    )
    return ScheduleCore(params, **kw)  # type: ignore[arg-type]


def offer(c: ScheduleCore, hosts: list[str], now: float = T0) -> None:
    assert isinstance(c.decide(now, 1), Refill)
    c.offer_hosts([(h, now) for h in hosts], None, {}, now)


def quiet(c: ScheduleCore, now: float, waiting: int = 1) -> Decision:
    """The first decision at ``now`` that is not a refill (refills answered with none)."""
    d = c.decide(now, waiting)
    while isinstance(d, Refill):
        c.offer_hosts([], None, {}, now)
        d = c.decide(now, waiting)
    return d


def known(c: ScheduleCore, *hosts: str) -> None:
    for h in hosts:
        c.robots.put(h, allow_all())


def test_ready_hosts_are_leased_in_one_batch_bounded_by_waiting_slots() -> None:
    c = core()
    hosts = [f"h{i}.test" for i in range(10)]
    known(c, *hosts)
    offer(c, hosts)
    d = c.decide(T0, waiting=4)
    assert isinstance(d, LeaseFor)
    assert d.wants == tuple((h, 1) for h in hosts[:4])
    c.offer_leases(d.wants, [lease(h) for h, _ in d.wants], T0)
    jobs = [c.decide(T0, waiting=4) for _ in range(4)]
    assert [type(j) for j in jobs] == [FetchPage] * 4
    assert sorted(j.lease.host for j in jobs if isinstance(j, FetchPage)) == hosts[:4]


def test_a_host_whose_page_waits_for_a_parser_is_not_fetched_until_it_left() -> None:
    """When parsing sets the pace, a host's next fetch waits while its last page waits in
    the parse queue (looked at again every recheck_interval), so a host ready for long
    with many URLs does not take fetch starts from a host whose pages parse at once."""
    waiting = {"costly.test"}
    c = core(gap=0.2, waits_for_parser=lambda host: host in waiting)
    hosts = ["costly.test", "ordinary.test"]
    known(c, *hosts)
    offer(c, hosts)
    d = c.decide(T0, waiting=2)
    assert isinstance(d, LeaseFor)
    c.offer_leases(d.wants, [lease(h) for h, _ in d.wants], T0)
    first = quiet(c, T0, waiting=2)
    assert isinstance(first, FetchPage) and first.lease.host == "ordinary.test"
    assert quiet(c, T0, waiting=2) == Wait(T0 + 0.1)
    assert quiet(c, T0 + 0.1, waiting=2) == Wait(T0 + 0.2)  # still waiting for a parser
    waiting.clear()  # its page was taken by a parser
    later = quiet(c, T0 + 0.2, waiting=2)
    assert isinstance(later, FetchPage) and later.lease.host == "costly.test"


def test_a_host_waiting_for_a_parser_goes_when_its_page_leaves_the_queue() -> None:
    """The look every recheck_interval is a fallback: the moment the parse queue hands
    the host's page to a parser (``parser_took``), the host is ready again; a host
    that was not waiting for a parser is not moved, and its stale heap entry is
    dropped without a second fetch."""
    waiting = {"a.test"}
    c = core(gap=0.0, ahead=3, waits_for_parser=lambda host: host in waiting)
    known(c, "a.test", "b.test")
    offer(c, ["a.test"])
    d = c.decide(T0, waiting=2)
    assert isinstance(d, LeaseFor)
    c.offer_leases(d.wants, [lease("a.test", f"/{n}") for n in range(3)], T0)
    assert quiet(c, T0, waiting=2) == Wait(T0 + 0.1)  # a's page waits for a parser
    assert c.parser_took("b.test", T0 + 0.01) is False  # b waited for nothing
    waiting.clear()
    assert c.parser_took("a.test", T0 + 0.01) is True
    assert c.hosts_ready(T0 + 0.01) == 1 and c.hosts_waiting(T0 + 0.01) == 0
    first = quiet(c, T0 + 0.01, waiting=2)
    assert isinstance(first, FetchPage) and first.lease.host == "a.test"
    c.on_fetch_done("a.test", T0 + 0.02, Outcome.OK, latency=0.01, retry_after=None)
    second = quiet(c, T0 + 0.02, waiting=2)
    assert isinstance(second, FetchPage) and second.lease.host == "a.test"
    # the old entry (T0 + 0.1) is stale: when its time comes, nothing extra is fetched
    c.on_fetch_done("a.test", T0 + 0.03, Outcome.OK, latency=0.01, retry_after=None)
    third = quiet(c, T0 + 0.2, waiting=2)
    assert isinstance(third, FetchPage) and third.lease.host == "a.test"
    assert not isinstance(quiet(c, T0 + 0.2, waiting=2), FetchPage)  # a holds no more


def test_a_host_without_a_url_waits_for_the_frontier_to_offer_it_again() -> None:
    c = core()
    known(c, "a.test")
    offer(c, ["a.test"])
    d = c.decide(T0, 1)
    assert isinstance(d, LeaseFor)
    c.offer_leases(d.wants, [], T0)
    nxt = c.decide(T0, 1)
    assert isinstance(nxt, Wait)
    assert c.decide(T0 + 1.0, 1) == Refill(256, frozenset())


def test_an_empty_lease_brings_the_next_refill_forward_but_never_loops() -> None:
    # a URL put back to wait (a revisit) may be due soon after its host's politeness
    # allowed a lease: the scheduler looks again within recheck_interval, not a whole
    # refill_interval, and never at once (a frontier that keeps offering a host it will
    # not lease cannot make it spin)
    c = core()
    known(c, "a.test")
    offer(c, ["a.test"])
    d = c.decide(T0, 1)
    assert isinstance(d, LeaseFor)
    c.offer_leases(d.wants, [], T0)
    assert c.decide(T0, 1) == Wait(T0 + 0.1)
    assert c.decide(T0 + 0.1, 1) == Refill(256, frozenset())
    c.offer_hosts([], None, {}, T0 + 0.1)
    assert c.decide(T0 + 0.1, 1) == Wait(T0 + 1.1)


def test_robots_txt_first_then_the_held_url() -> None:
    c = core()
    offer(c, ["a.test"])
    d = c.decide(T0, 1)
    assert isinstance(d, LeaseFor)
    held = lease("a.test", "/page")
    c.offer_leases(d.wants, [held], T0)
    assert c.decide(T0, 2) == FetchRobots("a.test", "http://a.test/robots.txt")
    assert c.held() == 1
    assert isinstance(c.decide(T0, 1), Wait)  # the host is busy with its robots.txt
    rules = robots_from_response(status=200, body=b"", user_agent=UA, now=T0 + 0.2)
    c.on_robots_done("a.test", rules, T0 + 0.2, Outcome.OK, 0.2, saved={"k": 1})
    save = c.decide(T0 + 0.2, 1)
    assert isinstance(save, SaveStates) and save.states[0][0] == "a.test"
    assert isinstance(c.decide(T0 + 0.5, 1), Wait)  # the gap runs from the robots fetch
    assert c.decide(T0 + 1.0, 1) == FetchPage(held, False)
    assert c.held() == 0


def test_disallowed_url_is_skipped_and_the_host_leases_its_next() -> None:
    c = core()
    body = b"User-agent: *\nDisallow: /private\n"
    c.robots.put("a.test", robots_from_response(status=200, body=body, user_agent=UA, now=T0))
    offer(c, ["a.test"])
    d = c.decide(T0, 1)
    assert isinstance(d, LeaseFor)
    bad = lease("a.test", "/private/x")
    c.offer_leases(d.wants, [bad], T0)
    assert c.decide(T0, 1) == SkippedUrl(bad, "robots-disallowed", None)
    assert c.decide(T0, 1) == LeaseFor((("a.test", 1),))


def test_unreachable_robots_requeues_then_gives_up() -> None:
    c = core()
    down = RobotsRules(RobotsKind.DISALLOW_ALL, T0, T0 + 60, failures=1)
    c.robots.put("a.test", down)
    offer(c, ["a.test"])
    c.offer_leases([("a.test", 1)], [held := lease("a.test")], T0)
    assert c.decide(T0, 1) == SkippedUrl(held, "robots-unavailable", T0 + 60)
    c.robots.put("a.test", RobotsRules(RobotsKind.DISALLOW_ALL, T0, T0 + 120, failures=4))
    c.offer_leases([], [again := lease("a.test")], T0 + 60)
    assert c.decide(T0 + 60, 1) == SkippedUrl(again, "robots-unreachable", None)
    assert c.decide(T0 + 60, 1) == DropHost("a.test", "robots-unreachable")


def test_a_host_given_up_is_dropped_at_once_whatever_its_backoff() -> None:
    """The last robots.txt failure ends the host while its verdict holds: a backoff
    longer than the retry must not let the verdict expire and robots.txt be fetched
    again and again (a refused port backs off; a short --robots-retry-base retries)."""
    c = core()
    offer(c, ["a.test"])
    d = c.decide(T0, 1)
    assert isinstance(d, LeaseFor)
    c.offer_leases(d.wants, [held := lease("a.test")], T0)
    assert c.decide(T0, 2) == FetchRobots("a.test", "http://a.test/robots.txt")
    last = RobotsRules(RobotsKind.DISALLOW_ALL, T0 + 0.1, T0 + 0.2, failures=4)
    c.on_robots_done("a.test", last, T0 + 0.1, Outcome.CONNECTION_ERROR, 0.1)
    assert c.limiter("a.test").ready_at() > last.expires_at  # backing off past the retry
    assert quiet(c, T0 + 0.1) == SkippedUrl(held, "robots-unreachable", None)
    assert quiet(c, T0 + 0.1) == DropHost("a.test", "robots-unreachable")


def test_opted_out_host_is_dropped_without_a_fetch() -> None:
    c = core(optout=OptOut(["blocked.test"]))
    known(c, "blocked.test")
    offer(c, ["blocked.test"])
    assert c.decide(T0, 1) == DropHost("blocked.test", "opted-out")


def test_pause_and_budget_hand_out_nothing() -> None:
    c = core(page_budget=1)
    known(c, "a.test", "b.test")
    offer(c, ["a.test", "b.test"])
    c.paused = True
    assert c.decide(T0, 5) == Wait(math.inf)
    c.paused = False
    d = c.decide(T0, 5)
    assert isinstance(d, LeaseFor)
    c.offer_leases(d.wants, [lease(h) for h, _ in d.wants], T0)
    got = [c.decide(T0, 5) for _ in range(3)]
    assert sum(isinstance(g, FetchPage) for g in got) == 1
    assert c.decide(T0, 5) == Wait(math.inf)
    # the other host's lease will never be served: it must not keep the node from stopping
    assert c.held() == 0


def test_saved_state_means_no_robots_refetch_and_no_early_start() -> None:
    saved = hoststate.decode(
        hoststate.encode(
            HostState(
                robots=hoststate.robots_state(
                    robots_from_response(
                        status=200, body=b"User-agent: *\nDisallow: /x\n", user_agent=UA, now=T0
                    ),
                    b"User-agent: *\nDisallow: /x\n",
                ),
                wait=HostWait(ready_at=T0 + 30, backoff=8.0),
            )
        )
    )
    c = core()
    assert c.unknown(["a.test"]) == ["a.test"]
    assert isinstance(c.decide(T0 + 1, 1), Refill)
    c.offer_hosts([("a.test", T0)], None, {"a.test": saved}, T0 + 1)
    assert c.unknown(["a.test"]) == []
    assert isinstance(quiet(c, T0 + 29.9), Wait)  # the saved wait holds
    d = c.decide(T0 + 30, 1)
    assert isinstance(d, LeaseFor)
    c.offer_leases(
        d.wants,
        [
            page := lease("a.test", "/ok"),
        ],
        T0 + 30,
    )
    assert c.decide(T0 + 30, 1) == FetchPage(page, False)  # no robots.txt fetch
    assert c.limiter("a.test").statistics().backoff == 8.0
    robots = c.robots.get("a.test", T0 + 30)
    assert robots is not None and not robots.allowed("http://a.test/x/1")


def test_forgotten_limiters_hand_back_their_waits() -> None:
    params = ScheduleParams(limits=HostLimitParams(min_gap=1.0), crawl_delay_max=30, max_limiters=1)
    c = ScheduleCore(params)
    slow = c.limiter("slow.test")
    slow.on_start(T0)
    slow.on_finish(T0 + 0.1, Outcome.THROTTLED, latency=0.1, retry_after=100.0)
    c.limiter("other.test")
    (victim,) = c.forget_idle(T0 + 1)
    host, ready, wait = victim
    assert host == "slow.test" and ready >= T0 + 100.1
    assert wait is not None and wait.ready_at >= T0 + 100.1
    assert not c.knows("slow.test")


@settings(max_examples=60, deadline=None)
@given(
    steps=st.lists(st.tuples(st.floats(0.0, 3.0), st.integers(1, 4)), min_size=5, max_size=60),
    gap=st.floats(0.1, 2.0),
    ahead=st.sampled_from([1, 4]),
    ranked=st.booleans(),
)
def test_property_never_early_never_two_in_flight(
    steps: list[tuple[float, int]], gap: float, ahead: int, ranked: bool
) -> None:
    """Whatever the timing and the number of waiting slots, a host gets a fetch only one
    gap after its previous start, and never while one is in flight (ceiling 1), also
    when it is leased several URLs at once, and under the importance order (a host
    linked from many hosts is never served early for it)."""
    links = {"a.test": 50, "b.test": 0, "c.test": 3}
    c = core(gap=gap, ahead=ahead, inlinks=links.get if ranked else None)
    hosts = list(links)
    known(c, *hosts)
    now = T0
    c.decide(now, 1)
    c.offer_hosts([(h, now) for h in hosts], None, {}, now)
    last: dict[str, float] = {}
    in_flight: set[str] = set()
    for dt, waiting in steps:
        now += dt
        for h in list(in_flight):  # every fetch ends by the next step
            c.on_fetch_done(h, now, Outcome.OK, latency=0.01, retry_after=None)
            in_flight.discard(h)
        for _ in range(6):
            d: Decision = c.decide(now, waiting)
            if isinstance(d, LeaseFor):
                c.offer_leases(d.wants, [lease(h) for h, n in d.wants for _ in range(n)], now)
            elif isinstance(d, Refill):
                c.offer_hosts([(h, now) for h in hosts if h not in d.exclude], None, {}, now)
            elif isinstance(d, FetchPage):
                h = d.lease.host
                assert h not in in_flight
                assert now >= last.get(h, -math.inf) + gap - 1e-9
                last[h] = now
                in_flight.add(h)
            elif isinstance(d, Wait):
                break


def test_a_host_is_leased_the_urls_its_gap_allows_within_the_horizon() -> None:
    """One frontier call leases a host the fetches of its next few seconds; they are
    fetched one gap apart, in the frontier's order, without another lease call."""
    c = core(gap=1.0, ahead=4)
    known(c, "a.test")
    offer(c, ["a.test"])
    d = c.decide(T0, 1)
    assert d == LeaseFor((("a.test", 4),))  # 4 s horizon / 1 s gap
    urls = [lease("a.test", f"/{i}") for i in range(4)]
    c.offer_leases(d.wants, urls, T0)
    assert c.held() == 4
    fetched = []
    now = T0
    for i in range(4):
        job = quiet(c, now)
        assert job == FetchPage(urls[i], False), (i, job)
        fetched.append(now)
        assert isinstance(quiet(c, now + 0.5), Wait)  # not before the gap
        c.on_fetch_done("a.test", now + 0.1, Outcome.OK, latency=0.1, retry_after=None)
        now += 1.0
    assert c.held() == 0
    assert fetched == [T0, T0 + 1.0, T0 + 2.0, T0 + 3.0]
    assert isinstance(quiet(c, now), LeaseFor)  # the next URLs, in one call again


def test_lease_count_follows_the_gap_the_ceiling_and_the_budget() -> None:
    slow = core(gap=10.0, ahead=4)  # a long gap: one URL at a time
    known(slow, "a.test")
    offer(slow, ["a.test"])
    assert slow.decide(T0, 1) == LeaseFor((("a.test", 1),))
    fast = core(gap=0.0, ahead=4)
    known(fast, "a.test")
    offer(fast, ["a.test"])
    assert fast.decide(T0, 1) == LeaseFor((("a.test", 4),))
    budget = core(gap=1.0, ahead=4, page_budget=2)  # never more than the pages left
    known(budget, "a.test")
    offer(budget, ["a.test"])
    assert budget.decide(T0, 1) == LeaseFor((("a.test", 2),))


def test_every_held_url_is_settled_when_the_host_cannot_be_fetched() -> None:
    """robots.txt unreachable: all the host's held URLs go back to wait; opted out:
    all of them fail; none stays held."""
    c = core(gap=1.0, ahead=4)
    down = RobotsRules(RobotsKind.DISALLOW_ALL, T0, T0 + 60, failures=1)
    c.robots.put("a.test", down)
    offer(c, ["a.test"])
    urls = [lease("a.test", f"/{i}") for i in range(3)]
    c.offer_leases([("a.test", 3)], urls, T0)
    skips = [c.decide(T0, 1) for _ in range(3)]
    assert skips == [SkippedUrl(u, "robots-unavailable", T0 + 60) for u in urls]
    assert c.held() == 0
    out = core(gap=1.0, ahead=4, optout=OptOut(["b.test"]))
    known(out, "b.test")
    offer(out, ["b.test"])
    more = [lease("b.test", f"/{i}") for i in range(2)]
    out.offer_leases([("b.test", 2)], more, T0)
    got = [out.decide(T0, 1) for _ in range(3)]
    assert got == [
        *(SkippedUrl(u, "opted-out", None) for u in more),
        DropHost("b.test", "opted-out"),
    ]
    assert out.held() == 0


def test_more_urls_than_asked_for_go_back_untried() -> None:
    c = core(gap=1.0, ahead=4)
    known(c, "a.test")
    offer(c, ["a.test"])
    urls = [lease("a.test", f"/{i}") for i in range(3)]
    c.offer_leases([("a.test", 2)], urls, T0)
    assert c.held() == 2
    assert c.decide(T0, 1) == SkippedUrl(urls[2], "requeued", T0)


# -- the importance order between ready hosts --------------------------------------------


def _serve(c: ScheduleCore, now: float, hosts: list[str]) -> list[str]:
    """Hosts given a page at ``now``, one waiting slot at a time, until none is ready;
    refills answered with ``hosts`` not excluded, leases with one URL each."""
    served: list[str] = []
    for _ in range(100):
        d = c.decide(now, 1)
        if isinstance(d, Refill):
            c.offer_hosts([(h, now) for h in hosts if h not in d.exclude], None, {}, now)
        elif isinstance(d, LeaseFor):
            c.offer_leases(d.wants, [lease(h) for h, _ in d.wants], now)
        elif isinstance(d, FetchPage):
            served.append(d.lease.host)
            c.on_fetch_done(d.lease.host, now, Outcome.OK, latency=0.01, retry_after=None)
        elif isinstance(d, Wait):
            break
    return served


def test_ready_hosts_go_by_importance_not_by_ready_time() -> None:
    """Capacity-bound (one slot): of the hosts ready, the one linked from the most hosts
    goes first, whatever the order they became ready in."""
    links = {"late.test": 9, "early.test": 0, "mid.test": 2}
    c = core(gap=1.0, inlinks=links.get)
    known(c, *links)
    assert isinstance(c.decide(T0, 1), Refill)
    c.offer_hosts(
        [("early.test", T0 - 3), ("mid.test", T0 - 2), ("late.test", T0 - 1)], None, {}, T0
    )
    assert _serve(c, T0, []) == ["late.test", "mid.test", "early.test"]


def test_without_the_importance_order_ready_hosts_go_by_ready_time() -> None:
    c = core(gap=1.0)
    known(c, "late.test", "early.test")
    assert isinstance(c.decide(T0, 1), Refill)
    c.offer_hosts([("early.test", T0 - 3), ("late.test", T0 - 1)], None, {}, T0)
    assert _serve(c, T0, []) == ["early.test", "late.test"]


def test_a_host_served_gives_way_to_one_not_served_yet() -> None:
    """Importance is (1 + in-link hosts) / (1 + pages taken): a host linked from 2 hosts
    gets about three pages for each page of a host linked from none."""
    links = {"big.test": 2, "small.test": 0}
    c = core(gap=0.0, inlinks=links.get)
    known(c, *links)
    served = _serve(c, T0, list(links))
    assert served[:2] == ["big.test", "big.test"]
    assert served[:8].count("big.test") == 6 and served[:8].count("small.test") == 2


def test_a_more_important_host_never_goes_before_its_gap() -> None:
    """The important host waits out its gap; a less important ready host goes in its
    place (importance chooses only among what politeness allows)."""
    links = {"hub.test": 40, "tail.test": 0}
    c = core(gap=1.0, inlinks=links.get)
    known(c, *links)
    first = _serve(c, T0, list(links))
    assert first == ["hub.test", "tail.test"]
    assert _serve(c, T0 + 0.5, list(links)) == []  # both inside their gap
    assert _serve(c, T0 + 1.0, list(links)) == ["hub.test", "tail.test"]


def test_an_important_host_not_ready_yet_never_goes_before_its_time() -> None:
    """Capacity-bound, a host linked from 40 hosts whose gap ends in 0.3 s waits for
    it; the ready host linked from none goes now."""
    links = {"hub.test": 40, "tail.test": 0}
    c = core(gap=1.0, inlinks=links.get)
    known(c, *links)
    assert isinstance(c.decide(T0, 1), Refill)
    c.offer_hosts([("hub.test", T0 + 0.3), ("tail.test", T0)], None, {}, T0)
    assert _serve(c, T0, []) == ["tail.test"]
    assert _serve(c, T0 + 0.3, []) == ["hub.test"]


def test_hosts_not_held_compete_while_held_hosts_are_ready() -> None:
    """Under the importance order, a refill comes every refill_interval even while a
    held host is ready, so a host the frontier offers later can go first."""
    links = {"held.test": 0, "new.test": 30}
    c = core(gap=0.0, inlinks=links.get)
    known(c, *links)
    assert _serve(c, T0, ["held.test"])[:1] == ["held.test"]
    assert set(_serve(c, T0 + 0.5, ["held.test", "new.test"])) == {"held.test"}
    later = _serve(c, T0 + 1.0, ["held.test", "new.test"])
    # at most the one URL held already leased goes first
    assert later.index("new.test") <= 1


def test_the_ready_order_refills_only_when_no_held_host_is_ready() -> None:
    c = core(gap=0.0)
    known(c, "held.test", "new.test")
    _serve(c, T0, ["held.test"])
    assert set(_serve(c, T0 + 5.0, ["held.test", "new.test"])) == {"held.test"}
