"""The Redis frontier's periodic count read does not grow with the shard count: each
``counts()`` reads a window of shards in turn; yet it never reports an empty frontier
while a URL is queued or leased (an empty sum is checked against every shard)."""

from __future__ import annotations

import itertools
from typing import Any

import redis

from headway.frontier.redis import RedisFrontier
from headway.frontier.redis.counts import COUNTS_WINDOW
from headway.frontier.store import Completion, Settle
from tests.frontier.conftest import TEST_LIMITS, entry, lease
from tests.support.redisproc import RedisServer

SHARDS = 4 * COUNTS_WINDOW
_ids = itertools.count()


def _totals_reads(client: Any) -> int:
    stats = client.info("commandstats")
    return int(stats.get("cmdstat_hmget", {}).get("calls", 0))


def test_counts_reads_a_window_of_shards_and_never_a_false_empty(
    redis_server: RedisServer,
) -> None:
    store = RedisFrontier(
        redis_server.url, f"counts{next(_ids)}", "n1", TEST_LIMITS, shards=SHARDS, handover_gap=0
    )
    client = redis.Redis(port=redis_server.port, decode_responses=True)
    try:
        assert store.counts().queued == 0  # the first read covers every shard
        # a URL queued after an empty reading, in a shard outside the next window, is
        # seen by the very next call
        host = next(h for i in range(1000) if store.shard_of(h := f"h{i}.test") >= COUNTS_WINDOW)
        store.add([entry(f"http://{host}/1")], now=0)
        for _ in range(SHARDS // COUNTS_WINDOW + 1):
            assert store.counts().queued == 1
        # while URLs remain, a call reads one window of shards, not all of them
        before = _totals_reads(client)
        for _ in range(3):
            assert store.counts().queued == 1
        assert _totals_reads(client) - before == 3 * COUNTS_WINDOW
        # leased, then done: counted as leased or queued until the end is read whole
        (u,) = lease(store, host, 1, now=0, lease_seconds=60)
        seen = [store.counts() for _ in range(SHARDS // COUNTS_WINDOW)]
        assert all(c.queued + c.leased == 1 for c in seen)
        assert seen[-1].leased == 1  # every shard was read again within a round
        store.complete([Completion(u.id, Settle.DONE)], [], now=1)
        last = [store.counts() for _ in range(SHARDS // COUNTS_WINDOW)][-1]
        assert (last.queued, last.leased, last.done) == (0, 0, 1)
    finally:
        store.close()
        client.close()


def test_an_empty_reading_is_trusted_only_when_two_full_reads_agree(
    redis_server: RedisServer,
) -> None:
    """A read of every shard is one pipeline of separate commands, so it can fall between
    a page's settlement in one shard and its links' admission in another and see
    nothing queued or leased. The end is read again until two full reads agree: the
    link admitted just after a first full read is counted, not an empty frontier."""
    store = RedisFrontier(
        redis_server.url, f"counts{next(_ids)}", "n1", TEST_LIMITS, shards=SHARDS, handover_gap=0
    )
    try:
        assert store.counts().queued == 0
        host = next(h for i in range(1000) if store.shard_of(h := f"h{i}.test") >= COUNTS_WINDOW)
        rolling = store._counts
        plain = rolling._retry
        full_reads: list[int] = []

        def read_then_admit(fn: Any) -> Any:
            got = plain(fn)
            if len(got) == SHARDS:  # a read of every shard
                full_reads.append(sum(row[0] for row in got.values()))
                if len(full_reads) == 1:  # the admission lands just after the first one
                    store.add([entry(f"http://{host}/link")], now=0)
            return got

        rolling._retry = read_then_admit
        counts = store.counts()
        assert full_reads[0] == 0  # the first full read saw an empty frontier ...
        assert counts.queued == 1  # ... and was not trusted
        assert full_reads == [0, 1, 1]  # read again until two reads in a row agreed
    finally:
        store.close()
