"""Store URLs of the Redis backend: the forms accepted, clear errors, masked passwords."""

from __future__ import annotations

import pytest

from headway.errors import StoreError
from headway.frontier.redis.connect import is_redis_url, mask_store_url, parse_store_url


@pytest.mark.parametrize(
    ("text", "tls", "cluster", "nodes", "db", "user", "password"),
    [
        ("redis://10.0.0.5:6379/0", False, False, (("10.0.0.5", 6379),), 0, None, None),
        ("redis://localhost", False, False, (("localhost", 6379),), 0, None, None),
        ("rediss://:s3cret@r.test:6380/2", True, False, (("r.test", 6380),), 2, None, "s3cret"),
        ("redis://crawler:pw@h:1/3", False, False, (("h", 1),), 3, "crawler", "pw"),
        ("redis://pw@h:1", False, False, (("h", 1),), 0, None, "pw"),
        (
            "redis+cluster://h1:7000,h2:7001",
            False,
            True,
            (("h1", 7000), ("h2", 7001)),
            0,
            None,
            None,
        ),
        ("rediss+cluster://:p%40ss@h1:7000", True, True, (("h1", 7000),), 0, None, "p@ss"),
    ],
)
def test_store_url_forms(
    text: str,
    tls: bool,
    cluster: bool,
    nodes: tuple[tuple[str, int], ...],
    db: int,
    user: str | None,
    password: str | None,
) -> None:
    url = parse_store_url(text)
    assert (url.tls, url.cluster, url.nodes, url.db) == (tls, cluster, nodes, db)
    assert (url.username, url.password) == (user, password)
    assert is_redis_url(text)
    if password:
        assert password not in url.masked()
        assert "***" in url.masked()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("http://h:1", "must start with"),
        ("redis://:topsecret@h:notaport", "bad port"),
        ("redis://:topsecret@h1:1,h2:2", "redis\\+cluster"),
        ("redis+cluster://:topsecret@h1:1/3", "no database"),
        ("redis://:topsecret@h:1/zero", "database number"),
        ("redis://:topsecret@:1", "missing host"),
    ],
)
def test_bad_store_urls_are_clear_errors_without_the_password(text: str, message: str) -> None:
    with pytest.raises(StoreError, match=message) as info:
        parse_store_url(text)
    assert "topsecret" not in str(info.value)


def test_mask_store_url() -> None:
    assert mask_store_url("redis://:pw@h:1/0") == "redis://:***@h:1/0"
    assert mask_store_url("redis://pw@h:1/0") == "redis://***@h:1/0"
    assert mask_store_url("redis://user:pw@h:1/0") == "redis://user:***@h:1/0"
    assert mask_store_url("redis://h:1/0") == "redis://h:1/0"
    assert not is_redis_url("crawl/frontier.sqlite3")
