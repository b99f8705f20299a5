"""The crawl epoch: how a node notices a Redis that no longer holds its crawl, whether
the keys went while the server ran (FLUSHALL, eviction under ``maxmemory``, a failover
to a replica that had not received them) or across a restart.

Contract:

- A crawl's epoch is a random token E drawn by whoever creates the crawl. Every shard
  has the key ``hw:{C:s}:epoch:E`` and the crawl's meta hash the field ``epoch`` = E;
  the shard keys are written first, so a node that reads E finds every one of them (a
  node that finds one missing at start stops: the crawl is lost).
- Every Lua script gets its shard's epoch key as its last key (``Scripts`` appends it)
  and refuses to act without it: it returns an error starting ``HWLOST`` and writes
  nothing, so no write lands in a frontier that lost its keys and no script re-creates
  a lost shard. The shard heartbeat reads the meta hash's ``epoch`` each time; a read of
  the frontier's counts that would report it empty checks every shard's epoch key first.
- Whatever notices the loss marks it (``LostCrawl``); from then on the node's frontier
  leases nothing and settles nothing, the node stops after storing what it fetched, and
  closing the frontier raises ``CrawlLostError`` with ``lost_message``: one line, exit 2.
- A server that may evict keys (``maxmemory`` set and ``maxmemory-policy`` other than
  ``noeviction``) is refused at start (``check_eviction``); a policy other than
  ``noeviction`` without a ``maxmemory`` is a warning (eviction starts the day one is set).
"""

from __future__ import annotations

import functools
import logging
import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar, cast

import redis
from redis.exceptions import RedisClusterException

from headway.errors import StoreError
from headway.frontier.redis.keys import PREFIX, CrawlKeys

log = logging.getLogger(__name__)

#: The start of the error a script returns when its shard's epoch key is missing.
LOST_MARK = "HWLOST"


class CrawlLostError(StoreError):
    """Redis no longer holds the crawl's keys: the shared frontier is lost."""


def epoch_key_of(first_key: str, token: str) -> str:
    """The epoch key of the shard (or crawl) whose hash tag ``first_key`` carries."""
    tag = first_key[first_key.index("{") + 1 : first_key.index("}")]
    return f"{PREFIX}:{{{tag}}}:epoch:{token}"


def is_lost_reply(exc: BaseException) -> bool:
    return isinstance(exc, redis.ResponseError) and str(exc).startswith(LOST_MARK)


def open_epoch(client: Any, keys: CrawlKeys, shards: int) -> str:
    """The crawl's epoch token: created with the crawl (or for a crawl an older version
    created), else read back after checking that every shard still has its key."""
    token = client.hget(keys.meta, "epoch")
    if token is None:
        mine = secrets.token_hex(8)
        pipe = client.pipeline(transaction=False)
        for s in range(shards):
            pipe.set(epoch_key_of(keys.shard(s, "epoch"), mine), 1)
        pipe.execute()
        if client.hsetnx(keys.meta, "epoch", mine):
            return mine
        # another node created the crawl at the same moment: its epoch is the crawl's
        pipe = client.pipeline(transaction=False)
        for s in range(shards):
            pipe.delete(epoch_key_of(keys.shard(s, "epoch"), mine))
        pipe.execute()
        token = client.hget(keys.meta, "epoch")
    missing = missing_shards(client, keys, shards, str(token))
    if missing:
        raise CrawlLostError(
            f"crawl {keys.crawl!r} has lost the keys of {len(missing)} of its {shards} shards"
            " (a flush, eviction or a failover to a replica without them): its shared"
            " frontier is incomplete, so no node can go on with it; start it afresh under a"
            " new --crawl-id"
        )
    return str(token)


def missing_shards(client: Any, keys: CrawlKeys, shards: int, token: str) -> list[int]:
    """Shards whose epoch key is gone (one pipeline)."""
    pipe = client.pipeline(transaction=False)
    for s in range(shards):
        pipe.exists(epoch_key_of(keys.shard(s, "epoch"), token))
    return [s for s, found in enumerate(pipe.execute()) if not found]


def _infos(client: Any, section: str) -> list[dict[str, Any]]:
    """``INFO section`` of the server, or of every master of a cluster."""
    info = client.info(section)
    if any(isinstance(v, dict) for v in info.values()):
        return [v for v in info.values() if isinstance(v, dict)]
    return [info]


def check_eviction(client: Any, shown: str) -> None:
    """Refuse a server that may evict the crawl's keys; warn about one that could."""
    for info in _infos(client, "memory"):
        policy = str(info.get("maxmemory_policy", "noeviction"))
        limit = int(info.get("maxmemory", 0) or 0)
        if policy == "noeviction":
            continue
        if limit:
            raise StoreError(
                f"Redis {shown} evicts keys under maxmemory (maxmemory-policy {policy},"
                f" maxmemory {limit} bytes): it would drop a crawl's keys silently; set"
                " maxmemory-policy noeviction (CONFIG SET maxmemory-policy noeviction)"
            )
        log.warning(
            "Redis %s has maxmemory-policy %s: harmless while maxmemory is 0, but it would"
            " evict the crawl's keys once a maxmemory is set; use noeviction",
            shown,
            policy,
        )


@dataclass(frozen=True, slots=True)
class LossFacts:
    """What the server says about itself when the loss is found."""

    restarted: bool  # a server's run id changed since the node started
    aof: bool | None  # AOF on (every master, for a cluster); None: unknown
    evicted: int  # keys evicted since the server started
    policy: str  # maxmemory-policy (the first master's)


def loss_facts(client: Any, restarted: bool) -> LossFacts:
    try:
        persistence = _infos(client, "persistence")
        stats = _infos(client, "stats")
        memory = _infos(client, "memory")
    except (redis.RedisError, RedisClusterException):
        return LossFacts(restarted, None, 0, "")
    aof = all(int(i.get("aof_enabled", 0) or 0) == 1 for i in persistence)
    evicted = sum(int(i.get("evicted_keys", 0) or 0) for i in stats)
    policy = str(memory[0].get("maxmemory_policy", "")) if memory else ""
    return LossFacts(restarted, aof, evicted, policy)


def lost_message(store: str, crawl: str | None, facts: LossFacts) -> str:
    """One line: what happened to the crawl, and what the operator can do."""
    aof = {True: "AOF was on", False: "AOF was off", None: "AOF unknown"}[facts.aof]
    if facts.restarted and facts.aof is False:
        what = "the server restarted with AOF off, so it came back without the crawl"
        advice = "; run Redis with --appendonly yes so that a restart keeps a crawl"
    elif facts.restarted:
        what = (
            f"a server restarted or was replaced by a failover ({aof}) and came back"
            " without it (a replica that had not received the keys, or an AOF file turned"
            " on after the crawl began, deleted or from another server)"
        )
        advice = ""
    elif facts.evicted and facts.policy not in ("", "noeviction"):
        what = (
            f"the server evicted keys under maxmemory ({facts.evicted} keys,"
            f" maxmemory-policy {facts.policy}; {aof})"
        )
        advice = "; set maxmemory-policy noeviction and a maxmemory that fits the crawl"
    else:
        what = (
            f"its keys went while the server ran ({aof}, which does not guard against"
            " this): a FLUSHALL/FLUSHDB, or a failover to a replica that had not received"
            " them"
        )
        advice = ""
    return (
        f"Redis {store} no longer holds crawl {crawl!r}: {what}. This node stopped; the"
        " pages it fetched are in its crawl directory (crawl log and WARC files). The"
        " shared frontier cannot be recovered: running the crawl again starts it afresh"
        f" and fetches every page again{advice}"
    )


class LostCrawl:
    """The loss of the crawl, once noticed (by any thread of the node)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.message: str | None = None

    def mark(self, message: str) -> None:
        with self._lock:
            if self.message is None:
                self.message = message

    def __bool__(self) -> bool:
        return self.message is not None


F = TypeVar("F", bound=Callable[..., Any])


def unless_lost(fallback: Callable[[Any], Any]) -> Callable[[F], F]:
    """A frontier method that, once the crawl is lost, does nothing and returns
    ``fallback(self)``; a ``CrawlLostError`` inside it marks the loss (``self._lose()``)
    and returns the same, so the node's stages drain what it fetched instead of failing."""

    def wrap(method: F) -> F:
        @functools.wraps(method)
        def run(self: Any, *args: Any, **kwargs: Any) -> Any:
            if self.crawl_lost is None:
                try:
                    return method(self, *args, **kwargs)
                except CrawlLostError:
                    self._lose()
            return fallback(self)

        return cast(F, run)

    return wrap
