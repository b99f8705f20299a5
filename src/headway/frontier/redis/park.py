"""Parking of the pages waiting for their revisit in a shared crawl (``park.lua``): a run
without recrawl sets them aside in each shard's ``parked`` set, a run with recrawl puts
them back in their host queues with their due times (``FrontierStore.park_revisits`` and
``unpark_revisits``). Each script call is atomic for its shard; a call covers up to
``BATCH`` hosts (park) or parked URLs (unpark)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, TypeVar

from headway.frontier.redis.connect import Scripts
from headway.frontier.redis.keys import CrawlKeys

T = TypeVar("T")

#: Hosts (park) or parked URLs (unpark) per script call.
BATCH = 500


class RevisitParking:
    """Park and unpark the waiting revisits of every shard of one crawl."""

    def __init__(
        self,
        client: Any,
        scripts: Scripts,
        keys: CrawlKeys,
        shards: int,
        retry: Callable[[Callable[[], Any]], Any],
        hosts_of: Callable[[Sequence[int]], dict[int, str]],
    ) -> None:
        self._client = client
        self._scripts = scripts
        self._keys = keys
        self._shards = shards
        self._retry = retry
        self._hosts_of = hosts_of

    def park(self) -> int:
        """Park every waiting revisit of the hosts with queued URLs; how many."""
        moved = 0
        for s in range(self._shards):
            hosts = self._members(self._keys.shard(s, "ready"), -1)
            for i in range(0, len(hosts), BATCH):
                part = hosts[i : i + BATCH]
                moved += self._call(s, part, ["park", len(part), *part])
        return moved

    def unpark(self) -> int:
        """Put every parked URL back in its host queue; how many."""
        moved = 0
        for s in range(self._shards):
            parked = self._keys.shard(s, "parked")
            while members := self._members(parked, BATCH - 1):
                by_id: dict[int, str] = self._retry(
                    partial(self._hosts_of, [int(m) for m in members])
                )
                hosts = sorted(set(by_id.values()))
                index = {h: n for n, h in enumerate(hosts, 1)}
                args: list[Any] = ["unpark", len(hosts), *hosts]
                lost = []
                for m in members:
                    host = by_id.get(int(m))
                    if host is None:
                        lost.append(m)  # no record left: nothing to put back
                    else:
                        args += [m, index[host]]
                got = self._call(s, hosts, args)
                if lost:
                    self._retry(partial(self._client.zrem, parked, *lost))
                moved += got
                if got == 0 and not lost:
                    break  # another node moved them meanwhile
        return moved

    def _members(self, key: str, stop: int) -> list[str]:
        """Members 0..``stop`` of a sorted set (-1: all), lowest score first."""
        got: list[Any] = self._retry(partial(self._client.zrange, key, 0, stop))
        return [str(m) for m in got]

    def _call(self, shard: int, hosts: list[str], args: list[Any]) -> int:
        keys = [
            *self._keys.shard_keys(shard, "urls", "ready", "hosts", "totals", "parked"),
            *self._keys.host_keys(shard, hosts),
        ]
        replies = self._retry(partial(self._scripts.run_many, [("park", keys, args)]))
        return int(replies[0])
