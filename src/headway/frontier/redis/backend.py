"""The shared frontier backend: a crawl's frontier in Redis or Redis Cluster.

Contract: implements ``FrontierStore`` (see ``store.py``) for one node of a crawl that
any number of nodes share. The key layout is in ``keys.py``. Differences from the
embedded backend, all inherent to sharing:

- Atomicity is per shard: every change to one shard is one Lua script, so it is applied
  whole or not at all; a call that touches several shards (a batch of links for many
  sites) is one pipeline of per-shard scripts, not one transaction.
- ``ready_hosts``, ``next_ready_time`` and ``lease_many`` cover only the shards this node
  holds (``shards.py``); a lease is refused for a shard the node does not hold.
- ``max_queued`` is enforced after each admission, by shedding the globally worst queued
  URLs; the per-host budget is exact (one host is in one shard).
- Redis unreachable: each call retries with backoff (one warning when it starts, one
  when Redis is back) for up to ``outage_limit`` seconds, then raises ``StoreError``. A
  retried admission cannot lose a URL (at worst it is counted as a duplicate); a retried
  lease may leave an orphan lease, which ``reclaim_expired`` returns when it expires.

Durability is the server's: with AOF and ``appendfsync everysec`` a Redis crash loses at
most about the last second of writes (see docs/scaling.md). Once the crawl is found lost
(``epoch.py``) every call does nothing and ``close`` raises ``CrawlLostError``.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from headway.errors import StoreError
from headway.frontier.redis import reads
from headway.frontier.redis.admission import Call, RedisAdmission
from headway.frontier.redis.calls import (
    SettleItem,
    lease_call,
    leased_from_replies,
    settle_call,
    settle_item,
)
from headway.frontier.redis.connect import Scripts, StoreUrl, parse_store_url
from headway.frontier.redis.counts import RollingCounts, read_counts
from headway.frontier.redis.epoch import (
    CrawlLostError,
    LostCrawl,
    loss_facts,
    lost_message,
    missing_shards,
    unless_lost,
)
from headway.frontier.redis.keys import (
    DEFAULT_SHARDS,
    CrawlKeys,
    shard_of_host,
)
from headway.frontier.redis.link import RedisLink
from headway.frontier.redis.opening import open_crawl
from headway.frontier.redis.park import RevisitParking
from headway.frontier.redis.shards import ShardLeases, ShardStatistics
from headway.frontier.redis.shared import SharedState
from headway.frontier.store import (
    AddResult,
    Completion,
    FrontierCounts,
    FrontierLimits,
    LeasedUrl,
    UrlEntry,
)

log = logging.getLogger(__name__)

DEFAULT_LIMITS = FrontierLimits()
_NO_ADD = AddResult(0, 0, {})


class RedisFrontier:
    """``FrontierStore`` in Redis for node ``node_id`` of crawl ``crawl_id``."""

    def __init__(
        self,
        url: str | StoreUrl,
        crawl_id: str,
        node_id: str,
        limits: FrontierLimits = DEFAULT_LIMITS,
        *,
        shards: int = DEFAULT_SHARDS,
        shard_ttl: float = 10.0,
        handover_gap: float = 1.0,
        outage_limit: float = 600.0,
    ) -> None:
        if not crawl_id or any(c in crawl_id for c in "{}: "):
            raise StoreError(f"crawl id {crawl_id!r} must be non-empty without {{, }}, : or space")
        if not node_id or "|" in node_id:
            raise StoreError(f"node id {node_id!r} must be non-empty without '|'")
        self._url = parse_store_url(url) if isinstance(url, str) else url
        self._node = node_id
        self._limits = limits
        self._link = RedisLink(self._url, outage_limit=outage_limit)
        self._client: Any = self._link.client
        self._retry = self._link.retry
        self.keys = CrawlKeys(crawl_id)
        self._closed = False
        self._lease_hosts: dict[int, str] = {}
        self._lost = LostCrawl()
        self._last_counts: FrontierCounts | None = None
        shape = self._retry(
            lambda: open_crawl(
                self._client, self.keys, limits, shards, shard_ttl, self._url.masked()
            )
        )
        self.shards = shape.shards
        self._scripts: Scripts = self._retry(lambda: Scripts(self._client, shape.epoch))
        self._shared = SharedState(self._client, self._retry, self.keys, self.shards)
        self._counts = RollingCounts(self._client, self.keys, self.shards, self._retry)
        self._admission = RedisAdmission(
            self._client,
            self._scripts,
            self.keys,
            self.shards,
            limits,
            seen_bits=shape.seen_bits,
        )
        self._leases = ShardLeases(
            self._client,
            self.keys,
            self.shards,
            node_id,
            ttl=shard_ttl,
            handover_gap=handover_gap,
            epoch=shape.epoch,
            on_lost=self._lose,
        )
        self._leases.start()
        self._parking = RevisitParking(
            self._client, self._scripts, self.keys, self.shards, self._retry, self._hosts_of
        )
        log.info(
            "frontier %s crawl %s: node %s, %d shards",
            self._url.masked(),
            crawl_id,
            node_id,
            self.shards,
        )

    # -- plumbing --------------------------------------------------------------------------

    @property
    def node_id(self) -> str:
        return self._node

    @property
    def server_restarts(self) -> int:
        """Times a Redis server was found restarted after an outage (it may have lost its
        last writes)."""
        return self._link.server_restarts

    @property
    def store_url(self) -> str:
        """The store URL with its password masked."""
        return self._url.masked()

    @property
    def crawl_lost(self) -> str | None:
        """Why the crawl is lost (one line), once a call found its keys gone."""
        return self._lost.message

    def _lose(self) -> None:
        if not self._lost:
            facts = loss_facts(self._client, self._link.restarted_since_start())
            self._lost.mark(lost_message(self._url.masked(), self.keys.crawl, facts))
        self._leases.lost = True  # schedules nothing, releases nothing at close

    @unless_lost(lambda self: None)
    def verify_epoch(self) -> None:
        """Check that the crawl's epoch is in the meta hash and every shard; mark the
        crawl lost if not."""
        epoch = self._scripts.epoch

        def check() -> bool:
            if self._client.hget(self.keys.meta, "epoch") != epoch:
                return False
            return not missing_shards(self._client, self.keys, self.shards, epoch)

        if not self._retry(check):
            self._lose()

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError("frontier store is closed")

    def shard_of(self, host: str) -> int:
        return shard_of_host(host, self.shards)

    def owns(self, host: str) -> bool:
        return self.shard_of(host) in self._leases.schedulable()

    def heartbeat(self) -> None:
        """One shard-lease heartbeat now (the keeper's thread also runs them)."""
        self._leases.beat()

    def held_shards(self) -> frozenset[int]:
        """Shards whose owner key names this node (draining ones included)."""
        return self._leases.held()

    def schedulable_shards(self) -> frozenset[int]:
        """Shards this node schedules now."""
        return self._leases.schedulable()

    def shard_statistics(self) -> ShardStatistics:
        return self._leases.statistics()

    def publish(self, stats: Mapping[str, Any]) -> None:
        """Statistics published in Redis with the next heartbeat (``headway status``)."""
        self._leases.publish(stats)

    def shards_held(self) -> int:
        return self.shard_statistics().held

    def publish_console(self, snapshot: bytes, ttl: float) -> None:
        """The node's console snapshot (JSON), kept ``ttl`` seconds unless renewed; one
        try: a snapshot lost in an outage is replaced by the next."""
        self._check_open()
        self._client.set(self.keys.console(self._node), snapshot, px=int(ttl * 1000))

    # -- admission -------------------------------------------------------------------------

    @unless_lost(lambda self: _NO_ADD)
    def add(self, entries: Sequence[UrlEntry], now: float) -> AddResult:
        self._check_open()
        calls, dups = self._admission.calls(entries)
        replies = self._retry(lambda: self._scripts.run_many(calls))
        return self._retry(lambda: self._admission.results(calls, replies, dups))

    # -- settling --------------------------------------------------------------------------

    @unless_lost(lambda self: _NO_ADD)
    def complete(
        self, completions: Sequence[Completion], discovered: Sequence[UrlEntry], now: float
    ) -> AddResult:
        self._check_open()
        wanted: dict[int, Completion] = {}
        for c in completions:
            wanted.setdefault(c.id, c)
        hosts = self._retry(lambda: self._hosts_of(list(wanted)))
        by_shard: dict[int, list[SettleItem]] = {}
        for url_id, c in wanted.items():
            host = hosts.get(url_id)
            if host is not None:
                item = settle_item(url_id, c, host, self._node)
                by_shard.setdefault(url_id % self.shards, []).append(item)
        calls = [self._settle_call(s, items) for s, items in by_shard.items()]
        admit, dups = self._admission.calls(discovered)
        # links first: a server restores a prefix of its writes, so a settlement it kept
        # has its page's links too (on one server; see docs/scaling.md for a cluster)
        replies = self._retry(lambda: self._scripts.run_many(admit + calls))
        for url_id in wanted:
            self._lease_hosts.pop(url_id, None)
        return self._retry(lambda: self._admission.results(admit, replies[: len(admit)], dups))

    def _settle_call(self, shard: int, items: Sequence[SettleItem]) -> Call:
        return settle_call(self.keys, shard, items)

    def _hosts_of(self, ids: Sequence[int]) -> dict[int, str]:
        """Host of each id (from this node's leases, else from the stored record)."""
        out = {i: self._lease_hosts[i] for i in ids if i in self._lease_hosts}
        missing = [i for i in ids if i not in out]
        return out | reads.hosts_of(self._client, self.keys, self.shards, missing)

    # -- scheduling ------------------------------------------------------------------------

    @unless_lost(lambda self: [])
    def ready_hosts(
        self, now: float, limit: int, exclude: Collection[str] = ()
    ) -> list[tuple[str, float]]:
        self._check_open()
        if limit <= 0:
            return []
        shards = sorted(self._leases.schedulable())
        num = limit + len(exclude)
        found = self._retry(lambda: reads.ready_hosts(self._client, self.keys, shards, now, num))
        return [(h, float(t)) for t, h in found if h not in exclude][:limit]

    @unless_lost(lambda self: None)
    def next_ready_time(self, exclude: Collection[str] = ()) -> float | None:
        self._check_open()
        shards = sorted(self._leases.schedulable())
        return self._retry(lambda: reads.next_ready_time(self._client, self.keys, shards, exclude))

    @unless_lost(lambda self: None)
    def set_host_ready_at(self, host: str, ready_at: float) -> None:
        self._check_open()
        s = self.shard_of(host)
        keys = [*self.keys.shard_keys(s, "ready", "hosts"), *self.keys.host_pair(s, host)]
        self._retry(
            lambda: self._scripts.run_many([("set_ready", keys, [host, repr(float(ready_at))])])
        )

    @unless_lost(lambda self: [])
    def lease_many(
        self,
        wants: Sequence[tuple[str, int]],
        now: float,
        lease_seconds: float,
        *,
        revisits_first: bool | None = None,
    ) -> list[LeasedUrl]:
        self._check_open()
        allowed = self._leases.schedulable()
        expires = now + lease_seconds
        by_shard: dict[int, list[tuple[str, int]]] = {}
        for host, n in wants:
            s = self.shard_of(host)
            if s in allowed and n > 0:
                by_shard.setdefault(s, []).append((host, n))
        calls = [
            lease_call(self.keys, s, items, now, expires, self._node, revisits_first)
            for s, items in by_shard.items()
        ]
        replies = self._retry(lambda: self._scripts.run_many(calls))
        by_host: dict[str, list[LeasedUrl]] = {}
        for leased in leased_from_replies(replies, expires):
            self._lease_hosts[leased.id] = leased.host
            by_host.setdefault(leased.host, []).append(leased)
        out: list[LeasedUrl] = []
        for host, _ in wants:
            out += by_host.pop(host, [])
        return out

    @unless_lost(lambda self: 0)
    def drop_host(self, host: str, reason: str) -> int:
        self._check_open()
        s = self.shard_of(host)
        keys = [
            *self.keys.shard_keys(s, "worst", "ready", "totals"),
            *self.keys.host_pair(s, host),
        ]
        dropped = int(self._retry(lambda: self._scripts.run_many([("drop_host", keys, [host])]))[0])
        if dropped:
            log.info("dropped %d queued URLs of %s: %s", dropped, host, reason)
        return dropped

    # -- recrawl ---------------------------------------------------------------------------

    @unless_lost(lambda self: 0)
    def park_revisits(self) -> int:
        self._check_open()
        return self._parking.park()

    @unless_lost(lambda self: 0)
    def unpark_revisits(self) -> int:
        self._check_open()
        return self._parking.unpark()

    # -- leases ----------------------------------------------------------------------------

    @unless_lost(lambda self: 0)
    def reclaim_expired(self, now: float, limit: int = 1000) -> int:
        self._check_open()
        found = self._retry(
            lambda: reads.expired_leases(self._client, self.keys, self.shards, now, limit)
        )
        return self._requeue(found, bound=repr(float(now)))

    @unless_lost(lambda self: 0)
    def extend_leases(self, ids: Sequence[int], now: float, lease_seconds: float) -> int:
        self._check_open()
        if not ids:
            return 0
        expires = now + lease_seconds
        return int(
            self._retry(
                lambda: reads.extend_leases(
                    self._client, self.keys, self.shards, self._node, ids, expires
                )
            )
        )

    @unless_lost(lambda self: 0)
    def release_own_leases(self) -> int:
        self._check_open()
        found = self._retry(
            lambda: reads.own_leases(self._client, self.keys, self.shards, self._node)
        )
        self._lease_hosts.clear()
        return self._requeue(found, bound="")

    def _requeue(self, found: list[tuple[int, str]], bound: str) -> int:
        if not found:
            return 0
        ids = [int(m.split("|", 1)[0]) for _, m in found]
        hosts = self._retry(lambda: self._hosts_of(ids))
        by_shard: dict[int, list[SettleItem]] = {}
        for (s, lease), url_id in zip(found, ids, strict=True):
            host = hosts.get(url_id)
            if host is not None:
                by_shard.setdefault(s, []).append((lease, host, "reclaim", "0", bound, ""))
        calls = [self._settle_call(s, items) for s, items in by_shard.items()]
        return sum(int(r) for r in self._retry(lambda: self._scripts.run_many(calls)))

    # -- shared per-crawl state ------------------------------------------------------------

    @unless_lost(lambda self: {})
    def find_payloads(self, digests: Sequence[str]) -> dict[str, tuple[str, str]]:
        self._check_open()
        return self._shared.find_payloads(digests)

    @unless_lost(lambda self: None)
    def put_payloads(self, items: Sequence[tuple[str, str, str]]) -> None:
        self._check_open()
        self._shared.put_payloads(items)

    @unless_lost(lambda self: None)
    def mark_seeded(self, hosts: Collection[str]) -> None:
        self._check_open()
        self._shared.mark_seeded(hosts)

    @unless_lost(lambda self: set())
    def seeded_hosts_lost(self, hosts: Collection[str]) -> set[str]:
        self._check_open()
        return self._shared.seeded_hosts_lost(hosts)

    @unless_lost(lambda self: {})
    def get_host_states(self, hosts: Sequence[str]) -> dict[str, str]:
        self._check_open()
        return self._shared.get_host_states(hosts)

    @unless_lost(lambda self: None)
    def put_host_states(self, items: Sequence[tuple[str, str]]) -> None:
        self._check_open()
        self._shared.put_host_states(items)

    def host_counts(self, hosts: Sequence[str]) -> dict[str, tuple[int, int]]:
        self._check_open()
        return self._shared.host_counts(hosts)

    def counts(self) -> FrontierCounts:
        """The crawl's totals. Each call reads a window of shards in turn (``counts.py``:
        the periodic read does not grow with the shard count). An empty frontier
        (nothing queued, nothing leased) is reported only from a consistent snapshot of
        every shard: they are read again until two reads in a row agree, since a page's
        settlement and its links' admission touch several shards one after another and
        a single pass could fall between them."""
        self._check_open()
        if self._lost:
            return self._last_counts or self._retry(
                lambda: read_counts(self._client, self.keys, self.shards)
            )
        counts = self._counts.read()
        if not (counts.queued or counts.leased):
            # an empty frontier ends the crawl: first make sure it is not a lost one
            self.verify_epoch()
            if self._lost:
                return self._last_counts or counts
        self._last_counts = counts
        self._admission.note_queued(self._counts.queued())
        return counts

    def get_meta(self, key: str) -> str | None:
        self._check_open()
        value = self._retry(lambda: self._client.hget(self.keys.meta, f"m:{key}"))
        return None if value is None else str(value)

    def set_meta(self, key: str, value: str) -> None:
        self._check_open()
        self._retry(lambda: self._client.hset(self.keys.meta, f"m:{key}", value))

    def set_meta_once(self, key: str, value: str) -> bool:
        """Set ``key`` unless it is set; True for the one caller that set it."""
        self._check_open()
        return bool(self._retry(lambda: self._client.hsetnx(self.keys.meta, f"m:{key}", value)))

    def shared(self) -> RedisFrontier:
        return self

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._leases.close()
        self._link.close()
        if self._lost.message is not None:
            raise CrawlLostError(self._lost.message)
