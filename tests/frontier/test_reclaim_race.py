"""``reclaim_expired`` never takes back a lease that was extended after it was read.

The Redis frontier reads the expired leases of every shard first and requeues them in a
second step (a script per shard). Between the two, the lease's holder may extend it: the
requeue must then leave it alone. (SQLite reads and requeues in one transaction: there is
no between.) The tests put the holder's extension exactly in that gap."""

from __future__ import annotations

from typing import Any

import pytest

from headway.frontier.redis import RedisFrontier
from headway.frontier.store import Completion, Settle
from tests.frontier.conftest import OpenStore, entry, lease

REDIS_BACKENDS = ["redis", "redis-cluster"]


def _extend_between_read_and_requeue(
    monkeypatch: pytest.MonkeyPatch, sweeper: RedisFrontier, extend: Any
) -> list[int]:
    """Make ``sweeper``'s next requeue call ``extend()`` first; returns the number of
    expired leases each requeue was handed (what the sweep read)."""
    requeue = sweeper._requeue
    handed: list[int] = []

    def extended_first(found: list[tuple[int, str]], bound: str) -> int:
        handed.append(len(found))
        extend()
        return requeue(found, bound)

    monkeypatch.setattr(sweeper, "_requeue", extended_first)
    return handed


@pytest.mark.parametrize("open_store", REDIS_BACKENDS, indirect=True)
def test_lease_extended_after_the_sweep_read_it_is_not_taken_back(
    open_store: OpenStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    holder = open_store(node_id="node-a")
    assert isinstance(holder, RedisFrontier)
    holder.add([entry(f"http://a.test/{i}") for i in range(3)], now=0)
    leased = lease(holder, "a.test", 3, now=0, lease_seconds=10)
    assert len(leased) == 3
    kept, lost = leased[:2], leased[2]
    sweeper = open_store(node_id="node-b")
    assert isinstance(sweeper, RedisFrontier)
    # at 20 all three leases have expired; the holder extends two of them (to 80) after
    # the sweep read them and before it requeues
    handed = _extend_between_read_and_requeue(
        monkeypatch,
        sweeper,
        lambda: holder.extend_leases([u.id for u in kept], now=20, lease_seconds=60),
    )
    assert sweeper.reclaim_expired(now=20) == 1  # only the lease not extended
    assert handed == [3]  # the sweep did read all three as expired
    counts = holder.counts()
    assert (counts.queued, counts.leased) == (1, 2)
    # the extended leases are still the holder's: it settles them
    holder.complete([Completion(u.id, Settle.DONE) for u in leased], [], now=21)
    counts = holder.counts()
    assert (counts.done, counts.queued, counts.leased) == (2, 1, 0)
    (again,) = lease(holder, "a.test", 5, now=22, lease_seconds=10)
    assert again.url == lost.url
    # and once their extension has run out too, nothing of them comes back
    assert sweeper.reclaim_expired(now=100) == 1  # only the lease taken at 22
