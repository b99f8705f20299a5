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
most about the last second of writes (see docs/scaling.md).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any, TypeVar

import redis

from headway.errors import StoreError
from headway.frontier.bloom import _size as bloom_size
from headway.frontier.redis.connect import Scripts, StoreUrl, connect, parse_store_url
from headway.frontier.redis.keys import (
    DEFAULT_SHARDS,
    CrawlKeys,
    member,
    shard_of_digest,
    shard_of_host,
)
from headway.frontier.redis.shards import ShardLeases, ShardStatistics
from headway.frontier.store import (
    SHED_FRONTIER_FULL,
    SHED_HOST_BUDGET,
    SHED_REASONS,
    AddResult,
    Completion,
    FrontierCounts,
    FrontierLimits,
    LeasedUrl,
    Settle,
    UrlEntry,
)

log = logging.getLogger(__name__)

T = TypeVar("T")
_MASK64 = (1 << 64) - 1
_TOTALS = ("queued", "leased", "done", "failed", "seen", *(f"shed:{r}" for r in SHED_REASONS))
_SHARD_CORE = ("urls", "pq", "ready", "hosts")
_KIND = {
    Settle.DONE: "done",
    Settle.FAILED: "failed",
    Settle.RETRY: "retry",
    Settle.REQUEUE: "requeue",
}


DEFAULT_LIMITS = FrontierLimits()


def bloom_hashes(fp: int) -> tuple[int, int]:
    """The two 32-bit halves the Lua side turns into probe positions (h1 + j*h2 mod m)."""
    u = fp & _MASK64
    return u >> 32, (u & 0xFFFFFFFF) | 1


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
        self._outage_limit = outage_limit
        self._down_since: float | None = None
        self._client: Any = connect(self._url)
        self.keys = CrawlKeys(crawl_id)
        self._closed = False
        self._lease_hosts: dict[int, str] = {}
        self._queued: dict[int, int] = {}
        self._queued_at = 0.0
        self._first_contact()
        self._scripts: Scripts = self._retry(lambda: Scripts(self._client))
        self._run_ids = self._retry(self._server_run_ids)
        self.server_restarts = 0  # times a Redis server was found restarted
        self.shards, self._bloom_bits, self._probes = self._retry(lambda: self._crawl_shape(shards))
        self._leases = ShardLeases(
            self._client,
            self.keys,
            self.shards,
            node_id,
            ttl=shard_ttl,
            handover_gap=handover_gap,
        )
        self._leases.start()
        log.info(
            "frontier %s crawl %s: node %s, %d shards",
            self._url.masked(),
            crawl_id,
            node_id,
            self.shards,
        )

    def _crawl_shape(self, shards: int) -> tuple[int, int, int]:
        """The crawl's shard count and Bloom shape, fixed by whoever created the crawl."""
        bits, probes = bloom_size(
            max(1, self._limits.bloom_capacity // shards), self._limits.bloom_error
        )
        pipe = self._client.pipeline(transaction=False)
        pipe.hsetnx(self.keys.meta, "shards", shards)
        pipe.hsetnx(self.keys.meta, "bloom_bits", bits)
        pipe.hsetnx(self.keys.meta, "bloom_probes", probes)
        pipe.hmget(self.keys.meta, ["shards", "bloom_bits", "bloom_probes"])
        got = pipe.execute()[-1]
        have = int(got[0])
        if have != shards:
            log.info("crawl %s has %d shards (fixed at its creation)", self.keys.crawl, have)
        return have, int(got[1]), int(got[2])

    # -- plumbing --------------------------------------------------------------------------

    @property
    def node_id(self) -> str:
        return self._node

    @property
    def store_url(self) -> str:
        """The store URL with its password masked."""
        return self._url.masked()

    def _first_contact(self) -> None:
        """Reach the server once before anything else: a store that cannot be reached at
        start-up is a wrong address or a server not started, reported at once instead of
        waited for (outages of a store that was reached are waited for, see ``_retry``)."""
        try:
            self._client.ping()
        except (redis.ConnectionError, redis.TimeoutError) as exc:
            raise StoreError(f"cannot reach Redis {self._url.masked()}: {exc}") from exc
        except redis.RedisError as exc:
            raise StoreError(f"Redis {self._url.masked()} refused the connection: {exc}") from exc

    def _retry(self, fn: Callable[[], T]) -> T:
        delay = 0.1
        while True:
            try:
                result = fn()
            except (redis.ConnectionError, redis.TimeoutError) as exc:
                now = time.monotonic()
                if self._down_since is None:
                    self._down_since = now
                    log.warning(
                        "Redis %s unreachable (%s): frontier calls wait and retry",
                        self._url.masked(),
                        exc,
                    )
                elif now - self._down_since > self._outage_limit:
                    raise StoreError(
                        f"Redis {self._url.masked()} unreachable for {self._outage_limit:.0f} s"
                    ) from exc
                time.sleep(delay)
                delay = min(delay * 2, 2.0)
                continue
            except redis.RedisError as exc:
                raise StoreError(f"Redis frontier failed: {exc}") from exc
            if self._down_since is not None:
                log.warning(
                    "Redis %s reachable again after %.1f s",
                    self._url.masked(),
                    time.monotonic() - self._down_since,
                )
                self._down_since = None
                self._check_restart()
            return result

    def _server_run_ids(self) -> frozenset[str]:
        info = self._client.info("server")
        if "run_id" in info:
            return frozenset([str(info["run_id"])])
        return frozenset(str(v["run_id"]) for v in info.values() if isinstance(v, dict))

    def _check_restart(self) -> None:
        """After an outage: a server that restarted may have lost its last writes
        (``server_restarts`` counts it, so the node can offer recent links again)."""
        try:
            ids = self._server_run_ids()
        except redis.RedisError:
            return
        if ids != self._run_ids:
            self._run_ids = ids
            self.server_restarts += 1
            log.warning("Redis %s was restarted", self._url.masked())

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError("frontier store is closed")

    def _shard_keys(self, shard: int, *names: str) -> list[str]:
        return [self.keys.shard(shard, n) for n in names]

    def _host_keys(self, shard: int, hosts: Sequence[str]) -> list[str]:
        out: list[str] = []
        for h in hosts:
            out.extend(self.keys.host_pair(shard, h))
        return out

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

    # -- admission -------------------------------------------------------------------------

    def _admit_calls(
        self, entries: Sequence[UrlEntry]
    ) -> tuple[list[tuple[str, list[str], list[Any]]], int]:
        unique: dict[int, UrlEntry] = {}
        for e in entries:
            unique.setdefault(e.fp, e)
        by_shard: dict[int, dict[str, list[UrlEntry]]] = {}
        for e in unique.values():
            by_shard.setdefault(self.shard_of(e.host), {}).setdefault(e.host, []).append(e)
        calls = []
        for shard, groups in by_shard.items():
            hosts = list(groups)
            keys = self._shard_keys(
                shard, "bloom", "seen", "urls", "pq", "ready", "hosts", "admitted", "totals"
            )
            keys += self._host_keys(shard, hosts)
            args: list[Any] = [
                self._bloom_bits,
                self._probes,
                self._limits.host_budget,
                self.shards,
                shard,
                len(hosts),
                *hosts,
            ]
            for hidx, host in enumerate(hosts, 1):
                for e in groups[host]:
                    h1, h2 = bloom_hashes(e.fp)
                    record = [e.url, e.host, e.depth, e.priority, str(e.fp), e.via, e.attempts]
                    record += [e.validators, 0]
                    args += [e.fp, h1, h2, hidx, e.priority, repr(float(e.not_before))]
                    args.append(json.dumps(record, separators=(",", ":")))
            calls.append(("admit", keys, args))
        return calls, len(entries) - len(unique)

    def _admit_results(self, calls: list[Any], replies: list[Any], dups: int) -> AddResult:
        added = evicted = 0
        shed = dict.fromkeys(SHED_REASONS, 0)
        new_ids: set[int] = set()
        for (_, _, args), reply in zip(calls, replies, strict=True):
            added += int(reply[0])
            dups += int(reply[1])
            shed[SHED_HOST_BUDGET] += int(reply[2])
            evicted += int(reply[3])
            self._queued[int(args[4])] = int(reply[4])
            new_ids.update(int(m) for m in reply[5])
        if added:
            over_added, over_evicted = self._enforce_max_queued(new_ids)
            added -= over_added
            evicted += over_evicted
            shed[SHED_FRONTIER_FULL] += over_added + over_evicted
        return AddResult(added, dups, shed, evicted)

    def _enforce_max_queued(self, new_ids: set[int]) -> tuple[int, int]:
        """Shed the globally worst queued URLs while the frontier is over ``max_queued``:
        returns (URLs of this batch shed, older queued URLs evicted)."""
        cap = self._limits.max_queued
        now = time.monotonic()
        if now - self._queued_at > 2.0 or len(self._queued) < self.shards:
            self._queued = dict(enumerate(self._shard_totals("queued")))
            self._queued_at = now
        if sum(self._queued.values()) <= cap:
            return 0, 0
        batch = older = 0
        for _ in range(5):
            self._queued = dict(enumerate(self._shard_totals("queued")))
            excess = sum(self._queued.values()) - cap
            if excess <= 0:
                break
            pipe = self._client.pipeline(transaction=False)
            for s in range(self.shards):
                pipe.zrange(self.keys.shard(s, "pq"), -excess, -1, withscores=True)
            worst: list[tuple[float, str, int]] = []
            for s, rows in enumerate(pipe.execute()):
                worst += [(score, m, s) for m, score in rows]
            worst.sort(reverse=True)
            victims: dict[int, list[str]] = {}
            for _, m, s in worst[:excess]:
                victims.setdefault(s, []).append(m)
            gone = self._evict(victims)
            batch += sum(1 for m in gone if int(m) in new_ids)
            older += sum(1 for m in gone if int(m) not in new_ids)
        return batch, older

    def _evict(self, victims: dict[int, list[str]]) -> list[str]:
        pipe = self._client.pipeline(transaction=False)
        order = list(victims)
        for s in order:
            pipe.hmget(self.keys.shard(s, "urls"), victims[s])
        calls = []
        for s, records in zip(order, pipe.execute(), strict=True):
            hosts: dict[str, int] = {}
            pairs: list[Any] = []
            for m, rec in zip(victims[s], records, strict=True):
                if rec is None:
                    continue
                host = json.loads(rec)[1]
                pairs += [m, hosts.setdefault(host, len(hosts) + 1)]
            keys = self._shard_keys(s, "urls", "pq", "ready", "hosts", "admitted", "totals")
            keys += self._host_keys(s, list(hosts))
            calls.append(("evict", keys, [len(hosts), *hosts, *pairs]))
        gone: list[str] = []
        for reply in self._scripts.run_many(calls):
            gone += reply
        return gone

    def _shard_totals(self, name: str) -> list[int]:
        pipe = self._client.pipeline(transaction=False)
        for s in range(self.shards):
            pipe.hget(self.keys.shard(s, "totals"), name)
        return [int(v or 0) for v in pipe.execute()]

    def add(self, entries: Sequence[UrlEntry], now: float) -> AddResult:
        self._check_open()
        calls, dups = self._admit_calls(entries)
        replies = self._retry(lambda: self._scripts.run_many(calls))
        return self._retry(lambda: self._admit_results(calls, replies, dups))

    # -- settling --------------------------------------------------------------------------

    def complete(
        self, completions: Sequence[Completion], discovered: Sequence[UrlEntry], now: float
    ) -> AddResult:
        self._check_open()
        wanted: dict[int, Completion] = {}
        for c in completions:
            wanted.setdefault(c.id, c)
        hosts = self._retry(lambda: self._hosts_of(list(wanted)))
        by_shard: dict[int, list[Any]] = {}
        for url_id, c in wanted.items():
            host = hosts.get(url_id)
            if host is None:
                continue
            kind = _KIND[c.settle]
            not_before = c.not_before
            revisit_at: float | None = getattr(c, "revisit_at", None)
            if c.settle is Settle.DONE and revisit_at is not None:
                kind, not_before = "revisit", revisit_at
            validators: str | None = getattr(c, "validators", None)
            v = "" if validators is None else "=" + validators
            lease = f"{member(url_id)}|{self._node}"
            by_shard.setdefault(url_id % self.shards, []).append(
                (lease, host, kind, repr(float(not_before)), "", v)
            )
        calls = [self._settle_call(s, items) for s, items in by_shard.items()]
        admit, dups = self._admit_calls(discovered)
        # links first: a server restores a prefix of its writes, so a settlement it kept
        # has its page's links too (on one server; see docs/scaling.md for a cluster)
        replies = self._retry(lambda: self._scripts.run_many(admit + calls))
        for url_id in wanted:
            self._lease_hosts.pop(url_id, None)
        return self._retry(lambda: self._admit_results(admit, replies[: len(admit)], dups))

    def _settle_call(self, shard: int, items: list[Any]) -> tuple[str, list[str], list[Any]]:
        """A settle.lua call; items are (lease member, host, kind, not_before, bound, v)."""
        hosts: dict[str, int] = {}
        args: list[Any] = []
        for lease, host, kind, not_before, bound, v in items:
            args += [lease, hosts.setdefault(host, len(hosts) + 1), kind, not_before, bound, v]
        keys = self._shard_keys(shard, "urls", "pq", "ready", "hosts", "leases", "totals")
        keys += self._host_keys(shard, list(hosts))
        return "settle", keys, [len(hosts), *hosts, *args]

    def _hosts_of(self, ids: Sequence[int]) -> dict[int, str]:
        """Host of each id (from this node's leases, else from the stored record)."""
        out = {i: self._lease_hosts[i] for i in ids if i in self._lease_hosts}
        missing = [i for i in ids if i not in out]
        if missing:
            pipe = self._client.pipeline(transaction=False)
            for i in missing:
                pipe.hget(self.keys.shard(i % self.shards, "urls"), member(i))
            for i, rec in zip(missing, pipe.execute(), strict=True):
                if rec is not None:
                    out[i] = json.loads(rec)[1]
        return out

    # -- scheduling ------------------------------------------------------------------------

    def ready_hosts(
        self, now: float, limit: int, exclude: Collection[str] = ()
    ) -> list[tuple[str, float]]:
        self._check_open()
        if limit <= 0:
            return []
        shards = sorted(self._leases.schedulable())

        def read() -> list[Any]:
            pipe = self._client.pipeline(transaction=False)
            for s in shards:
                pipe.zrangebyscore(
                    self.keys.shard(s, "ready"),
                    "-inf",
                    now,
                    start=0,
                    num=limit + len(exclude),
                    withscores=True,
                )
            return list(pipe.execute())

        found = [(score, host) for rows in self._retry(read) for host, score in rows]
        found.sort()
        return [(h, float(t)) for t, h in found if h not in exclude][:limit]

    def next_ready_time(self, exclude: Collection[str] = ()) -> float | None:
        self._check_open()
        shards = sorted(self._leases.schedulable())

        def read() -> list[Any]:
            pipe = self._client.pipeline(transaction=False)
            for s in shards:
                pipe.zrange(self.keys.shard(s, "ready"), 0, len(exclude), withscores=True)
            return list(pipe.execute())

        best: float | None = None
        for rows in self._retry(read):
            for host, score in rows:
                if host not in exclude:
                    best = score if best is None else min(best, score)
                    break
        return best

    def set_host_ready_at(self, host: str, ready_at: float) -> None:
        self._check_open()
        s = self.shard_of(host)
        keys = [*self._shard_keys(s, "ready", "hosts"), *self.keys.host_pair(s, host)]
        self._retry(
            lambda: self._scripts.run_many([("set_ready", keys, [host, repr(float(ready_at))])])
        )

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
        calls = []
        for s, items in by_shard.items():
            keys = self._shard_keys(s, "urls", "pq", "ready", "hosts", "leases", "totals", "owner")
            keys += self._host_keys(s, [h for h, _ in items])
            mode = {None: "", True: "revisits", False: "new"}[revisits_first]
            args: list[Any] = [repr(float(now)), repr(float(expires)), self._node, 1, mode]
            args.append(len(items))
            for h, n in items:
                args += [h, n]
            calls.append(("lease", keys, args))
        replies = self._retry(lambda: self._scripts.run_many(calls))
        by_host: dict[str, list[LeasedUrl]] = {}
        for reply in replies:
            for i in range(0, len(reply), 3):
                rec = json.loads(reply[i + 1])
                url_id = int(reply[i])
                self._lease_hosts[url_id] = rec[1]
                by_host.setdefault(rec[1], []).append(_leased(url_id, rec, expires))
        out: list[LeasedUrl] = []
        for host, _ in wants:
            out += by_host.pop(host, [])
        return out

    def lease(self, host: str, n: int, now: float, lease_seconds: float) -> list[LeasedUrl]:
        return self.lease_many([(host, n)], now, lease_seconds)

    def drop_host(self, host: str, reason: str) -> int:
        self._check_open()
        s = self.shard_of(host)
        keys = [
            *self._shard_keys(s, "urls", "pq", "ready", "totals"),
            *self.keys.host_pair(s, host),
        ]
        dropped = int(self._retry(lambda: self._scripts.run_many([("drop_host", keys, [host])]))[0])
        if dropped:
            log.info("dropped %d queued URLs of %s: %s", dropped, host, reason)
        return dropped

    # -- leases ----------------------------------------------------------------------------

    def reclaim_expired(self, now: float, limit: int = 1000) -> int:
        self._check_open()

        def expired() -> list[Any]:
            pipe = self._client.pipeline(transaction=False)
            for s in range(self.shards):
                pipe.zrangebyscore(
                    self.keys.shard(s, "leases"), "-inf", f"({now!r}", start=0, num=limit
                )
            return list(pipe.execute())

        found = [(s, m) for s, rows in enumerate(self._retry(expired)) for m in rows][:limit]
        return self._requeue(found, bound=repr(float(now)))

    def extend_leases(self, ids: Sequence[int], now: float, lease_seconds: float) -> int:
        self._check_open()
        if not ids:
            return 0
        expires = now + lease_seconds
        suffix = "|" + self._node

        def extend() -> list[Any]:
            # XX: only a member that exists (this node's lease) gets the new score; a
            # lease reclaimed or taken by another node has another member and stays as is
            by_shard: dict[int, dict[str, float]] = {}
            for i in ids:
                by_shard.setdefault(i % self.shards, {})[member(i) + suffix] = expires
            pipe = self._client.pipeline(transaction=False)
            for s, members in by_shard.items():
                pipe.zadd(self.keys.shard(s, "leases"), members, xx=True, ch=True)
            return list(pipe.execute())

        return sum(int(n) for n in self._retry(extend))

    def release_own_leases(self) -> int:
        self._check_open()

        def mine() -> list[Any]:
            pipe = self._client.pipeline(transaction=False)
            for s in range(self.shards):
                pipe.zrange(self.keys.shard(s, "leases"), 0, -1)
            return list(pipe.execute())

        suffix = "|" + self._node
        found = [
            (s, m) for s, rows in enumerate(self._retry(mine)) for m in rows if m.endswith(suffix)
        ]
        self._lease_hosts.clear()
        return self._requeue(found, bound="")

    def release_all_leases(self) -> int:
        return self.release_own_leases()

    def _requeue(self, found: list[tuple[int, str]], bound: str) -> int:
        if not found:
            return 0
        ids = [int(m.split("|", 1)[0]) for _, m in found]
        hosts = self._retry(lambda: self._hosts_of(ids))
        by_shard: dict[int, list[Any]] = {}
        for (s, lease), url_id in zip(found, ids, strict=True):
            host = hosts.get(url_id)
            if host is not None:
                by_shard.setdefault(s, []).append((lease, host, "reclaim", "0", bound, ""))
        calls = [self._settle_call(s, items) for s, items in by_shard.items()]
        return sum(int(r) for r in self._retry(lambda: self._scripts.run_many(calls)))

    # -- shared per-crawl state ------------------------------------------------------------

    def find_payloads(self, digests: Sequence[str]) -> dict[str, tuple[str, str]]:
        self._check_open()
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
        self._check_open()

        def write() -> None:
            pipe = self._client.pipeline(transaction=False)
            for d, uri, date in items:
                key = self.keys.shard(shard_of_digest(d, self.shards), "payloads")
                pipe.hsetnx(key, d, json.dumps([uri, date]))
            pipe.execute()

        self._retry(write)

    def get_host_states(self, hosts: Sequence[str]) -> dict[str, str]:
        self._check_open()
        wanted = list(dict.fromkeys(hosts))

        def read() -> list[Any]:
            pipe = self._client.pipeline(transaction=False)
            for h in wanted:
                pipe.hget(self.keys.shard(self.shard_of(h), "hstate"), h)
            return list(pipe.execute())

        return {h: v for h, v in zip(wanted, self._retry(read), strict=True) if v is not None}

    def put_host_states(self, items: Sequence[tuple[str, str]]) -> None:
        self._check_open()

        def write() -> None:
            pipe = self._client.pipeline(transaction=False)
            for h, v in items:
                pipe.hset(self.keys.shard(self.shard_of(h), "hstate"), h, v)
            pipe.execute()

        self._retry(write)

    def counts(self) -> FrontierCounts:
        """The crawl's totals. An empty frontier (nothing queued, nothing leased) is
        reported only from a consistent snapshot: the shards are read again until two
        reads in a row agree, since a page's settlement and its links' admission touch
        several shards one after another and a single pass could fall between them."""
        self._check_open()
        counts, raw = self._retry(lambda: read_counts_raw(self._client, self.keys, self.shards))
        for _ in range(10):
            if counts.queued or counts.leased:
                break
            again, raw2 = self._retry(lambda: read_counts_raw(self._client, self.keys, self.shards))
            if raw2 == raw:
                break
            counts, raw = again, raw2
        self._queued = {}
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

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._leases.close()
        self._client.close()


def read_counts(client: Any, keys: CrawlKeys, shards: int) -> FrontierCounts:
    """The crawl's totals, summed over its shards (one pipeline)."""
    return read_counts_raw(client, keys, shards)[0]


def read_counts_raw(client: Any, keys: CrawlKeys, shards: int) -> tuple[FrontierCounts, Any]:
    """The crawl's totals and the raw per-shard replies they were summed from."""
    pipe = client.pipeline(transaction=False)
    for s in range(shards):
        pipe.hmget(keys.shard(s, "totals"), list(_TOTALS))
        pipe.zcard(keys.shard(s, "ready"))
    replies = pipe.execute()
    sums = dict.fromkeys(_TOTALS, 0)
    hosts_queued = 0
    for i in range(0, len(replies), 2):
        for name, v in zip(_TOTALS, replies[i], strict=True):
            sums[name] += int(v or 0)
        hosts_queued += int(replies[i + 1])
    counts = FrontierCounts(
        queued=sums["queued"],
        leased=sums["leased"],
        done=sums["done"],
        failed=sums["failed"],
        seen=sums["seen"],
        hosts_queued=hosts_queued,
        shed={r: sums[f"shed:{r}"] for r in SHED_REASONS},
    )
    return counts, replies


def _leased(url_id: int, rec: list[Any], expires: float) -> LeasedUrl:
    url, host, depth, priority, fp, via, attempts = rec[:7]
    validators = rec[7] if len(rec) > 7 and isinstance(rec[7], str) else None
    fetches = int(rec[8]) if len(rec) > 8 else 0
    return LeasedUrl(
        url_id,
        url,
        host,
        int(depth),
        int(priority),
        int(fp),
        via,
        int(attempts),
        expires,
        validators,
        fetches,
    )
