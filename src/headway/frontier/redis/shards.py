"""Shard leasing: which shards of a crawl this node schedules.

Contract:

- A node registers in ``hw:{C}:nodes`` with a heartbeat (every ``ttl / 3``) and publishes
  its statistics in ``hw:{C}:node:N``. Live nodes are those seen within ``ttl``.
- A node holds a shard while ``hw:{C:s}:owner`` names it; the key has a TTL of ``ttl``
  renewed by every heartbeat, so a dead node's shards free themselves after ``ttl``.
- Each node aims at a fair share, ``ceil(S / live nodes)``: it takes free shards up to it
  and gives up its surplus. A shard it gives up is first drained: it is no longer
  scheduled, and its owner key is deleted only when none of this node's leases in it are
  left, so two nodes never have requests in flight to one host.
- A shard taken over is scheduled only ``handover_gap`` seconds after it was taken (the
  politeness gap across a handover), and only once no other node has an unexpired lease
  in it (a node that lost its shard without draining it, e.g. a stalled heartbeat, may
  still have requests in flight); ``close`` releases every held shard at once.
- While Redis cannot be reached for longer than ``ttl``, the node schedules nothing (its
  shards may have been taken) until a heartbeat succeeds again.
- Each heartbeat checks the crawl epoch (``epoch.py``): when the meta hash no longer
  names it, or a shard script refuses for want of its epoch key, ``on_lost`` is called
  and the node schedules nothing from then on.
"""

from __future__ import annotations

import json
import logging
import math
import random
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import redis

from headway.frontier.redis.connect import Scripts
from headway.frontier.redis.epoch import is_lost_reply
from headway.frontier.redis.keys import CrawlKeys

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ShardStatistics:
    """What the shard lease keeper holds now."""

    held: int
    draining: int
    live_nodes: int
    last_heartbeat: float


class ShardLeases:
    """Keeps this node's share of the crawl's shards (a daemon thread heartbeats)."""

    def __init__(
        self,
        client: Any,
        keys: CrawlKeys,
        shards: int,
        node: str,
        *,
        ttl: float,
        handover_gap: float,
        epoch: str,
        on_lost: Callable[[], None],
    ) -> None:
        self._client = client
        self._scripts = Scripts(client, epoch)
        self._epoch = epoch
        self._on_lost = on_lost
        self.lost = False
        self._keys = keys
        self._shards = shards
        self._node = node
        self._ttl = ttl
        self._gap = handover_gap
        self._lock = threading.Lock()
        self._held: dict[int, float] = {}  # shard -> when it may be scheduled
        self._draining: set[int] = set()
        self._waiting: set[int] = set()  # held, but other nodes' leases are still live
        self._live = 0
        self._last_ok = 0.0
        self._stats_json: str | None = None  # none published before the first reading
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._down_since: float | None = None
        self._rng = random.Random(node)

    # -- what the frontier asks ----------------------------------------------------------

    def schedulable(self, now: float | None = None) -> frozenset[int]:
        """Shards this node may schedule now."""
        t = time.time() if now is None else now
        with self._lock:
            if self.lost or t - self._last_ok > self._ttl:
                return frozenset()
            return frozenset(
                s
                for s, at in self._held.items()
                if at <= t and s not in self._draining and s not in self._waiting
            )

    def held(self) -> frozenset[int]:
        with self._lock:
            return frozenset(self._held)

    def statistics(self) -> ShardStatistics:
        with self._lock:
            return ShardStatistics(len(self._held), len(self._draining), self._live, self._last_ok)

    def publish(self, stats: Mapping[str, Any]) -> None:
        """Statistics published with the next heartbeat (for ``headway status``)."""
        self._stats_json = json.dumps(dict(stats), separators=(",", ":"))

    # -- life ----------------------------------------------------------------------------

    def start(self) -> None:
        """One heartbeat now (so a lone node holds its shards at once), then a thread."""
        self.beat()
        self._thread = threading.Thread(
            target=self._run, name=f"shard-leases-{self._node}", daemon=True
        )
        self._thread.start()

    def close(self) -> None:
        """Stop heartbeating, release every held shard and leave the live nodes."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=self._ttl)
        with self._lock:
            shards = list(self._held)
            self._held.clear()
            self._draining.clear()
            self._waiting.clear()
        if self.lost:
            return  # nothing left to release, and no script would act
        try:
            self._scripts.run_many(
                [
                    ("shard", [self._keys.shard(s, "owner")], ["release", self._node, 0])
                    for s in shards
                ]
            )
            self._client.zrem(self._keys.nodes, self._node)
            self._client.delete(self._keys.node(self._node))
        except redis.RedisError as exc:
            log.warning("could not release shards at close (they free after their TTL): %s", exc)

    def _run(self) -> None:
        while not self._stop.wait(self._ttl / 3):
            self.beat()

    def beat(self) -> None:
        """One heartbeat: register, renew, give up surplus, take a fair share."""
        if self.lost:
            return
        try:
            self._beat(time.time())
        except redis.RedisError as exc:
            if is_lost_reply(exc):
                self._lose()
                return
            now = time.time()
            if self._down_since is None:
                self._down_since = now
                log.info(
                    "Redis unreachable (%s): shards are kept for %.0f s, then not scheduled"
                    " until Redis answers again",
                    exc,
                    self._ttl,
                )
            return
        if self._down_since is not None:
            log.info("shard heartbeat back after %.1f s", time.time() - self._down_since)
            self._down_since = None

    def _beat(self, now: float) -> None:
        k = self._keys
        ttl_ms = int(self._ttl * 1000)
        pipe = self._client.pipeline(transaction=False)
        pipe.zadd(k.nodes, {self._node: now})
        pipe.zremrangebyscore(k.nodes, "-inf", now - 30 * self._ttl)
        pipe.zrangebyscore(k.nodes, now - self._ttl, "+inf")
        pipe.hget(k.meta, "epoch")
        if self._stats_json is not None:
            pipe.set(k.node(self._node), self._stats_json, px=ttl_ms * 3)
        replies = pipe.execute()
        live = replies[2]
        if replies[3] != self._epoch:
            self._lose()
            return
        with self._lock:
            mine = list(self._held)
        renewed = self._scripts.run_many(
            [("shard", [k.shard(s, "owner")], ["renew", self._node, ttl_ms]) for s in mine]
        )
        lost = [s for s, ok in zip(mine, renewed, strict=True) if not ok]
        if lost:
            log.warning("%d shard(s) no longer held (expired or taken over): %s", len(lost), lost)
        target = math.ceil(self._shards / max(1, len(live)))
        with self._lock:
            for s in lost:
                self._held.pop(s, None)
                self._draining.discard(s)
                self._waiting.discard(s)
            self._live = len(live)
            self._last_ok = now
            keep = len(self._held) - len(self._draining)
            if keep > target:
                active = sorted(s for s in self._held if s not in self._draining)
                self._draining.update(active[target:])
            elif keep < target and self._draining:
                for s in sorted(self._draining)[: target - keep]:
                    self._draining.discard(s)
            draining = sorted(self._draining)
            count = len(self._held)
        self._release_drained(draining)
        if count < target:
            self._acquire(target - count, now, ttl_ms)
        self._check_foreign_leases(now)

    def _lose(self) -> None:
        with self._lock:
            self.lost = True
        self._on_lost()

    def _check_foreign_leases(self, now: float) -> None:
        """Keep newly taken shards unscheduled while another node's leases in them live."""
        with self._lock:
            check = sorted(self._waiting)
        if not check:
            return
        pipe = self._client.pipeline(transaction=False)
        for s in check:
            pipe.zrangebyscore(self._keys.shard(s, "leases"), now, "+inf")
        suffix = "|" + self._node
        clear = [
            s
            for s, members in zip(check, pipe.execute(), strict=True)
            if all(m.endswith(suffix) for m in members)
        ]
        with self._lock:
            for s in clear:
                if s in self._waiting:
                    self._waiting.discard(s)
                    # the old holder's last request started before its lease settled:
                    # the politeness gap counts from now
                    if s in self._held:
                        self._held[s] = max(self._held[s], now + self._gap)

    def _release_drained(self, draining: list[int]) -> None:
        if not draining:
            return
        k = self._keys
        pipe = self._client.pipeline(transaction=False)
        for s in draining:
            pipe.zrange(k.shard(s, "leases"), 0, -1)
        suffix = "|" + self._node
        idle = [
            s
            for s, members in zip(draining, pipe.execute(), strict=True)
            if not any(m.endswith(suffix) for m in members)
        ]
        with self._lock:
            idle = [s for s in idle if s in self._draining]
            for s in idle:
                self._held.pop(s, None)
                self._draining.discard(s)
        self._scripts.run_many(
            [("shard", [k.shard(s, "owner")], ["release", self._node, 0]) for s in idle]
        )
        if idle:
            log.info("released %d drained shard(s) to other nodes", len(idle))

    def _acquire(self, want: int, now: float, ttl_ms: int) -> None:
        k = self._keys
        pipe = self._client.pipeline(transaction=False)
        for s in range(self._shards):
            pipe.exists(k.shard(s, "owner"))
        free = [s for s, taken in enumerate(pipe.execute()) if not taken]
        self._rng.shuffle(free)
        tries = free[:want]
        got = self._scripts.run_many(
            [("shard", [k.shard(s, "owner")], ["acquire", self._node, ttl_ms]) for s in tries]
        )
        taken = [s for s, ok in zip(tries, got, strict=True) if ok]
        if taken:
            with self._lock:
                for s in taken:
                    self._held[s] = now + self._gap
                    self._waiting.add(s)
            log.info("took %d shard(s): %s", len(taken), sorted(taken))
