"""Admission into the shared frontier: one ``admit.lua`` call per shard for a batch of
URLs (seen check in the shard's seen buckets, host budget, queueing),
then the global ``max_queued`` cap, enforced after the calls by shedding the globally
worst queued URLs (``evict.lua``), since no one script sees every shard.

The queued total per shard is cached: each admission's reply updates its shard, and the
node's periodic ``counts()`` the shards it read (a window of them in turn, see
``counts.py``); shedding reads every shard only when the cached total says the cap may
be passed, or when nothing refreshed the cache for 2 s (a node that does not read its
counts).
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any

from headway.frontier.redis.connect import Scripts
from headway.frontier.redis.keys import CrawlKeys, seen_bucket, shard_of_host
from headway.frontier.store import (
    SHED_FRONTIER_FULL,
    SHED_HOST_BUDGET,
    SHED_REASONS,
    AddResult,
    FrontierLimits,
    UrlEntry,
)

#: One script call of a pipeline: (script name, KEYS, ARGV).
Call = tuple[str, list[str], list[Any]]


def shed_plan(counted: list[dict[int, int]], excess: int) -> dict[int, tuple[int, int, int]]:
    """What each shard sheds so that ``excess`` URLs go, the worst first: from the
    URLs each shard counted per level (worst.lua), the level T at which the excess is
    reached; every shard sheds its URLs above T and a share of those at T. Returns
    shard -> (T, URLs at T, URLs above T), for shards with something to shed."""
    total: dict[int, int] = {}
    for per_level in counted:
        for level, n in per_level.items():
            total[level] = total.get(level, 0) + n
    if not total:
        return {}
    ordered = sorted(total, reverse=True)
    threshold, above = ordered[-1], 0
    for level in ordered:
        if above + total[level] >= excess:
            threshold = level
            break
        above += total[level]
    need = excess - above
    plan: dict[int, tuple[int, int, int]] = {}
    for s, per_level in enumerate(counted):
        over = sum(n for level, n in per_level.items() if level > threshold)
        at = min(need, per_level.get(threshold, 0))
        need -= at
        if over or at:
            plan[s] = (threshold, at, over)
    return plan


class RedisAdmission:
    """Admission for one node's client of a crawl of ``shards`` shards."""

    def __init__(
        self,
        client: Any,
        scripts: Scripts,
        keys: CrawlKeys,
        shards: int,
        limits: FrontierLimits,
        *,
        seen_bits: int,
    ) -> None:
        self._client = client
        self._scripts = scripts
        self.keys = keys
        self.shards = shards
        self._limits = limits
        self._seen_bits = seen_bits
        self._queued: dict[int, int] = {}
        self._queued_at = 0.0

    def note_queued(self, per_shard: dict[int, int]) -> None:
        """The queued totals of the shards as ``counts()`` last read them."""
        self._queued = dict(per_shard)
        self._queued_at = time.monotonic()

    def calls(self, entries: Sequence[UrlEntry]) -> tuple[list[Call], int]:
        """One admit.lua call per shard for ``entries``, and the duplicates within them."""
        unique: dict[int, UrlEntry] = {}
        for e in entries:
            unique.setdefault(e.fp, e)
        by_shard: dict[int, dict[str, list[UrlEntry]]] = {}
        for e in unique.values():
            by_shard.setdefault(shard_of_host(e.host, self.shards), {}).setdefault(
                e.host, []
            ).append(e)
        calls = []
        for shard, groups in by_shard.items():
            hosts = list(groups)
            keys = self.keys.shard_keys(shard, "worst", "ready", "hosts", "admitted", "totals")
            keys += self.keys.host_keys(shard, hosts)
            buckets: dict[int, int] = {}
            per_url: list[Any] = []
            for hidx, host in enumerate(hosts, 1):
                for e in groups[host]:
                    b = buckets.setdefault(seen_bucket(e.fp, self._seen_bits), len(buckets) + 1)
                    record = [e.url, e.host, e.depth, e.priority, str(e.fp), e.via, e.attempts]
                    record += [e.validators, 0]
                    if e.handler is not None:  # a document: a link's record stays 9 long
                        record.append(e.handler)
                    per_url += [b, e.fp, hidx, e.priority, repr(float(e.not_before))]
                    per_url.append(json.dumps(record, separators=(",", ":")))
            keys += [self.keys.seen(shard, b) for b in buckets]
            args: list[Any] = [self._limits.host_budget, self.shards, shard, len(hosts)]
            args += [len(buckets), *hosts, *per_url]
            calls.append(("admit", keys, args))
        return calls, len(entries) - len(unique)

    def results(self, calls: list[Call], replies: list[Any], dups: int) -> AddResult:
        """What the calls did, with the global ``max_queued`` enforced after them."""
        added = evicted = 0
        shed = dict.fromkeys(SHED_REASONS, 0)
        new_ids: set[int] = set()
        for (_, _, args), reply in zip(calls, replies, strict=True):
            added += int(reply[0])
            dups += int(reply[1])
            shed[SHED_HOST_BUDGET] += int(reply[2])
            evicted += int(reply[3])
            self._queued[int(args[2])] = int(reply[4])
            new_ids.update(int(m) for m in reply[5])
        if added:
            over_added, over_evicted = self._enforce_max_queued(new_ids)
            added -= over_added
            evicted += over_evicted
            shed[SHED_FRONTIER_FULL] += over_added + over_evicted
        return AddResult(added, dups, shed, evicted)

    def _enforce_max_queued(self, new_ids: set[int]) -> tuple[int, int]:
        """Shed the globally worst queued URLs when the frontier is over ``max_queued``,
        down to 99.9 % of it:
        returns (URLs of this batch shed, older queued URLs evicted)."""
        cap = self._limits.max_queued
        now = time.monotonic()
        if now - self._queued_at > 2.0 or len(self._queued) < self.shards:
            self._queued = dict(enumerate(self._shard_totals("queued")))
            self._queued_at = now
        if sum(self._queued.values()) <= cap:
            return 0, 0
        batch = older = 0
        # once over the cap, shed down to 99.9 % of it: a frontier held at its cap then
        # sheds once per 0.1 % of it admitted, not at every admission
        target = cap - cap // 1000
        for _ in range(5):
            self._queued = dict(enumerate(self._shard_totals("queued")))
            excess = sum(self._queued.values()) - target
            if excess <= 0:
                break
            reads = [
                ("worst", [self.keys.shard(s, "worst")], [excess, self.keys.queue(s, "")])
                for s in range(self.shards)
            ]
            counted = [
                {int(rows[i]): int(rows[i + 1]) for i in range(0, len(rows), 2)}
                for rows in self._scripts.run_many(reads)
            ]
            plan = shed_plan(counted, excess)
            if not plan:
                break  # only URLs waiting for a retry or revisit are left: never shed
            gone = self._evict(plan)
            batch += sum(1 for i in gone if int(i) in new_ids)
            older += sum(1 for i in gone if int(i) not in new_ids)
            if not gone:
                break
        return batch, older

    def _evict(self, plan: dict[int, tuple[int, int, int]]) -> list[str]:
        """Shed, in each shard, the URLs above level T and ``at`` URLs at T; the ids."""
        calls = []
        for s, (level, at, above) in plan.items():
            keys = self.keys.shard_keys(s, "worst", "ready", "hosts", "admitted", "totals")
            prefixes = [self.keys.queue(s, ""), self.keys.waiting(s, "")]
            calls.append(("evict", keys, [level, at, above, *prefixes]))
        gone: list[str] = []
        for reply in self._scripts.run_many(calls):
            gone += reply
        return gone

    def _shard_totals(self, name: str) -> list[int]:
        pipe = self._client.pipeline(transaction=False)
        for s in range(self.shards):
            pipe.hget(self.keys.shard(s, "totals"), name)
        return [int(v or 0) for v in pipe.execute()]
