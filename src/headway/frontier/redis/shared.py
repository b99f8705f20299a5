"""What every node of a shared crawl reads and writes besides the queues: payload digests
(first capture of each exact payload, for revisit records) and per-host state (robots.txt
verdict, wait, backoff; opaque strings). Digests are spread over the shards by digest,
host states live in their host's shard (see ``keys.py``). Each call is one pipeline,
retried through an outage."""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Sequence
from typing import Any

from headway.frontier.redis.keys import CrawlKeys, shard_of_digest, shard_of_host

#: Runs a Redis call, retried through an outage (``RedisLink.retry``).
Retry = Callable[[Callable[[], Any]], Any]


class SharedState:
    """Payload digests and host states of one crawl (``FrontierStore`` semantics)."""

    def __init__(self, client: Any, retry: Retry, keys: CrawlKeys, shards: int) -> None:
        self._client = client
        self._retry = retry
        self.keys = keys
        self.shards = shards

    def find_payloads(self, digests: Sequence[str]) -> dict[str, tuple[str, str]]:
        wanted = list(dict.fromkeys(digests))

        def read() -> list[Any]:
            pipe = self._client.pipeline(transaction=False)
            for d in wanted:
                pipe.hget(self.keys.shard(shard_of_digest(d, self.shards), "payloads"), d)
            return list(pipe.execute())

        out: dict[str, tuple[str, str]] = {}
        for d, value in zip(wanted, self._retry(read), strict=True):
            if value is not None:
                uri, date = json.loads(value)
                out[d] = (uri, date)
        return out

    def put_payloads(self, items: Sequence[tuple[str, str, str]]) -> None:

        def write() -> None:
            pipe = self._client.pipeline(transaction=False)
            for d, uri, date in items:
                key = self.keys.shard(shard_of_digest(d, self.shards), "payloads")
                pipe.hsetnx(key, d, json.dumps([uri, date]))
            pipe.execute()

        self._retry(write)

    def get_host_states(self, hosts: Sequence[str]) -> dict[str, str]:
        wanted = list(dict.fromkeys(hosts))

        def read() -> list[Any]:
            pipe = self._client.pipeline(transaction=False)
            for h in wanted:
                pipe.hget(self.keys.shard(shard_of_host(h, self.shards), "hstate"), h)
            return list(pipe.execute())

        return {h: v for h, v in zip(wanted, self._retry(read), strict=True) if v is not None}

    def host_counts(self, hosts: Sequence[str]) -> dict[str, tuple[int, int]]:
        """Queued (its level lists and its waiting set) and admitted URLs of each host:
        two pipelined rounds, the levels first, then the length of each level list."""
        wanted = list(dict.fromkeys(hosts))

        def read() -> dict[str, tuple[int, int]]:
            pipe = self._client.pipeline(transaction=False)
            for h in wanted:
                s = shard_of_host(h, self.shards)
                pipe.zrange(self.keys.queue(s, h), 0, -1)
                pipe.zcard(self.keys.waiting(s, h))
                pipe.hget(self.keys.shard(s, "admitted"), h)
            first = list(pipe.execute())
            pipe = self._client.pipeline(transaction=False)
            lists = 0
            for i, h in enumerate(wanted):
                levels_key = self.keys.queue(shard_of_host(h, self.shards), h)
                for level in first[3 * i]:
                    name = level.decode() if isinstance(level, bytes) else str(level)
                    pipe.llen(f"{levels_key}|{name}")
                    lists += 1
            lengths = iter(pipe.execute() if lists else [])
            out: dict[str, tuple[int, int]] = {}
            for i, h in enumerate(wanted):
                levels, waiting, admitted = first[3 * i : 3 * i + 3]
                queued = int(waiting) + sum(int(next(lengths)) for _ in levels)
                if admitted is not None or queued:
                    out[h] = (queued, int(admitted or 0))
            return out

        return self._retry(read) if wanted else {}

    def put_host_states(self, items: Sequence[tuple[str, str]]) -> None:

        def write() -> None:
            pipe = self._client.pipeline(transaction=False)
            for h, v in items:
                pipe.hset(self.keys.shard(shard_of_host(h, self.shards), "hstate"), h, v)
            pipe.execute()

        self._retry(write)

    def mark_seeded(self, hosts: Collection[str]) -> None:
        """``SharedCrawl.mark_seeded``: one ``seeded`` key in each shard of ``hosts``."""
        shards = sorted({shard_of_host(h, self.shards) for h in hosts})

        def write() -> None:
            pipe = self._client.pipeline(transaction=False)
            for s in shards:
                pipe.set(self.keys.shard(s, "seeded"), "1")
            pipe.execute()

        if shards:
            self._retry(write)

    def seeded_hosts_lost(self, hosts: Collection[str]) -> set[str]:
        """``SharedCrawl.seeded_hosts_lost``: the hosts of shards without a ``seeded`` key."""
        by_shard: dict[int, list[str]] = {}
        for h in hosts:
            by_shard.setdefault(shard_of_host(h, self.shards), []).append(h)
        shards = sorted(by_shard)

        def read() -> list[Any]:
            pipe = self._client.pipeline(transaction=False)
            for s in shards:
                pipe.exists(self.keys.shard(s, "seeded"))
            return list(pipe.execute())

        kept = self._retry(read) if shards else []
        return {h for s, n in zip(shards, kept, strict=True) if not n for h in by_shard[s]}
