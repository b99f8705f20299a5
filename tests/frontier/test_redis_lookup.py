"""``headway why`` on a shared crawl: what its Redis holds of one URL (seen set, host
queues, records of leased URLs), read by ``frontier/redis/lookup.py``."""

from __future__ import annotations

import json

import pytest

from headway.cli import main
from headway.frontier.redis import RedisFrontier
from headway.frontier.redis.lookup import find_url
from headway.frontier.store import Completion, FrontierLimits, Settle, UrlEntry, UrlState
from headway.runtime.seeding import ADMISSION_META, admission_record
from headway.settings import build_settings
from headway.urls.fingerprint import fingerprint
from tests.support.redisproc import RedisServer

LIMITS = FrontierLimits(bloom_capacity=10_000, bloom_error=0.01)


def _entry(url: str, depth: int = 1, priority: int = 10, **kw: object) -> UrlEntry:
    return UrlEntry(url, url.split("/")[2], depth, priority, fingerprint(url), **kw)  # type: ignore[arg-type]


def test_why_reads_a_shared_crawls_url_from_redis(
    redis_server: RedisServer, capsys: pytest.CaptureFixture[str]
) -> None:
    import redis

    frontier = RedisFrontier(redis_server.url, "whyc", "node-w", LIMITS, shards=4, handover_gap=0.0)
    client = redis.Redis.from_url(redis_server.url, decode_responses=True)
    try:
        fresh = "http://a.test/fresh"
        later = "http://a.test/later"
        flying = "http://b.test/flying"
        done = "http://b.test/done"
        frontier.add([_entry(fresh, 2, 20), _entry(flying), _entry(done)], now=0.0)
        frontier.add([_entry(later, 3, 30, not_before=5e9)], now=0.0)
        leased = frontier.lease_many([("b.test", 2)], 1.0, 600.0)
        by_url = {lease.url: lease for lease in leased}
        frontier.complete([Completion(by_url[done].id, Settle.DONE)], [], now=2.0)

        def found(url: str):  # type: ignore[no-untyped-def]
            return find_url(client, "whyc", url, url.split("/")[2], fingerprint(url))

        assert (found(fresh).state, found(fresh).depth, found(fresh).priority) == (
            UrlState.QUEUED,
            2,
            20,
        )
        assert (found(later).state, found(later).not_before) == (UrlState.QUEUED, 5e9)
        f = found(flying)
        assert (f.state, f.owner) == (UrlState.LEASED, "node-w")
        assert f.lease_expires == pytest.approx(601.0)
        assert found(done).seen and found(done).state is None  # its record left
        assert not found("http://a.test/never").seen

        def why(url: str) -> str:
            capsys.readouterr()
            args = ["why", url, "--store", redis_server.url, "--crawl-id", "whyc"]
            assert main(args) == 0
            return capsys.readouterr().out

        assert why(fresh).startswith("queued at depth 2 (priority 20, 0 attempts before)")
        assert why(flying).startswith("in flight: leased by node node-w until ")
        # never seen: judged by the rules the crawl's node recorded and its stored seeds
        shared = frontier.shared()
        assert shared is not None
        shared.set_meta_once("seeds", json.dumps(["http://a.test/", "http://b.test/"]))
        settings = build_settings({"user_agent": "bot/1.0 (+https://example.org/bot)"})
        frontier.set_meta(ADMISSION_META, admission_record(settings))
        assert why("http://elsewhere.test/x").startswith(
            "out of scope: rule --scope seed-domains: elsewhere.test is not a seed's host"
        )
        assert why("http://a.test/never").startswith("never seen: in scope")
        said = why(done)
        assert said.startswith("admitted once, but the frontier keeps no record of it now")
        assert "give the nodes' crawl directories with --logs DIR" in said
    finally:
        frontier.close()
        client.close()
