"""Shared test fixtures."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.redisproc import RedisCluster, RedisProcError, RedisServer

#: Third-party conformance cases, kept in the repository (sources and licences in its
#: README.md).
CONFORMANCE_DIR = Path(__file__).resolve().parent / "data" / "conformance"


def load_conformance(name: str) -> list[dict[str, Any]]:
    """Cases of one conformance file; the test fails loudly if the file is missing."""
    path = CONFORMANCE_DIR / name
    if not path.exists():
        pytest.fail(f"conformance file missing: {path}")
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.fixture
def tmp_crawl_dir(tmp_path: Path) -> Iterator[Path]:
    d = tmp_path / "crawl"
    yield d


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """One redis-server for the whole session on a free loopback port (tests keep apart by
    crawl id)."""
    try:
        server = RedisServer(tmp_path_factory.mktemp("redis"))
        server.start()
    except RedisProcError as exc:
        pytest.fail(str(exc))
    yield server
    server.stop()


@pytest.fixture(scope="session")
def redis_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisCluster]:
    """A 3-master Redis Cluster for the whole session."""
    try:
        cluster = RedisCluster(tmp_path_factory.mktemp("redis-cluster"))
        cluster.start()
    except RedisProcError as exc:
        pytest.fail(str(exc))
    yield cluster
    cluster.stop()
