"""Fixtures of the frontier contract suite: one ``store`` per backend.

A new backend joins the suite by adding its name to ``BACKENDS`` and a branch in
``_open_backend`` that opens (or reopens) the same store for one test.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from headway.frontier.sqlite import SqliteFrontier
from headway.frontier.store import FrontierLimits, FrontierStore, UrlEntry

BACKENDS = ["sqlite"]
TEST_LIMITS = FrontierLimits(bloom_capacity=100_000, bloom_error=0.01)

OpenStore = Callable[..., FrontierStore]


def fp_of(url: str) -> int:
    """A 64-bit signed fingerprint for tests (same shape as the real one)."""
    return int.from_bytes(hashlib.blake2b(url.encode(), digest_size=8).digest(), "big", signed=True)


def entry(url: str, priority: int = 0, depth: int = 0, **kw: object) -> UrlEntry:
    host = url.split("/")[2]
    return UrlEntry(url=url, host=host, depth=depth, priority=priority, fp=fp_of(url), **kw)  # type: ignore[arg-type]


def _open_backend(backend: str, where: Path, limits: FrontierLimits) -> FrontierStore:
    if backend == "sqlite":
        return SqliteFrontier(where / "frontier.db", limits)
    raise AssertionError(f"unknown backend {backend}")


@pytest.fixture(params=BACKENDS)
def open_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[OpenStore]:
    """Opens (or reopens, after ``close``) the test's store, with optional limits."""
    opened: list[FrontierStore] = []

    def _open(limits: FrontierLimits = TEST_LIMITS) -> FrontierStore:
        store = _open_backend(request.param, tmp_path, limits)
        opened.append(store)
        return store

    yield _open
    for store in opened:
        store.close()


@pytest.fixture
def store(open_store: OpenStore) -> FrontierStore:
    return open_store()
