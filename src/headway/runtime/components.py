"""Factories: each component of a node built from its section of the settings, in one
place, so components themselves take plain arguments and are testable alone."""

from __future__ import annotations

from pathlib import Path

from headway.fetch.client import FetchConfig
from headway.fetch.resolver import load_hosts_file, parse_resolve_rules
from headway.frontier.backends import SharedOptions, StoreTarget
from headway.frontier.store import FrontierLimits
from headway.policy.politeness import HostLimitParams
from headway.policy.retry import RetryParams
from headway.settings import Settings
from headway.urls.canonical import DEFAULT_TRACKING_PARAMS, CanonOptions


def canon_options(settings: Settings) -> CanonOptions:
    extra = frozenset(p.lower() for p in settings.canon.strip_params)
    return CanonOptions(
        strip_params=DEFAULT_TRACKING_PARAMS | extra, sort_query=settings.canon.sort_query
    )


def fetch_config(settings: Settings) -> FetchConfig:
    f = settings.fetch
    connections = f.concurrency
    if f.proxy is not None and f.proxy_concurrency:
        # the proxy's own cap bounds the global in-flight limit
        connections = min(connections, f.proxy_concurrency)
    return FetchConfig(
        user_agent=settings.identity.user_agent,
        connect_timeout=f.connect_timeout,
        read_timeout=f.read_timeout,
        total_timeout=f.total_timeout,
        max_body=f.max_body,
        max_decoded=f.max_decoded,
        max_document=f.max_document_bytes,
        max_connections=connections,
        allow_loopback=f.allow_loopback,
        allow_private=f.allow_private,
        resolve=parse_resolve_rules(f.resolve),
        dns_ttl=f.dns_ttl,
        proxy=f.proxy,
        hosts=load_hosts_file(f.hosts_file) if f.hosts_file is not None else {},
        ca_file=f.ca_file,
        keepalive=keepalive_seconds(settings.politeness.delay),
        client=f.http_client,
    )


def keepalive_seconds(delay: float) -> float:
    """How long an idle connection is kept: past two politeness gaps (so a host's next
    request reuses its connection, and its TLS session), at least 5 s and at most 30 s
    (idle sockets number about requests per second times this)."""
    return max(5.0, min(30.0, 2 * delay + 1))


def frontier_limits(settings: Settings) -> FrontierLimits:
    """The frontier's caps from the frontier section of the settings."""
    f = settings.frontier
    return FrontierLimits(
        host_budget=f.host_budget, max_queued=f.max_queued, bloom_capacity=f.bloom_capacity
    )


def store_target(settings: Settings, crawl_dir: Path, node_id: str) -> StoreTarget:
    """The frontier backend's own options for ``node_id``: the frontier's caps, the SQLite
    page cache, a shared crawl's options (the ``distributed`` section; a host whose shard
    changes hands waits one politeness gap)."""
    d = settings.distributed
    return StoreTarget(
        settings.frontier.store,
        crawl_dir,
        node_id,
        limits=frontier_limits(settings),
        cache_mib=settings.frontier.frontier_cache_mib,
        shared=SharedOptions(
            crawl_id=d.crawl_id,
            shards=d.shards,
            shard_ttl=d.shard_ttl,
            handover_gap=settings.politeness.delay,
            outage_limit=d.store_outage_limit,
        ),
    )


def host_limit_params(settings: Settings) -> HostLimitParams:
    p = settings.politeness
    return HostLimitParams(
        min_gap=p.delay,
        ceiling=p.max_per_host,
        backoff_max=p.backoff_max,
        park_seconds=p.park_seconds,
    )


def retry_params(settings: Settings) -> RetryParams:
    r = settings.retry
    return RetryParams(budget=r.retry_budget, base=r.retry_base, cap=r.retry_cap)
