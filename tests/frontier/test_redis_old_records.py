"""A Redis frontier written by the previous version (URL records without the content
handler field) is read and settled as before: its URLs are ordinary links, and a record
keeps its shape through requeues and revisits."""

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
        key = store.keys.shard(shard_of_host("a.test", SHARDS), "urls")
        records = raw.hgetall(key)
        assert len(records) == 2
        assert sorted(len(json.loads(r)) for r in records.values()) == [9, 10]
        # rewrite both as the previous version wrote them: 9 fields, no handler
        for m, rec in records.items():
            raw.hset(key, m, json.dumps(json.loads(rec)[:9]))
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
        # settling rewrote the records in their own shape
        kept = raw.hget(key, member(again[urls[0]].id))
        assert kept is not None and len(json.loads(kept)) == 9
    finally:
        raw.close()
        store.close()
