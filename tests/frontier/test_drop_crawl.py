"""``headway drop-crawl``: a finished shared crawl's keys removed from Redis, and no key
of another crawl; refused while a node of it is live unless ``--force``."""

from __future__ import annotations

import pytest
import redis

from headway.cli import main
from headway.frontier.redis import RedisFrontier
from headway.frontier.redis.epoch import CrawlLostError
from headway.frontier.store import Completion, FrontierLimits, Settle, UrlEntry
from tests.frontier.conftest import fp_of
from tests.support.redisproc import RedisServer

LIMITS = FrontierLimits(bloom_capacity=10_000, bloom_error=0.01)


def _fill(server: RedisServer, crawl: str, node: str = "node-a") -> RedisFrontier:
    """A crawl of 4 shards with URLs in every state: queued, leased, done."""
    frontier = RedisFrontier(server.url, crawl, node, LIMITS, shards=4, handover_gap=0.0)
    urls = [f"http://h{i % 3}.test/{i}" for i in range(12)]
    frontier.add([UrlEntry(u, u.split("/")[2], 0, 0, fp_of(u)) for u in urls], now=0.0)
    leased = frontier.lease_many([(f"h{i}.test", 2) for i in range(3)], 1.0, 60.0)
    assert leased
    frontier.complete([Completion(leased[0].id, Settle.DONE)], [], now=2.0)
    frontier.set_meta("note", "x")
    return frontier


def _keys(client: redis.Redis, crawl: str) -> set[str]:
    names = set(client.scan_iter(match=f"hw:{{{crawl}}}:*"))
    names |= set(client.scan_iter(match=f"hw:{{{crawl}:*"))
    return {n.decode() if isinstance(n, bytes) else n for n in names}


def test_drop_crawl_removes_every_key_of_the_crawl_and_none_of_another(
    redis_server: RedisServer, capsys: pytest.CaptureFixture[str]
) -> None:
    client = redis.Redis.from_url(redis_server.url)
    keep = _fill(redis_server, "dropkeep")  # a neighbour whose id starts the same
    gone = _fill(redis_server, "drop")
    try:
        pause = ["pause", "--store", redis_server.url, "--crawl-id", "drop"]
        assert main(pause) == 0  # a control log entry, to be removed too
        before_keep = _keys(client, "dropkeep")
        before = _keys(client, "drop")
        assert len(before) > 10 and any(":controls" in k for k in before)
        gone.close()  # its node leaves: no live node
        capsys.readouterr()
        assert main(["drop-crawl", "--store", redis_server.url, "--crawl-id", "drop"]) == 0
        out = capsys.readouterr().out
        assert out.startswith(f"removed crawl drop from {redis_server.url}")
        assert "over 4 shards (12 URLs seen, 1 done, 0 failed, 6 still queued, 5 leased)" in out
        assert _keys(client, "drop") == set()
        assert _keys(client, "dropkeep") == before_keep
        # it is gone: a second drop, a status, a control say so in one line
        assert main(["drop-crawl", "--store", redis_server.url, "--crawl-id", "drop"]) == 2
        assert "no crawl 'drop' in" in capsys.readouterr().err
    finally:
        keep.close()
        client.close()


def test_drop_crawl_refuses_while_a_node_is_live_unless_forced(
    redis_server: RedisServer, capsys: pytest.CaptureFixture[str]
) -> None:
    client = redis.Redis.from_url(redis_server.url)
    frontier = _fill(redis_server, "droplive", node="node-live")
    try:
        args = ["drop-crawl", "--store", redis_server.url, "--crawl-id", "droplive"]
        assert main(args) == 2
        err = capsys.readouterr().err
        assert "has live nodes (node-live)" in err and "--force" in err
        assert _keys(client, "droplive")  # nothing removed
        assert main([*args, "--force"]) in (0, 1)
        out = capsys.readouterr().out
        assert "removed crawl droplive" in out and "node-live" in out
        # the epoch keys went first: the live node's scripts now refuse to write
        late = "http://h9.test/late"
        frontier.add([UrlEntry(late, "h9.test", 0, 0, fp_of(late))], now=3.0)
        assert not any(":epoch:" in k or ":lv:" in k for k in _keys(client, "droplive"))
        with pytest.raises(CrawlLostError, match="droplive"):
            frontier.close()  # the node learnt that its crawl is gone
    finally:
        frontier.close()
        client.close()
