"""Contract suite of ``FrontierStore``: every backend must pass it unchanged."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from headway.errors import StoreError
from headway.frontier.sqlite import SqliteFrontier
from headway.frontier.store import (
    REVISIT_PRIORITY,
    Completion,
    FrontierLimits,
    FrontierStore,
    Settle,
)
from tests.frontier.conftest import NODE, TEST_LIMITS, OpenStore, entry, lease


def urls(host: str, n: int, start: int = 0) -> list[str]:
    return [f"http://{host}/p{i}" for i in range(start, start + n)]


# -- admission and the seen filter ---------------------------------------------------


def test_add_counts_new_and_duplicates_within_and_across_batches(store: FrontierStore) -> None:
    first = store.add([entry(u) for u in [*urls("a.test", 3), "http://a.test/p0"]], now=0)
    assert (first.added, first.duplicates, first.evicted) == (3, 1, 0)
    assert sum(first.shed.values()) == 0
    again = store.add([entry(u) for u in urls("a.test", 5)], now=1)
    assert (again.added, again.duplicates) == (2, 3)
    c = store.counts()
    assert (c.queued, c.seen, c.hosts_queued) == (5, 5, 1)


def test_duplicate_stays_seen_after_it_was_fetched(store: FrontierStore) -> None:
    store.add([entry("http://a.test/x")], now=0)
    (leased,) = lease(store, "a.test", 5, now=0, lease_seconds=60)
    store.complete([Completion(leased.id, Settle.DONE)], [], now=1)
    assert store.add([entry("http://a.test/x")], now=2).duplicates == 1
    assert store.counts().queued == 0


# -- leasing -------------------------------------------------------------------------


def test_lease_best_priority_then_oldest_first(store: FrontierStore) -> None:
    store.add([entry("http://a.test/c", 5), entry("http://a.test/a", 1)], now=0)
    store.add([entry("http://a.test/b", 1), entry("http://a.test/d", 0)], now=0)
    got = lease(store, "a.test", 3, now=0, lease_seconds=30)
    assert [u.url for u in got] == ["http://a.test/d", "http://a.test/a", "http://a.test/b"]
    assert all(u.lease_expires == 30 and u.host == "a.test" for u in got)
    assert [u.url for u in lease(store, "a.test", 3, now=0, lease_seconds=30)] == [
        "http://a.test/c"
    ]
    assert lease(store, "a.test", 3, now=0, lease_seconds=30) == []


def test_lease_is_per_host_and_carries_the_entry(store: FrontierStore) -> None:
    store.add([entry("http://a.test/1", 2, depth=3, via="http://s.test/")], now=0)
    store.add([entry(u) for u in urls("b.test", 4)], now=0)
    (a,) = lease(store, "a.test", 10, now=0, lease_seconds=5)
    assert (a.url, a.depth, a.priority, a.via, a.attempts) == (
        "http://a.test/1",
        3,
        2,
        "http://s.test/",
        0,
    )
    assert a.fp == entry("http://a.test/1").fp
    assert len(lease(store, "b.test", 10, now=0, lease_seconds=5)) == 4
    assert lease(store, "nowhere.test", 10, now=0, lease_seconds=5) == []
    c = store.counts()
    assert (c.queued, c.leased, c.hosts_queued) == (0, 5, 0)


# -- host scheduling -----------------------------------------------------------------


def test_ready_hosts_ordered_by_ready_time_with_exclude_and_limit(store: FrontierStore) -> None:
    for h in ("a.test", "b.test", "c.test", "d.test"):
        store.add([entry(f"http://{h}/")], now=0)
    store.set_host_ready_at("a.test", 30)
    store.set_host_ready_at("b.test", 10)
    store.set_host_ready_at("c.test", 20)
    store.set_host_ready_at("idle.test", 1)  # no queued URL: never listed
    assert store.ready_hosts(now=25, limit=10) == [("d.test", 0), ("b.test", 10), ("c.test", 20)]
    assert store.ready_hosts(now=25, limit=2) == [("d.test", 0), ("b.test", 10)]
    assert store.ready_hosts(now=100, limit=2, exclude={"d.test", "b.test"}) == [
        ("c.test", 20),
        ("a.test", 30),
    ]
    assert store.next_ready_time() == 0
    assert store.next_ready_time(exclude={"d.test"}) == 10
    assert store.next_ready_time(exclude={"a.test", "b.test", "c.test", "d.test"}) is None


def test_next_ready_time_none_when_nothing_queued(store: FrontierStore) -> None:
    assert store.next_ready_time() is None
    store.add([entry("http://a.test/")], now=0)
    lease(store, "a.test", 1, now=0, lease_seconds=5)
    assert store.next_ready_time() is None
    assert store.ready_hosts(now=1e12, limit=10) == []


def test_set_host_ready_at_moves_host_both_ways(store: FrontierStore) -> None:
    store.add([entry("http://a.test/")], now=0)
    store.set_host_ready_at("a.test", 50)
    assert store.ready_hosts(now=49, limit=5) == []
    assert store.next_ready_time() == 50
    store.set_host_ready_at("a.test", 5)
    assert store.ready_hosts(now=49, limit=5) == [("a.test", 5)]


def test_retry_requeues_with_not_before_and_attempts(store: FrontierStore) -> None:
    store.add([entry("http://a.test/r"), entry("http://a.test/s", 9)], now=0)
    r, s = lease(store, "a.test", 2, now=0, lease_seconds=60)
    store.complete([Completion(r.id, Settle.RETRY, not_before=100)], [], now=1)
    store.complete([Completion(s.id, Settle.DONE)], [], now=1)
    assert store.ready_hosts(now=99, limit=5) == []
    assert store.next_ready_time() == 100
    assert lease(store, "a.test", 5, now=99, lease_seconds=60) == []
    assert store.ready_hosts(now=100, limit=5) == [("a.test", 100)]
    (again,) = lease(store, "a.test", 5, now=100, lease_seconds=60)
    assert (again.id, again.url, again.attempts) == (r.id, r.url, 1)


def test_host_ready_time_is_max_of_ready_at_and_not_before(store: FrontierStore) -> None:
    store.add([entry("http://a.test/1", not_before=40), entry("http://a.test/2", not_before=70)], 0)
    store.set_host_ready_at("a.test", 20)
    assert store.next_ready_time() == 40
    store.set_host_ready_at("a.test", 50)
    assert store.next_ready_time() == 50
    (first,) = lease(store, "a.test", 5, now=60, lease_seconds=5)
    assert first.url == "http://a.test/1"
    assert store.next_ready_time() == 70


# -- settling ------------------------------------------------------------------------


def test_complete_settle_kinds_and_idempotence(store: FrontierStore) -> None:
    store.add([entry(u) for u in urls("a.test", 3)], now=0)
    a, b, c = lease(store, "a.test", 3, now=0, lease_seconds=60)
    done = [Completion(a.id, Settle.DONE), Completion(b.id, Settle.FAILED)]
    res = store.complete(done, [entry("http://b.test/new"), entry(a.url)], now=1)
    assert (res.added, res.duplicates) == (1, 1)
    counts = store.counts()
    assert (counts.done, counts.failed, counts.leased, counts.queued) == (1, 1, 1, 1)
    # settling again, settling unknown ids and settling a QUEUED URL change nothing
    store.complete([*done, Completion(a.id, Settle.RETRY), Completion(99_999, Settle.DONE)], [], 2)
    (queued,) = lease(store, "b.test", 1, now=2, lease_seconds=60)
    store.complete([Completion(queued.id, Settle.RETRY)], [], now=3)
    store.complete([Completion(queued.id, Settle.DONE)], [], now=3)
    counts = store.counts()
    assert (counts.done, counts.failed, counts.leased, counts.queued) == (1, 1, 1, 1)
    store.complete([Completion(c.id, Settle.DONE), Completion(c.id, Settle.FAILED)], [], now=4)
    counts = store.counts()
    assert (counts.done, counts.failed, counts.leased) == (2, 1, 0)


# -- budgets and shedding ------------------------------------------------------------


def test_host_budget_keeps_exactly_the_best_priorities(open_store: OpenStore) -> None:
    budget = 40
    store = open_store(FrontierLimits(host_budget=budget, bloom_capacity=10_000))
    rng = random.Random(7)
    offered = [(f"http://big.test/{i}", rng.randrange(0, 25)) for i in range(3 * budget)]
    rng.shuffle(offered)
    added = evicted = shed = 0
    for i in range(0, len(offered), 17):
        res = store.add([entry(u, p) for u, p in offered[i : i + 17]], now=0)
        added += res.added
        evicted += res.evicted
        shed += res.shed["host-budget"]
        assert res.shed["frontier-full"] == 0
    leased = lease(store, "big.test", 10 * budget, now=0, lease_seconds=60)
    assert sorted(u.priority for u in leased) == sorted(p for _, p in offered)[:budget]
    assert added - evicted == budget
    assert evicted > 0
    assert shed == 2 * budget  # every offered URL is kept or shed (evicted ones count as shed)
    assert store.counts().shed == {"host-budget": shed, "frontier-full": 0}
    # shed URLs stay seen: offering them again admits nothing
    again = store.add([entry(u, 0) for u, _ in offered], now=1)
    assert (again.added, again.duplicates) == (0, len(offered))


def test_host_budget_counts_fetched_urls_and_never_evicts_them(open_store: OpenStore) -> None:
    store = open_store(FrontierLimits(host_budget=3, bloom_capacity=1000))
    store.add([entry(u, 5) for u in urls("a.test", 3)], now=0)
    for u in lease(store, "a.test", 3, now=0, lease_seconds=60):
        store.complete([Completion(u.id, Settle.DONE)], [], now=1)
    res = store.add([entry("http://a.test/better", 0), entry("http://b.test/other", 9)], now=2)
    assert (res.added, res.evicted, res.shed["host-budget"]) == (1, 0, 1)
    assert store.counts().queued == 1


def test_max_queued_sheds_lowest_priority_globally(open_store: OpenStore) -> None:
    store = open_store(FrontierLimits(max_queued=10, bloom_capacity=1000))
    offered = [(f"http://h{i % 5}.test/{i}", (i * 7) % 13) for i in range(25)]
    first = store.add([entry(u, p) for u, p in offered[:12]], now=0)
    second = store.add([entry(u, p) for u, p in offered[12:]], now=0)
    assert first.added + second.added - first.evicted - second.evicted == 10
    assert first.shed["frontier-full"] + second.shed["frontier-full"] == 15
    assert second.evicted > 0
    kept = []
    for h in range(5):
        kept += [u.priority for u in lease(store, f"h{h}.test", 100, now=0, lease_seconds=9)]
    assert sorted(kept) == sorted(p for _, p in offered)[:10]
    c = store.counts()
    assert (c.seen, c.shed["frontier-full"], c.shed["host-budget"]) == (25, 15, 0)


# -- leases --------------------------------------------------------------------------


def test_reclaim_expired_is_bounded_and_keeps_attempts(store: FrontierStore) -> None:
    store.add([entry(u) for u in urls("a.test", 5)], now=0)
    leased = lease(store, "a.test", 5, now=0, lease_seconds=10)
    assert store.reclaim_expired(now=10) == 0  # expires at 10: not yet expired
    assert store.reclaim_expired(now=11, limit=3) == 3
    assert store.counts().queued == 3
    assert store.reclaim_expired(now=11, limit=3) == 2
    again = lease(store, "a.test", 10, now=12, lease_seconds=10)
    assert sorted(u.id for u in again) == sorted(u.id for u in leased)
    assert all(u.attempts == 0 for u in again)
    # a reclaimed lease can no longer be settled by its old holder: it is leased again
    c = store.counts()
    assert (c.queued, c.leased) == (0, 5)


def test_release_own_leases(store: FrontierStore) -> None:
    store.add([entry(u) for u in urls("a.test", 3) + urls("b.test", 2)], now=0)
    lease(store, "a.test", 2, now=0, lease_seconds=1000)
    lease(store, "b.test", 2, now=0, lease_seconds=1000)
    assert store.release_own_leases() == 4
    c = store.counts()
    assert (c.queued, c.leased, c.hosts_queued) == (5, 0, 2)
    assert store.release_own_leases() == 0


def test_drop_host_fails_queued_urls_only(store: FrontierStore) -> None:
    store.add([entry(u) for u in urls("a.test", 4) + urls("b.test", 1)], now=0)
    (inflight,) = lease(store, "a.test", 1, now=0, lease_seconds=60)
    assert store.drop_host("a.test", "opt-out") == 3
    assert store.drop_host("a.test", "opt-out") == 0
    assert store.drop_host("unknown.test", "opt-out") == 0
    c = store.counts()
    assert (c.queued, c.leased, c.failed, c.hosts_queued) == (1, 1, 3, 1)
    assert [h for h, _ in store.ready_hosts(now=1, limit=10)] == ["b.test"]
    store.complete([Completion(inflight.id, Settle.DONE)], [], now=1)
    assert store.counts().done == 1


# -- batch leasing -------------------------------------------------------------------


def test_lease_many_takes_several_hosts_in_one_call(store: FrontierStore) -> None:
    store.add([entry(u, i) for i, u in enumerate(urls("a.test", 3))], now=0)
    store.add([entry(u) for u in urls("b.test", 2)], now=0)
    store.add([entry("http://c.test/late", not_before=50)], now=0)
    got = store.lease_many(
        [("b.test", 5), ("a.test", 2), ("c.test", 1), ("nowhere.test", 3), ("a.test", 0)],
        now=10,
        lease_seconds=20,
    )
    assert [u.url for u in got] == [*urls("b.test", 2), *urls("a.test", 2)]
    assert all(u.lease_expires == 30 for u in got)
    c = store.counts()
    assert (c.queued, c.leased, c.hosts_queued) == (2, 4, 2)
    assert store.lease_many([], now=10, lease_seconds=20) == []
    (last,) = store.lease_many([("a.test", 9)], now=10, lease_seconds=20)
    assert last.url == "http://a.test/p2"


# -- nodes and leases ----------------------------------------------------------------


def test_store_knows_its_node(open_store: OpenStore) -> None:
    assert open_store(node_id="n-17").node_id == "n-17"


def test_release_own_leases_leaves_other_nodes_leases(open_store: OpenStore) -> None:
    a = open_store(node_id="node-a")
    a.add([entry(u) for u in urls("a.test", 3) + urls("b.test", 2)], now=0)
    a_leased = lease(a, "a.test", 3, now=0, lease_seconds=100)
    a.close()
    b = open_store(node_id="node-b")
    lease(b, "b.test", 2, now=0, lease_seconds=100)
    assert b.release_own_leases() == 2
    c = b.counts()
    assert (c.queued, c.leased) == (2, 3)
    assert b.release_own_leases() == 0
    # node a died: its leases come back only when they expire, through any node's sweep
    assert b.reclaim_expired(now=100) == 0
    assert b.reclaim_expired(now=101) == 3
    again = lease(b, "a.test", 5, now=101, lease_seconds=100)
    assert sorted(u.id for u in again) == sorted(u.id for u in a_leased)
    b.close()
    a = open_store(node_id="node-a")
    assert a.release_own_leases() == 0  # what it held was reclaimed and leased by b
    assert a.counts().leased == 3


def test_extend_leases_keeps_own_leases_alive(store: FrontierStore) -> None:
    store.add([entry(u) for u in urls("a.test", 4)], now=0)
    leased = lease(store, "a.test", 4, now=0, lease_seconds=10)
    first, second, third, fourth = (u.id for u in leased)
    store.complete([Completion(fourth, Settle.DONE)], [], now=1)
    # the settled one and an unknown id are not extended
    assert store.extend_leases([first, second, fourth, 10**12], now=8, lease_seconds=10) == 2
    assert store.extend_leases([], now=8, lease_seconds=10) == 0
    # only the lease that was not extended expires at 10
    assert store.reclaim_expired(now=11) == 1
    assert store.extend_leases([third], now=11, lease_seconds=10) == 0  # reclaimed
    assert store.reclaim_expired(now=18) == 0
    assert store.reclaim_expired(now=18.5) == 2
    c = store.counts()
    assert (c.queued, c.leased, c.done) == (3, 0, 1)


def test_extend_leases_leaves_other_nodes_leases(open_store: OpenStore) -> None:
    a = open_store(node_id="node-a")
    a.add([entry(u) for u in urls("a.test", 2)], now=0)
    a_ids = [u.id for u in lease(a, "a.test", 2, now=0, lease_seconds=10)]
    a.close()
    b = open_store(node_id="node-b")
    assert b.extend_leases(a_ids, now=5, lease_seconds=100) == 0
    assert b.reclaim_expired(now=11) == 2
    b_ids = [u.id for u in lease(b, "a.test", 2, now=11, lease_seconds=10)]
    assert sorted(b_ids) == sorted(a_ids)
    b.close()
    a = open_store(node_id="node-a")
    # a's old leases were reclaimed and taken by b: a cannot extend b's leases
    assert a.extend_leases(a_ids, now=12, lease_seconds=100) == 0
    assert a.reclaim_expired(now=22) == 2


# -- payload digests and host state (shared by the nodes of a crawl) -----------------


def test_payloads_first_writer_wins_and_are_shared(open_store: OpenStore) -> None:
    a = open_store(node_id="node-a")
    assert a.find_payloads(["sha1:X"]) == {}
    a.put_payloads([("sha1:X", "http://a.test/1", "2026-01-01T00:00:00Z")])
    a.put_payloads(
        [
            ("sha1:X", "http://a.test/2", "2026-01-02T00:00:00Z"),
            ("sha1:Y", "http://a.test/3", "2026-01-03T00:00:00Z"),
            ("sha1:Y", "http://a.test/4", "2026-01-04T00:00:00Z"),
        ]
    )
    a.put_payloads([])
    want = {
        "sha1:X": ("http://a.test/1", "2026-01-01T00:00:00Z"),
        "sha1:Y": ("http://a.test/3", "2026-01-03T00:00:00Z"),
    }
    assert a.find_payloads(["sha1:X", "sha1:Z", "sha1:Y", "sha1:X"]) == want
    assert a.find_payloads([]) == {}
    a.close()
    b = open_store(node_id="node-b")
    assert b.find_payloads(["sha1:Y", "sha1:X"]) == want
    many = [(f"sha1:{i}", f"http://m.test/{i}", "2026-01-05T00:00:00Z") for i in range(2000)]
    b.put_payloads(many)
    assert len(b.find_payloads([d for d, _, _ in many])) == 2000


def test_host_states_are_replaced_and_shared(open_store: OpenStore) -> None:
    a = open_store(node_id="node-a")
    assert a.get_host_states(["a.test"]) == {}
    a.put_host_states([("a.test", '{"v": 1}'), ("b.test", "x")])
    a.put_host_states([("a.test", '{"v": 2}')])
    a.put_host_states([])
    assert a.get_host_states(["a.test", "b.test", "c.test"]) == {
        "a.test": '{"v": 2}',
        "b.test": "x",
    }
    a.close()
    b = open_store(node_id="node-b")
    assert b.get_host_states(["b.test", "a.test"]) == {"a.test": '{"v": 2}', "b.test": "x"}
    assert b.get_host_states([]) == {}


def test_host_counts_are_queued_and_admitted_per_host(store: FrontierStore) -> None:
    store.add([entry(u) for u in urls("a.test", 3)], now=0)
    store.add([entry(u) for u in urls("b.test", 2)], now=0)
    (leased,) = lease(store, "a.test", 1, now=0, lease_seconds=60)
    store.complete([Completion(leased.id, Settle.DONE)], [], now=1)
    assert store.host_counts(["a.test", "b.test", "c.test", "a.test"]) == {
        "a.test": (2, 3),
        "b.test": (2, 2),
    }
    assert store.host_counts([]) == {}


# -- recrawl -------------------------------------------------------------------------


def test_done_with_revisit_at_queues_the_url_again(store: FrontierStore) -> None:
    store.add([entry("http://a.test/r")], now=0)
    (first,) = lease(store, "a.test", 1, now=0, lease_seconds=60)
    assert (first.validators, first.fetches) == (None, 0)
    store.complete([Completion(first.id, Settle.RETRY, not_before=5)], [], now=1)
    (retry,) = lease(store, "a.test", 1, now=5, lease_seconds=60)
    assert (retry.attempts, retry.fetches) == (1, 0)
    done = Completion(retry.id, Settle.DONE, revisit_at=500, validators='{"etag": "e1"}')
    store.complete([done], [], now=6)
    c = store.counts()
    assert (c.queued, c.leased, c.done) == (1, 0, 0)
    assert store.next_ready_time() == 500
    assert lease(store, "a.test", 1, now=499, lease_seconds=60) == []
    (again,) = lease(store, "a.test", 1, now=500, lease_seconds=60)
    assert (again.id, again.attempts, again.fetches) == (first.id, 0, 1)
    assert again.validators == '{"etag": "e1"}'
    # validators None keeps what was stored; a plain DONE ends the URL
    store.complete([Completion(again.id, Settle.DONE, revisit_at=900)], [], now=501)
    (third,) = lease(store, "a.test", 1, now=900, lease_seconds=60)
    assert (third.fetches, third.validators) == (2, '{"etag": "e1"}')
    store.complete([Completion(third.id, Settle.DONE, validators="v3")], [], now=901)
    c = store.counts()
    assert (c.queued, c.leased, c.done) == (0, 0, 1)
    assert store.next_ready_time() is None
    assert store.add([entry("http://a.test/r")], now=902).duplicates == 1


def test_failed_and_requeue_keep_the_fetch_count(store: FrontierStore) -> None:
    store.add([entry("http://a.test/x")], now=0)
    (u,) = lease(store, "a.test", 1, now=0, lease_seconds=60)
    store.complete([Completion(u.id, Settle.DONE, revisit_at=10, validators="v")], [], now=1)
    (u,) = lease(store, "a.test", 1, now=10, lease_seconds=60)
    store.complete([Completion(u.id, Settle.REQUEUE, not_before=20)], [], now=11)
    (u,) = lease(store, "a.test", 1, now=20, lease_seconds=60)
    assert (u.fetches, u.attempts, u.validators) == (1, 0, "v")
    assert lease(store, "a.test", 1, now=20, lease_seconds=60) == []
    store.complete([Completion(u.id, Settle.FAILED, revisit_at=30)], [], now=21)
    c = store.counts()
    assert (c.queued, c.failed, c.done) == (0, 1, 0)


def test_parked_revisits_wait_aside_and_come_back_with_their_due_times(
    open_store: OpenStore,
) -> None:
    store = open_store()
    store.add([entry(u) for u in urls("a.test", 3)], now=0)
    store.add([entry("http://b.test/only")], now=0)
    got = {u.url: u for u in lease(store, "a.test", 3, now=0, lease_seconds=60)}
    (b,) = lease(store, "b.test", 1, now=0, lease_seconds=60)
    store.complete(
        [
            Completion(got["http://a.test/p0"].id, Settle.DONE, revisit_at=50, validators="v0"),
            Completion(got["http://a.test/p1"].id, Settle.DONE, revisit_at=900, validators="v1"),
            Completion(got["http://a.test/p2"].id, Settle.DONE),
            Completion(b.id, Settle.DONE, revisit_at=70, validators="vb"),
        ],
        [entry("http://a.test/new")],
        now=1,
    )
    c = store.counts()
    assert (c.queued, c.done, c.fetched, c.revisits_parked) == (4, 1, 4, 0)
    assert store.park_revisits() == 3
    assert store.park_revisits() == 0
    c = store.counts()
    # only the new URL is left in the queue: the crawl can end without the revisits
    assert (c.queued, c.leased, c.done, c.revisits_parked, c.hosts_queued) == (1, 0, 1, 3, 1)
    assert [h for h, _ in store.ready_hosts(now=1e9, limit=10)] == ["a.test"]
    (new,) = lease(store, "a.test", 10, now=1e9, lease_seconds=60)
    assert new.url == "http://a.test/new"
    store.complete([Completion(new.id, Settle.DONE)], [], now=2)
    assert store.next_ready_time() is None and store.counts().queued == 0
    # parked pages are never shed, and survive a reopen
    store.close()
    store = open_store()
    assert store.counts().revisits_parked == 3
    assert store.unpark_revisits() == 3
    assert store.unpark_revisits() == 0
    c = store.counts()
    assert (c.queued, c.revisits_parked, c.done, c.fetched) == (3, 0, 2, 5)
    assert store.next_ready_time() == 50
    assert lease(store, "a.test", 5, now=49, lease_seconds=60) == []
    (p0,) = lease(store, "a.test", 5, now=50, lease_seconds=60)
    assert (p0.url, p0.validators, p0.fetches) == ("http://a.test/p0", "v0", 1)
    (vb,) = lease(store, "b.test", 5, now=70, lease_seconds=60)
    assert (vb.url, vb.validators) == ("http://b.test/only", "vb")
    assert lease(store, "a.test", 5, now=899, lease_seconds=60) == []
    (p1,) = lease(store, "a.test", 5, now=900, lease_seconds=60)
    assert (p1.url, p1.validators, p1.fetches) == ("http://a.test/p1", "v1", 1)


# -- persistence ---------------------------------------------------------------------


def test_state_survives_close_and_reopen(open_store: OpenStore) -> None:
    limits = FrontierLimits(host_budget=2, bloom_capacity=1000)
    store = open_store(limits)
    store.add([entry(u, i) for i, u in enumerate(urls("a.test", 4))], now=0)  # 2 shed
    store.add([entry(u) for u in urls("b.test", 2)], now=0)
    (leased,) = lease(store, "b.test", 1, now=0, lease_seconds=60)
    store.set_host_ready_at("a.test", 77)
    store.set_meta("seeds", "loaded")
    store.set_meta("seeds", "done")
    before = store.counts()
    store.close()
    store = open_store(limits)
    assert store.counts() == before
    assert store.get_meta("seeds") == "done"
    assert store.get_meta("missing") is None
    assert store.release_own_leases() == 1
    assert store.ready_hosts(now=10, limit=5) == [("b.test", 0)]
    assert store.next_ready_time(exclude={"b.test"}) == 77
    res = store.add([entry(u) for u in urls("a.test", 4) + urls("b.test", 2)], now=1)
    assert (res.added, res.duplicates) == (0, 6)
    got = lease(store, "b.test", 5, now=1, lease_seconds=60)
    assert leased.id in {u.id for u in got}
    assert store.counts().shed == {"host-budget": 2, "frontier-full": 0}


def test_saturated_bloom_never_drops_a_new_url(open_store: OpenStore) -> None:
    store = open_store(FrontierLimits(bloom_capacity=1, bloom_error=0.5))
    offered = [entry(u) for u in urls("a.test", 3000)]
    added = sum(store.add(offered[i : i + 500], now=0).added for i in range(0, 3000, 500))
    assert added == 3000
    res = store.add(offered, now=0)
    assert (res.added, res.duplicates) == (0, 3000)
    assert store.counts().seen == 3000


def test_sqlite_refuses_another_schema_version(tmp_path: Path) -> None:
    store = SqliteFrontier(tmp_path / "f.db", TEST_LIMITS, node_id=NODE)
    store.set_meta("frontier_schema", "999")
    store.close()
    with pytest.raises(StoreError, match="schema 999"):
        SqliteFrontier(tmp_path / "f.db", TEST_LIMITS, node_id=NODE)
    with pytest.raises(StoreError, match="closed"):
        store.counts()


def test_default_limits_are_the_documented_ones() -> None:
    assert TEST_LIMITS.host_budget == FrontierLimits().host_budget == 10_000
    assert FrontierLimits().max_queued == 10_000_000


def _two_kinds(store: FrontierStore) -> tuple[list[str], list[str]]:
    """Host a.test with two revisits due (fetched once, due at 10 and 5) and two new
    URLs; the revisits have the better priority."""
    store.add([entry("http://a.test/old1", 0), entry("http://a.test/old2", 0)], now=0)
    first = lease(store, "a.test", 2, now=0, lease_seconds=60)
    due = {"http://a.test/old1": 10.0, "http://a.test/old2": 5.0}
    store.complete(
        [Completion(u.id, Settle.DONE, revisit_at=due[u.url], validators="v") for u in first],
        [entry("http://a.test/new1", 3), entry("http://a.test/new2", 4)],
        now=1,
    )
    return ["http://a.test/old2", "http://a.test/old1"], [
        "http://a.test/new1",
        "http://a.test/new2",
    ]


@pytest.mark.parametrize(
    ("revisits_first", "order"),
    [(None, "oonn"), (True, "oonn"), (False, "nnoo")],
)
def test_lease_order_of_due_revisits_and_new_urls(
    store: FrontierStore, revisits_first: bool | None, order: str
) -> None:
    old, _new = _two_kinds(store)
    got: list[str] = []
    for _ in range(4):
        (u,) = store.lease_many(
            [("a.test", 1)], now=20, lease_seconds=60, revisits_first=revisits_first
        )
        got.append(u.url)
        assert u.fetches == (1 if u.url in old else 0)
    # revisits first: most overdue first; by priority: old1 and old2 tie on priority and
    # the older row goes first
    kinds = "".join("o" if u in old else "n" for u in got)
    assert kinds == order
    if revisits_first:
        assert got[:2] == old
    assert store.lease_many([("a.test", 1)], now=20, lease_seconds=60) == []


def test_lease_preference_fills_with_the_other_kind_and_waits_for_due(
    store: FrontierStore,
) -> None:
    old, new = _two_kinds(store)
    # at 7 only old2 is due: revisits first takes it, then new URLs fill the batch
    got = store.lease_many([("a.test", 3)], now=7, lease_seconds=60, revisits_first=True)
    assert [u.url for u in got] == [old[0], *new]
    assert store.lease_many([("a.test", 3)], now=7, lease_seconds=60, revisits_first=False) == []
    (late,) = store.lease_many([("a.test", 3)], now=10, lease_seconds=60, revisits_first=False)
    assert late.url == old[1]
    c = store.counts()
    assert (c.queued, c.leased) == (0, 4)


def test_urls_waiting_for_their_revisit_are_never_shed(open_store: OpenStore) -> None:
    # fetched pages waiting for a revisit hold the best priority: when the frontier or a
    # host is full, new URLs are shed, never a due time
    store = open_store(FrontierLimits(max_queued=100, host_budget=3, bloom_capacity=1000))
    store.add([entry(u, 9) for u in urls("a.test", 3)], now=0)
    for u in lease(store, "a.test", 3, now=0, lease_seconds=60):
        store.complete([Completion(u.id, Settle.DONE, revisit_at=50, validators="v")], [], now=1)
    res = store.add([entry("http://a.test/better", 0)], now=2)
    assert (res.added, res.evicted, res.shed["host-budget"]) == (0, 0, 1)
    back = lease(store, "a.test", 10, now=50, lease_seconds=60)
    assert sorted(u.url for u in back) == urls("a.test", 3)
    assert {u.priority for u in back} == {REVISIT_PRIORITY}


def test_a_full_frontier_sheds_new_urls_before_waiting_revisits(open_store: OpenStore) -> None:
    store = open_store(FrontierLimits(max_queued=100, bloom_capacity=1000))
    hosts = [f"h{i}.test" for i in range(4)]
    store.add([entry(f"http://{h}/{j}", 9) for h in hosts for j in range(25)], now=0)
    for h in hosts:
        done = [
            Completion(u.id, Settle.DONE, revisit_at=50, validators="v")
            for u in lease(store, h, 25, now=0, lease_seconds=60)
        ]
        store.complete(done, [], now=1)
    assert store.counts().queued == 100
    res = store.add([entry(f"http://new.test/{j}", 0) for j in range(5)], now=2)
    assert (res.added - res.evicted, res.shed["frontier-full"]) == (0, 5)
    c = store.counts()
    assert (c.queued, c.shed["frontier-full"]) == (100, 5)
    for h in hosts:
        assert len(lease(store, h, 100, now=50, lease_seconds=60)) == 25


def test_validators_given_at_admission_reach_the_first_lease(store: FrontierStore) -> None:
    store.add([entry("http://a.test/h", validators='{"h": 1}'), entry("http://a.test/x")], now=0)
    got = {u.url: u for u in lease(store, "a.test", 2, now=0, lease_seconds=60)}
    assert (got["http://a.test/h"].validators, got["http://a.test/h"].fetches) == ('{"h": 1}', 0)
    assert got["http://a.test/x"].validators is None
    done = Completion(got["http://a.test/h"].id, Settle.DONE, revisit_at=5, validators="s")
    store.complete([done], [], now=1)
    (again,) = lease(store, "a.test", 1, now=5, lease_seconds=60)
    assert (again.validators, again.fetches) == ("s", 1)


# -- what a shared frontier adds -------------------------------------------------------


def test_a_shared_frontier_stores_the_seeds_once_for_every_node(
    open_store: OpenStore, request: pytest.FixtureRequest
) -> None:
    first = open_store()
    shared = first.shared()
    if request.node.callspec.params["open_store"] == "sqlite":
        assert shared is None  # one node's own frontier
        return
    assert shared is not None
    assert shared.get_meta("seeds") is None
    assert shared.set_meta_once("seeds", '["http://a.test/"]')
    assert not shared.set_meta_once("seeds", '["http://b.test/"]')
    assert shared.server_restarts == 0
    first.close()
    other = open_store(node_id="node-b").shared()
    assert other is not None
    assert not other.set_meta_once("seeds", '["http://c.test/"]')
    assert other.get_meta("seeds") == '["http://a.test/"]'
