"""Fixtures of the frontier contract suite: one ``store`` per backend.

A new backend joins the suite by adding its name to ``BACKENDS`` and a branch in
``_open_backend`` that opens (or reopens) the same store for one test, as the given node.
Tests that play several nodes open them one after another (close, then open as another
node): the embedded backend allows one open instance per file.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from headway.frontier.redis import RedisFrontier
from headway.frontier.sqlite import SqliteFrontier
from headway.frontier.store import FrontierLimits, FrontierStore, LeasedUrl, UrlEntry

BACKENDS = ["sqlite", "redis", "redis-cluster"]
#: Shards of the Redis test crawls: several, so that a cluster spreads them over masters.
TEST_SHARDS = 8
_crawl_ids = itertools.count()
NODE = "node-a"
TEST_LIMITS = FrontierLimits(bloom_capacity=100_000, bloom_error=0.01)

OpenStore = Callable[..., FrontierStore]


def fp_of(url: str) -> int:
    """A 64-bit signed fingerprint for tests (same shape as the real one)."""
    return int.from_bytes(hashlib.blake2b(url.encode(), digest_size=8).digest(), "big", signed=True)


def entry(url: str, priority: int = 0, depth: int = 0, **kw: object) -> UrlEntry:
    host = url.split("/")[2]
    return UrlEntry(url=url, host=host, depth=depth, priority=priority, fp=fp_of(url), **kw)  # type: ignore[arg-type]


def _open_backend(
    request: pytest.FixtureRequest, where: Path, crawl: str, limits: FrontierLimits, node_id: str
) -> FrontierStore:
    backend = request.param
    if backend == "sqlite":
        return SqliteFrontier(where / "frontier.db", limits, node_id=node_id)
    if backend in ("redis", "redis-cluster"):
        server = request.getfixturevalue("redis_server" if backend == "redis" else "redis_cluster")
        return RedisFrontier(
            server.url, crawl, node_id, limits, shards=TEST_SHARDS, handover_gap=0.0
        )
    raise AssertionError(f"unknown backend {backend}")


@pytest.fixture(params=BACKENDS)
def open_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[OpenStore]:
    """Opens (or reopens, after ``close``) the test's store, with optional limits, as
    node ``node_id``."""
    opened: list[FrontierStore] = []
    crawl = f"t{next(_crawl_ids)}-{tmp_path.name}"

    def _open(limits: FrontierLimits = TEST_LIMITS, node_id: str = NODE) -> FrontierStore:
        store = _open_backend(request, tmp_path, crawl, limits, node_id)
        opened.append(store)
        return store

    yield _open
    for store in opened:
        store.close()


@pytest.fixture
def store(open_store: OpenStore) -> FrontierStore:
    return open_store()


def lease(
    store: FrontierStore, host: str, n: int, *, now: float, lease_seconds: float
) -> list[LeasedUrl]:
    """Up to ``n`` URLs of one host (``lease_many`` with one want)."""
    return store.lease_many([(host, n)], now, lease_seconds)
