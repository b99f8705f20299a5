"""URL records written without the content handler field (by a version before it, and
a link's record today) are read and settled as before: its URLs are ordinary links, and a
record keeps its shape through requeues and revisits. A queued URL's record is the JSON
after the 15-digit id in its host's level list or waiting set (see ``keys.py``)."""

from __future__ import annotations

import itertools
import json

import redis

from headway.frontier.redis import RedisFrontier
from headway.frontier.redis.keys import member, shard_of_host
from headway.frontier.store import Completion, Settle
from tests.frontier.conftest import TEST_LIMITS, entry, lease
from tests.support.redisproc import RedisServer

SHARDS = 4
_ids = itertools.count()


def test_records_without_the_handler_field_lease_as_links(redis_server: RedisServer) -> None:
    crawl = f"old{next(_ids)}"
    store = RedisFrontier(
        redis_server.url, crawl, "n1", TEST_LIMITS, shards=SHARDS, handover_gap=0.0
    )
    raw = redis.Redis.from_url(redis_server.url, decode_responses=True)
    try:
        urls = ["http://a.test/sitemap.xml", "http://a.test/page"]
        store.add([entry(urls[0], handler="sitemap"), entry(urls[1])], now=0)
        shard = shard_of_host("a.test", SHARDS)
        fresh = store.keys.queue(shard, "a.test") + "|0"  # the list of priority level 0
        records = raw.lrange(fresh, 0, -1)
        assert len(records) == 2
        assert sorted(len(json.loads(r[15:])) for r in records) == [9, 10]
        # rewrite both as the previous version wrote them: 9 fields, no handler
        for i, m in enumerate(records):
            raw.lset(fresh, i, m[:15] + json.dumps(json.loads(m[15:])[:9]))
        got = {u.url: u for u in lease(store, "a.test", 5, now=0, lease_seconds=60)}
        assert set(got) == set(urls)
        assert all(u.handler is None for u in got.values())
        store.complete(
            [
                Completion(got[urls[0]].id, Settle.RETRY, not_before=1),
                Completion(got[urls[1]].id, Settle.DONE, revisit_at=1, validators="v"),
            ],
            [],
            now=0,
        )
        again = {u.url: u for u in lease(store, "a.test", 5, now=1, lease_seconds=60)}
        assert again[urls[0]].attempts == 1 and again[urls[1]].fetches == 1
        assert all(u.handler is None for u in again.values())
        # settling rewrote the records in their own shape (a leased one is in ``urls``)
        kept = raw.hget(store.keys.shard(shard, "urls"), member(again[urls[0]].id))
        assert kept is not None and len(json.loads(kept)) == 9
    finally:
        raw.close()
        store.close()
