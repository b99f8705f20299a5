"""The cluster client's script routing (``script_routing``) with the installed redis-py:
EVALSHA and EVAL are routed by the slot of their keys, every other command by the
fallback, also once the resolver is chained again through ``with_fallback`` (redis-py
8.2 rebuilt the base class this resolver extends)."""

from __future__ import annotations

import pytest

from headway.frontier.redis.connect import script_routing


def test_scripts_are_routed_by_their_keys_and_the_rest_falls_back() -> None:
    routing = script_routing()
    if not routing:
        pytest.skip("redis-py before 8 has no command policies")
    from redis._parsers.commands import RequestPolicy
    from redis.commands.policies import StaticPolicyResolver

    resolver = routing["policy_resolver"]
    static = StaticPolicyResolver()
    for chained in (resolver, resolver.with_fallback(static)):
        for name in ("evalsha", "eval"):
            found = chained.resolve(name)
            assert found is not None
            assert found.request_policy == RequestPolicy.DEFAULT_KEYED
        # a command the scripts' records do not carry is answered by the fallback
        assert chained.resolve("get") == static.resolve("get")
        assert chained.resolve("get") is not None
    # a chain is a new resolver of the same kind, the original unchanged
    assert type(resolver.with_fallback(static)) is type(resolver)
