"""Redis clients and the frontier's Lua scripts. Store URLs are parsed and masked in
``headway.frontier.storeurl`` (re-exported here), which needs no Redis client."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from importlib import resources
from typing import Any

import redis
from redis.backoff import NoBackoff
from redis.cluster import ClusterNode, RedisCluster
from redis.exceptions import NoScriptError, RedisClusterException
from redis.retry import Retry

from headway.errors import StoreError
from headway.frontier.redis.epoch import epoch_key_of
from headway.frontier.storeurl import (
    SCHEMES,
    StoreUrl,
    is_redis_url,
    mask_store_url,
    parse_store_url,
)

log = logging.getLogger(__name__)

__all__ = [
    "SCHEMES",
    "SCRIPT_NAMES",
    "Scripts",
    "StoreUrl",
    "connect",
    "is_redis_url",
    "mask_store_url",
    "parse_store_url",
    "script_routing",
    "script_text",
]

SCRIPT_NAMES = (
    "admit",
    "lease",
    "settle",
    "drop_host",
    "set_ready",
    "worst",
    "evict",
    "shard",
    "park",
)


def script_routing() -> dict[str, Any]:
    """Options of a cluster client that route a pipelined EVALSHA by its keys as given.
    redis-py 8's cluster pipeline asks the server for the keys of every EVALSHA it
    queues (``COMMAND GETKEYS``: one more command and round trip per script call, as many
    as the scripts themselves in the soak), although its other paths read them from the
    arguments; naming EVALSHA's policy (keyed: the slot of its keys) skips that.
    Earlier versions have no such policies and need nothing."""
    try:
        from redis._parsers.commands import CommandPolicies, RequestPolicy, ResponsePolicy
        from redis.commands.policies import BasePolicyResolver, StaticPolicyResolver
    except ImportError:  # redis-py before 8
        return {}
    keyed = CommandPolicies(
        request_policy=RequestPolicy.DEFAULT_KEYED, response_policy=ResponsePolicy.DEFAULT_KEYED
    )

    policies: dict[str, dict[str, CommandPolicies]] = {"core": {"evalsha": keyed, "eval": keyed}}

    class ScriptPolicies(BasePolicyResolver):
        # Keeps its own records: redis-py 8.2 rebuilt the base class around a metadata
        # resolver, and the attribute 8.0 and 8.1 kept them in (``_policies``) is gone.
        def __init__(self, fallback: Any = None) -> None:
            super().__init__(policies, fallback)

        def with_fallback(self, fallback: Any) -> Any:
            return ScriptPolicies(fallback)

    return {"policy_resolver": ScriptPolicies(StaticPolicyResolver())}


class _Cluster(RedisCluster):
    """A cluster client whose pipelines use its own command policies (``script_routing``):
    redis-py 8.1 gives every pipeline the default ones."""

    def pipeline(self, transaction: Any = None, shard_hint: Any = None) -> Any:
        pipe = super().pipeline(transaction, shard_hint)  # type: ignore[no-untyped-call]
        pipe._policy_resolver = self._policy_resolver
        return pipe


def _cluster_client(nodes: list[ClusterNode], options: dict[str, Any]) -> Any:
    routing = script_routing()
    if not routing:
        return RedisCluster(startup_nodes=nodes, **options)
    return _Cluster(startup_nodes=nodes, **options, **routing)


def connect(
    url: StoreUrl,
    *,
    timeout: float = 5.0,
    on_connection: Callable[[Any], None] | None = None,
) -> Any:
    """A client (``redis.Redis`` or ``RedisCluster``) with string replies.
    ``on_connection(conn)``: called with every connection the client opens (also one
    opened again, without a word, after the server went away), set up and before its
    first command."""
    # No retries inside the client: the frontier retries whole calls itself, with backoff
    # and one log line (see ``RedisFrontier``).
    common: dict[str, Any] = {
        "retry": Retry(NoBackoff(), 0),
        "username": url.username,
        "password": url.password,
        "decode_responses": True,
        "socket_timeout": timeout,
        "socket_connect_timeout": timeout,
        "ssl": url.tls,
    }
    if on_connection is not None:
        hook = on_connection

        def set_up(conn: Any) -> None:
            conn.on_connect()  # what the client does without a hook (AUTH, SELECT, ...)
            hook(conn)

        # a cluster client sets connections up itself, then calls this with each
        common["redis_connect_func"] = hook if url.cluster else set_up
    try:
        if url.cluster:
            nodes = [ClusterNode(h, p) for h, p in url.nodes]  # type: ignore[no-untyped-call]
            return _cluster_client(nodes, common)
        host, port = url.nodes[0]
        return redis.Redis(host=host, port=port, db=url.db, **common)
    except (redis.RedisError, RedisClusterException) as exc:
        # (a cluster none of whose listed nodes answers raises the latter)
        raise StoreError(f"cannot reach Redis {url.masked()}: {exc}") from exc


def script_text(name: str) -> str:
    lua = resources.files("headway.frontier.redis").joinpath("lua")
    common = lua.joinpath("common.lua").read_text()
    return common + "\n" + lua.joinpath(f"{name}.lua").read_text()


class Scripts:
    """The frontier's Lua scripts, loaded by SHA and reloaded when a restarted server
    (or a new cluster master) no longer knows them. Every call gets the crawl epoch key
    of its shard (the hash tag of its first key) as its last key (see ``epoch.py``)."""

    def __init__(self, client: Any, epoch: str) -> None:
        self._client = client
        self.epoch = epoch
        self.text = {name: script_text(name) for name in SCRIPT_NAMES}
        self.sha: dict[str, str] = {}
        self.load()

    def load(self) -> None:
        for name, text in self.text.items():
            self.sha[name] = self._client.script_load(text)

    def _keys(self, keys: list[str]) -> list[str]:
        return [*keys, epoch_key_of(keys[0], self.epoch)]

    def call(self, name: str, keys: list[str], args: list[Any]) -> Any:
        keys = self._keys(keys)
        try:
            return self._client.evalsha(self.sha[name], len(keys), *keys, *args)
        except NoScriptError:
            self.load()
            return self._client.evalsha(self.sha[name], len(keys), *keys, *args)

    def run_many(self, calls: Sequence[tuple[str, list[str], list[Any]]]) -> list[Any]:
        """Run script calls (name, keys, args) in one pipeline; results in order. Calls that
        a restarted server did not know (NOSCRIPT) run again after reloading, only they:
        a script either ran whole or not at all, so nothing runs twice."""
        results: list[Any] = [None] * len(calls)
        todo = list(range(len(calls)))
        for attempt in range(3):
            pipe = self._client.pipeline(transaction=False)
            for i in todo:
                name, keys, args = calls[i]
                keys = self._keys(keys)
                pipe.execute_command("EVALSHA", self.sha[name], len(keys), *keys, *args)
            replies = pipe.execute(raise_on_error=False) if todo else []
            missing = []
            for i, reply in zip(todo, replies, strict=True):
                if isinstance(reply, NoScriptError):
                    missing.append(i)
                elif isinstance(reply, Exception):
                    raise reply
                else:
                    results[i] = reply
            if not missing:
                return results
            if attempt == 2:
                break
            self.load()
            todo = missing
        raise StoreError("Redis keeps forgetting the frontier's scripts")
