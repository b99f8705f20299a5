"""Shard leasing of the Redis frontier: fair shares, joining, draining before a handover,
release at a clean stop, takeover after a dead node's TTL, and scheduling scope."""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from headway.frontier.redis import RedisFrontier
from headway.frontier.redis.keys import shard_of_host
from headway.frontier.store import Completion, Settle
from tests.frontier.conftest import TEST_LIMITS, entry
from tests.support.redisproc import RedisServer

SHARDS = 8
TTL = 0.9
_ids = itertools.count()

Open = Callable[..., RedisFrontier]


@pytest.fixture
def open_node(redis_server: RedisServer) -> Iterator[Open]:
    crawl = f"shards{next(_ids)}"
    opened: list[RedisFrontier] = []

    def _open(node: str, gap: float = 0.0) -> RedisFrontier:
        store = RedisFrontier(
            redis_server.url,
            crawl,
            node,
            TEST_LIMITS,
            shards=SHARDS,
            shard_ttl=TTL,
            handover_gap=gap,
        )
        opened.append(store)
        return store

    yield _open
    for store in opened:
        store.close()


def host_in(shard: int, avoid: int = -1) -> str:
    for i in range(10_000):
        h = f"h{i}.test"
        if shard_of_host(h, SHARDS) == shard and i != avoid:
            return h
    raise AssertionError("no host found")


def settle(*nodes: RedisFrontier, rounds: int = 3) -> None:
    for _ in range(rounds):
        for n in nodes:
            n.heartbeat()


def test_lone_node_holds_every_shard(open_node: Open) -> None:
    a = open_node("a")
    assert a.held_shards() == set(range(SHARDS))


def test_nodes_split_shards_fairly_and_disjointly(open_node: Open) -> None:
    nodes = [open_node(n) for n in ("a", "b", "c")]
    settle(*nodes)
    held = [n.held_shards() for n in nodes]
    assert set().union(*held) == set(range(SHARDS))
    assert sum(len(h) for h in held) == SHARDS  # disjoint
    assert all(len(h) <= 3 for h in held)  # ceil(8 / 3)


def test_joining_node_gets_shards_and_only_schedules_its_own(open_node: Open) -> None:
    a = open_node("a")
    hosts = [host_in(s) for s in range(SHARDS)]
    a.add([entry(f"http://{h}/") for h in hosts], now=0)
    assert {h for h, _ in a.ready_hosts(now=1, limit=100)} == set(hosts)
    b = open_node("b")
    settle(a, b)
    assert len(a.held_shards()) == len(b.held_shards()) == SHARDS // 2
    for node in (a, b):
        mine = {hosts[s] for s in node.schedulable_shards()}
        assert {h for h, _ in node.ready_hosts(now=1, limit=100)} == mine
        others = [h for h in hosts if h not in mine]
        # leasing a host of a shard held by the other node gives nothing
        assert node.lease_many([(h, 1) for h in others], now=1, lease_seconds=30) == []
    assert a.counts().leased == 0


def test_lease_script_refuses_a_shard_the_node_does_not_hold(open_node: Open) -> None:
    a = open_node("a")
    h = host_in(0)
    a.add([entry(f"http://{h}/")], now=0)
    b = open_node("b")
    settle(a, b)
    holder, other = (a, b) if 0 in a.held_shards() else (b, a)
    # the other node believes it may schedule shard 0 (a stale view): Redis still refuses
    other._leases._held[0] = 0.0
    assert other.lease_many([(h, 1)], now=1, lease_seconds=30) == []
    assert len(holder.lease_many([(h, 1)], now=1, lease_seconds=30)) == 1


def test_surplus_shard_is_released_only_after_its_leases_settle(open_node: Open) -> None:
    a = open_node("a")
    hosts = {s: host_in(s) for s in range(SHARDS)}
    a.add([entry(f"http://{h}/{i}") for h in hosts.values() for i in range(2)], now=0)
    leased = a.lease_many([(h, 1) for h in hosts.values()], now=0, lease_seconds=60)
    assert len(leased) == SHARDS
    b = open_node("b")
    settle(a, b)
    # a must give up half its shards but has a request in flight in every one: it stops
    # scheduling them and keeps their owner keys until the leases settle
    assert len(a.schedulable_shards()) == SHARDS // 2
    assert a.held_shards() == set(range(SHARDS))
    assert b.held_shards() == set()
    assert b.ready_hosts(now=1, limit=100) == []
    a.complete([Completion(u.id, Settle.DONE) for u in leased], [], now=1)
    settle(a, b)
    assert len(a.held_shards()) == len(b.held_shards()) == SHARDS // 2
    assert {h for h, _ in b.ready_hosts(now=1, limit=100)} == {hosts[s] for s in b.held_shards()}


def test_clean_close_releases_shards_at_once(open_node: Open) -> None:
    a = open_node("a")
    b = open_node("b")
    settle(a, b)
    assert 0 < len(b.held_shards()) < SHARDS
    a.close()
    b.heartbeat()
    assert b.held_shards() == set(range(SHARDS))


def test_dead_node_shards_and_expired_leases_move_after_the_ttl(open_node: Open) -> None:
    a = open_node("a")
    hosts = [host_in(s) for s in range(SHARDS)]
    a.add([entry(f"http://{h}/") for h in hosts], now=0)
    now = time.time()
    leased = a.lease_many([(h, 1) for h in hosts], now=now, lease_seconds=TTL)
    assert len(leased) == SHARDS
    a._leases._stop.set()  # a dies: no heartbeat, no release
    a._leases._thread.join()  # type: ignore[union-attr]
    b = open_node("b")
    assert b.held_shards() == set()  # a's owner keys are still live
    time.sleep(TTL + 0.2)
    b.heartbeat()
    assert b.held_shards() == set(range(SHARDS))
    assert b.reclaim_expired(now=time.time()) == SHARDS
    again = b.lease_many([(h, 5) for h in hosts], now=time.time(), lease_seconds=60)
    assert sorted(u.url for u in again) == sorted(u.url for u in leased)


def test_taken_shard_waits_for_the_old_holders_live_leases(open_node: Open) -> None:
    a = open_node("a")
    h = host_in(0)
    a.add([entry(f"http://{h}/1"), entry(f"http://{h}/2")], now=0)
    (inflight,) = a.lease_many([(h, 1)], now=time.time(), lease_seconds=60)
    a._leases._stop.set()  # a stalls: its shard keys expire while its request is in flight
    a._leases._thread.join()  # type: ignore[union-attr]
    time.sleep(TTL + 0.2)
    gap = 0.3
    b = open_node("b", gap)
    assert b.held_shards() == set(range(SHARDS))
    time.sleep(gap)
    assert 0 not in b.schedulable_shards()  # a's lease in shard 0 is still live
    assert 1 in b.schedulable_shards()
    assert b.ready_hosts(now=time.time(), limit=10) == []
    assert b.lease_many([(h, 1)], now=time.time(), lease_seconds=60) == []
    a.complete([Completion(inflight.id, Settle.DONE)], [], now=time.time())
    b.heartbeat()
    # a's last request started before its lease settled: the gap counts from now
    assert 0 not in b.schedulable_shards()
    time.sleep(gap)
    assert 0 in b.schedulable_shards()
    assert [u.url for u in b.lease_many([(h, 1)], now=time.time(), lease_seconds=60)] == [
        f"http://{h}/2"
    ]


def test_an_empty_frontier_is_reported_only_from_a_consistent_snapshot(
    open_node: Open, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A page's settlement (its shard: leased - 1) and its links' admission (other
    shards: queued + 1) land one after another; a read falling between them sees
    nothing queued and nothing leased, which must not end the crawl."""
    from headway.frontier.redis import counts as counts_module
    from headway.frontier.redis.counts import TOTALS
    from headway.frontier.store import FrontierCounts

    a = open_node("a")
    empty = FrontierCounts(0, 0, 5, 0, 6, 0, {"host-budget": 0, "frontier-full": 0})
    busy = FrontierCounts(1, 0, 5, 0, 6, 1, {"host-budget": 0, "frontier-full": 0})

    def shard_rows(counts: FrontierCounts) -> Callable[..., Any]:
        """A read of every shard asked for, the first holding ``counts``, the rest 0."""
        row = dict(queued=counts.queued, leased=counts.leased, done=counts.done, seen=counts.seen)
        first = (*(row.get(name, 0) for name in TOTALS), counts.hosts_queued)
        return lambda _c, _k, shards: {s: first if s == 0 else (0,) * len(first) for s in shards}

    reads = iter([shard_rows(empty), shard_rows(busy), shard_rows(busy)])
    monkeypatch.setattr(counts_module, "read_shards", lambda *args: next(reads)(*args))
    assert a.counts().queued == 1
    reads = iter([shard_rows(empty), shard_rows(empty), shard_rows(empty)])
    assert a.counts() == empty
