"""The Redis key layout of a crawl: the one place it is written down.

Every key starts with ``hw:`` and carries a hash tag, so Redis Cluster places it by the
tag alone. ``C`` is the crawl id, ``s`` a shard number (0 <= s < S), ``H`` a host
(lower-case, with ``:port`` when not the default), ``N`` a node id. A URL's ``id`` is
``seq * S + s`` (``seq`` from the shard's counter), so its shard is ``id % S``; as a
member it is written zero-padded to 15 digits (``M``), so equal scores order oldest first.
A URL's record is JSON ``[url, host, depth, priority, fp, via, attempts, validators,
fetches, handler]``; ``handler`` (the content handler a document was admitted to be read
with) is left out for a link, and records written before it existed have none. A QUEUED
URL is one string, ``M`` followed by its record (``M+R``): it is stored once, in its
host's level list or waiting set, with nothing else per URL.

Per crawl, tag ``{C}`` (one slot, small keys):

- ``hw:{C}:meta`` HASH: ``shards`` (S, fixed when the crawl is created), ``layout``
  (``LAYOUT``: the version of this layout), ``seen_bits`` (b: each shard's seen set is
  split into 2^b buckets), ``shard_ttl`` (the creator's: what ``headway status`` counts
  as live), ``epoch`` (the crawl epoch E, see ``epoch.py``), and every
  ``set_meta`` key as ``m:<key>``. A crawl made by an earlier version has no ``layout``
  (it had a Bloom bitmap, one seen set, a record hash and per-URL sorted sets per
  shard): it is refused with one line (``opening.py``).
- ``hw:{C}:nodes`` ZSET: N scored by its last heartbeat (unix time); live = recent.
- ``hw:{C}:node:N`` STRING with a TTL: the node's published statistics (JSON).
- ``hw:{C}:console:N`` STRING with a TTL: the node's console snapshot (JSON, see
  ``runtime/snapshot.py``), renewed every few seconds while the node runs.
- ``hw:{C}:controls`` LIST: the control log, one JSON record per control; a control's
  sequence number is its 1-based position (``control/redis_log.py``).

Per shard, tag ``{C:s}`` (every read-check-write of the frontier touches one shard, so
each is one Lua script with its keys in ``KEYS[]``, unchanged on Redis Cluster; the one
exception, a host's level lists, are named by the scripts from the host's levels key,
which they extend, so they carry its hash tag and live in its slot):

- ``hw:{C:s}:epoch:E`` STRING: present while the shard's keys are; every script of the
  shard refuses to act without it.
- ``hw:{C:s}:seeded`` STRING: written after a node admitted seeds of the shard's hosts;
  a restart or failover that lost it may have lost them (they are offered again).
- ``hw:{C:s}:owner`` STRING with a TTL: the node holding the shard (renewed by heartbeat).
- ``hw:{C:s}:sn:B`` SET: every admitted fingerprint (the signed 64-bit integer, shed
  ones included) whose top b bits are B (``seen_bucket``): the exact seen set, one
  ``SADD`` a URL. Buckets are sized (``seen_bits_for``) to hold about 128 fingerprints
  at the crawl's expected size (``--bloom-capacity``), so Redis keeps each as an intset
  (8 bytes a fingerprint; a bucket past ``set-max-intset-entries``, 512 by default,
  becomes a hash table: still exact, about 6 times the memory).
- ``hw:{C:s}:lv:H`` ZSET P scored by P: the priority levels P of H's fresh URLs.
- ``hw:{C:s}:lv:H|P`` LIST of ``M+R``: H's fresh URLs of priority P (admitted without a
  not_before, never leased), oldest first (ids grow with admission); Redis packs a
  list's entries (listpack nodes), so a queued URL costs its string and a few bytes.
- ``hw:{C:s}:nb:H`` ZSET ``M+R`` scored by not_before (0: at once): H's other QUEUED
  URLs (admitted with a not_before, or queued again: a retry, a requeue, a revisit, a
  reclaimed lease). A lease takes, by priority then oldest first, from the heads of the
  level lists and the due members of this set.
- ``hw:{C:s}:urls`` HASH M -> record, for every LEASED URL and every parked one (its
  record leaves the queue for here while it is in flight or parked; deleted when DONE
  or FAILED).
- ``hw:{C:s}:worst`` ZSET H scored by its worst (highest) level, for hosts with fresh
  URLs: where shedding under ``max_queued`` finds the worst queued URLs (``worst.lua``);
  URLs waiting in ``nb`` (retries, revisits) are never shed.
- ``hw:{C:s}:ready`` ZSET H scored by its ready time: ready_at when H has fresh URLs,
  else max(ready_at, earliest not_before in ``nb``), for hosts with QUEUED URLs
  (Mercator's back-queue heap).
- ``hw:{C:s}:hosts`` HASH H -> ready_at (``set_host_ready_at``).
- ``hw:{C:s}:admitted`` HASH H -> URLs of H admitted in any state (the host budget).
- ``hw:{C:s}:leases`` ZSET ``M|N`` scored by lease expiry: the in-flight URLs and their node.
- ``hw:{C:s}:parked`` ZSET M scored by due time: pages waiting for their revisit that a
  run without recrawl set aside (``park_revisits``); their records stay in ``urls``.
- ``hw:{C:s}:totals`` HASH: queued, leased, done, failed, seen, fetched (DONE
  settlements, revisits included), parked, ``shed:<reason>``, next_id.
- ``hw:{C:s}:hstate`` HASH H -> the host's opaque state (robots rules, backoff).
- ``hw:{C:s}:payloads`` HASH payload digest -> JSON ``[uri, date]`` (shard by digest).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from functools import lru_cache

from headway.urls.domain import registered_domain

PREFIX = "hw"
DEFAULT_SHARDS = 64
#: The version of the key layout written down here (the crawl's meta ``layout``).
LAYOUT = 2
#: Fingerprints a seen bucket is sized for at the crawl's expected size.
SEEN_BUCKET_FILL = 128
_MASK64 = (1 << 64) - 1


def seen_bits_for(expected_urls: int, shards: int) -> int:
    """b such that 2^b buckets per shard hold about ``SEEN_BUCKET_FILL`` fingerprints each
    when the crawl has seen ``expected_urls`` URLs."""
    per_shard = max(1, expected_urls // max(1, shards))
    return max(0, math.ceil(math.log2(max(1.0, per_shard / SEEN_BUCKET_FILL))))


def seen_bucket(fp: int, bits: int) -> int:
    """The seen bucket of fingerprint ``fp``: its top ``bits`` bits."""
    return (fp & _MASK64) >> (64 - bits) if bits else 0


def stable_hash(text: str) -> int:
    """A 64-bit hash that is the same in every process and on every machine."""
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")


@lru_cache(maxsize=65_536)
def shard_of_host(host: str, shards: int) -> int:
    """The shard of a host: the hash of its registered domain, so every host of a site
    (www.example.com, cdn.example.com) is scheduled by the same node."""
    return stable_hash(registered_domain(host)) % shards


def shard_of_digest(digest: str, shards: int) -> int:
    return stable_hash(digest) % shards


def member(url_id: int) -> str:
    return f"{url_id:015d}"


class CrawlKeys:
    """Key names of one crawl (see the module docstring)."""

    __slots__ = ("crawl",)

    def __init__(self, crawl: str) -> None:
        self.crawl = crawl

    @property
    def meta(self) -> str:
        return f"{PREFIX}:{{{self.crawl}}}:meta"

    @property
    def nodes(self) -> str:
        return f"{PREFIX}:{{{self.crawl}}}:nodes"

    @property
    def controls(self) -> str:
        return f"{PREFIX}:{{{self.crawl}}}:controls"

    def node(self, node: str) -> str:
        return f"{PREFIX}:{{{self.crawl}}}:node:{node}"

    def console(self, node: str) -> str:
        return f"{PREFIX}:{{{self.crawl}}}:console:{node}"

    def shard(self, shard: int, name: str) -> str:
        return f"{PREFIX}:{{{self.crawl}:{shard}}}:{name}"

    def queue(self, shard: int, host: str) -> str:
        """The host's levels key (its level lists' names extend it, see the docstring)."""
        return f"{PREFIX}:{{{self.crawl}:{shard}}}:lv:{host}"

    def waiting(self, shard: int, host: str) -> str:
        return f"{PREFIX}:{{{self.crawl}:{shard}}}:nb:{host}"

    def seen(self, shard: int, bucket: int) -> str:
        return f"{PREFIX}:{{{self.crawl}:{shard}}}:sn:{bucket}"

    def host_pair(self, shard: int, host: str) -> tuple[str, str]:
        return self.queue(shard, host), self.waiting(shard, host)

    def shard_keys(self, shard: int, *names: str) -> list[str]:
        """The named keys of one shard, in order (a script's ``KEYS``)."""
        return [self.shard(shard, n) for n in names]

    def host_keys(self, shard: int, hosts: Sequence[str]) -> list[str]:
        """The (queue, waiting) key pair of each host, flattened (a script's ``KEYS``)."""
        out: list[str] = []
        for h in hosts:
            out.extend(self.host_pair(shard, h))
        return out
