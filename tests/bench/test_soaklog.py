"""The soak's log analysis on synthetic logs: duplicates and what explains them, gap and
robots violations, lost pages, recovery and the checks of a thawed node."""

from __future__ import annotations

from headway.bench.soaklog import (
    Explained,
    Fault,
    FaultKind,
    Request,
    coverage,
    duplicates,
    gap_violations,
    host_resume,
    recovery,
    robots_violations,
    thaw_intrusions,
)


def req(
    at: float, host: str = "a.sim", path: str = "/p/1", node: str = "n1", **kw: object
) -> Request:
    took = float(kw.pop("took", 0.01))  # type: ignore[arg-type]
    status = int(kw.pop("status", 200))  # type: ignore[call-overload]
    return Request(at, at + took, host, path, status, node)


def url_of(host: str, path: str) -> str:
    return f"http://{host}{path}"


def test_a_gap_shorter_than_the_delay_is_found() -> None:
    log = [req(0.0, path="/robots.txt"), req(1.0), req(2.0, path="/p/2"), req(2.5, path="/p/3")]
    found = gap_violations(log, lambda h: 1.0, 1.0)
    assert [(v.before.path, v.after.path, v.overlap) for v in found] == [("/p/2", "/p/3", False)]
    assert abs(found[0].gap - 0.5) < 1e-9


def test_gaps_that_keep_the_delay_are_not_violations() -> None:
    log = [req(0.0, path="/robots.txt"), req(1.0), req(2.0, path="/p/2"), req(3.0, path="/p/3")]
    assert gap_violations(log, lambda h: 1.0, 1.0) == []


def test_two_requests_in_flight_at_once_are_an_overlap_even_after_the_delay() -> None:
    # a slow answer (5 s) and the next request after the 1 s delay: overlapping
    log = [req(0.0, took=5.0), req(1.5, path="/p/2", node="n2")]
    (v,) = gap_violations(log, lambda h: 1.0, 1.0)
    assert v.overlap and v.after.node == "n2"


def test_a_host_crawl_delay_is_held_after_robots_but_not_before() -> None:
    # robots.txt -> first page: the base delay (0.5); then the host's Crawl-delay (2.0)
    log = [req(0.0, path="/robots.txt"), req(0.6), req(2.0, path="/p/2")]
    (v,) = gap_violations(log, lambda h: 2.0, 0.5)
    assert (v.before.path, v.after.path, v.delay) == ("/p/1", "/p/2", 2.0)


def test_hosts_are_checked_apart() -> None:
    log = [req(0.0, host="a.sim"), req(0.1, host="b.sim"), req(0.2, host="c.sim")]
    assert gap_violations(log, lambda h: 1.0, 1.0) == []


def test_robots_violations_are_the_disallowed_page_requests() -> None:
    log = [req(0.0, path="/robots.txt"), req(1.0, path="/p/1"), req(2.0, path="/private/x")]
    found = robots_violations(log, lambda host, path: not path.startswith("/private/"))
    assert [r.path for r in found] == ["/private/x"]


def test_coverage_splits_fetched_failed_and_lost() -> None:
    pages = frozenset(url_of("a.sim", p) for p in ("/p/1", "/p/2", "/p/3"))
    log = [req(0.0, path="/p/1"), req(1.0, path="/p/2", status=503), req(2.0, path="/x")]
    c = coverage(log, url_of, pages)
    assert c.fetched == {url_of("a.sim", "/p/1")}
    assert c.failed == {url_of("a.sim", "/p/2")}
    assert c.lost == {url_of("a.sim", "/p/3")}
    assert c.extra == 1


def test_a_duplicate_after_the_first_fetchers_kill_is_explained_by_it() -> None:
    kill = Fault(10.0, FaultKind.NODE_KILL, "n1")
    log = [req(9.0, node="n1"), req(40.0, node="n2")]
    (d,) = duplicates(log, url_of, [kill], window=60.0)
    assert d.why is Explained.NODE_KILLED


def test_a_duplicate_with_no_fault_between_is_unexplained() -> None:
    kill = Fault(10.0, FaultKind.NODE_KILL, "n2")  # another node died, not the fetcher
    log = [req(9.0, node="n1"), req(40.0, node="n2")]
    (d,) = duplicates(log, url_of, [kill], window=60.0)
    assert d.why is Explained.UNEXPLAINED


def test_a_duplicate_long_before_the_kill_is_unexplained() -> None:
    kill = Fault(100.0, FaultKind.NODE_KILL, "n1")
    log = [req(9.0, node="n1"), req(140.0, node="n2")]
    (d,) = duplicates(log, url_of, [kill], window=60.0)
    assert d.why is Explained.UNEXPLAINED


def test_a_duplicate_around_a_freeze_or_a_lost_redis_master_is_explained() -> None:
    freeze = Fault(10.0, FaultKind.NODE_FREEZE, "n1", until=30.0)
    master = Fault(50.0, FaultKind.REDIS_KILL, "127.0.0.1:7000")
    log = [req(9.0, node="n1"), req(25.0, node="n2")]
    assert [d.why for d in duplicates(log, url_of, [freeze], 60.0)] == [Explained.NODE_FROZEN]
    log = [req(49.5, node="n3"), req(70.0, node="n2")]
    assert [d.why for d in duplicates(log, url_of, [master], 60.0)] == [Explained.REDIS_LOST]


def test_non_200_answers_and_robots_are_no_duplicates() -> None:
    log = [
        req(0.0, path="/robots.txt"),
        req(5.0, path="/robots.txt", node="n2"),
        req(1.0, status=503),
        req(8.0),
    ]
    assert duplicates(log, url_of, [], 60.0) == []


def test_recovery_is_the_time_until_the_rate_is_back() -> None:
    # 10 pages/s, nothing from 100 s to 130 s, then 10 pages/s again
    times = [i / 10 for i in range(1000)] + [130 + i / 10 for i in range(600)]
    back = recovery(times, 100.0)
    assert back is not None and 20.0 <= back <= 30.0
    assert recovery([i / 10 for i in range(2000)], 100.0) == 0.0
    assert recovery(times[:1000], 100.0) is None  # never came back


def test_host_resume_measures_the_wait_of_a_dead_nodes_hosts() -> None:
    log = [
        req(95.0, host="a.sim", node="n1"),
        req(96.0, host="b.sim", node="n1"),
        req(97.0, host="c.sim", node="n2"),
        req(150.0, host="a.sim", node="n2"),
        req(110.0, host="b.sim", node="n3"),
    ]
    log.sort(key=lambda r: r.arrival)
    assert host_resume(log, "n1", 100.0) == [10.0, 50.0]


def test_a_thawed_node_sending_a_url_taken_during_its_freeze_is_found() -> None:
    freeze = Fault(10.0, FaultKind.NODE_FREEZE, "n1", until=30.0)
    log = [
        req(20.0, host="a.sim", path="/p/9", node="n2"),  # reclaimed and fetched by n2
        req(30.5, host="a.sim", path="/p/9", node="n1"),  # n1 woke and sent it anyway
        req(31.0, host="a.sim", path="/p/5", node="n1"),  # another URL of the host: fine
        req(22.0, host="a.sim", path="/p/7", node="n2", status=503),  # n2 tried it...
        req(32.0, host="a.sim", path="/p/7", node="n1"),  # ... and n1 retried it: fine
    ]
    log.sort(key=lambda r: r.arrival)
    found = thaw_intrusions(log, freeze, url_of)
    assert [(r.host, r.path, r.node) for r in found] == [("a.sim", "/p/9", "n1")]
