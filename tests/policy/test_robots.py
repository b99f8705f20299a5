"""robots.txt fetch semantics, group matching, Crawl-delay and the cache."""

from __future__ import annotations

import pytest

from headway.policy.robots import (
    RobotsCache,
    RobotsKind,
    RobotsRules,
    clamp_crawl_delay,
    product_token,
    robots_from_response,
)

UA = "MyBot/1.0 (+https://example.org/bot)"
DAY = 86400.0


@pytest.mark.parametrize(
    ("user_agent", "token"),
    [
        ("MyBot/1.0 (+https://x.org/bot)", "MyBot"),
        ("MyBot", "MyBot"),
        ("  my_bot-2/3", "my_bot-"),
        ("Googlebot-Image/1.0", "Googlebot-Image"),
        ("Foo Bar", "Foo"),
        ("Mozilla/5.0 (compatible; FooBot/1.0)", "Mozilla"),
        ("", ""),
        ("123bot", ""),
        ("*", ""),
    ],
)
def test_product_token(user_agent: str, token: str) -> None:
    assert product_token(user_agent) == token


def rules(body: str, *, user_agent: str = UA) -> RobotsRules:
    return robots_from_response(status=200, body=body.encode(), user_agent=user_agent, now=0.0)


# -- fetch status semantics (RFC 9309 2.3.1) -----------------------------------------


@pytest.mark.parametrize(
    ("status", "kind", "expires_at", "failures"),
    [
        (200, RobotsKind.RULES, 1000.0 + DAY, 0),
        (204, RobotsKind.RULES, 1000.0 + DAY, 0),
        (301, RobotsKind.ALLOW_ALL, 1000.0 + DAY, 0),
        (400, RobotsKind.ALLOW_ALL, 1000.0 + DAY, 0),
        (401, RobotsKind.ALLOW_ALL, 1000.0 + DAY, 0),
        (403, RobotsKind.ALLOW_ALL, 1000.0 + DAY, 0),
        (404, RobotsKind.ALLOW_ALL, 1000.0 + DAY, 0),
        (410, RobotsKind.ALLOW_ALL, 1000.0 + DAY, 0),
        (429, RobotsKind.ALLOW_ALL, 1000.0 + DAY, 0),
        (500, RobotsKind.DISALLOW_ALL, 1060.0, 1),
        (503, RobotsKind.DISALLOW_ALL, 1060.0, 1),
        (None, RobotsKind.DISALLOW_ALL, 1060.0, 1),
    ],
)
def test_status_semantics(
    status: int | None, kind: RobotsKind, expires_at: float, failures: int
) -> None:
    got = robots_from_response(
        status=status, body=b"User-agent: *\nDisallow: /private", user_agent=UA, now=1000.0
    )
    assert (got.kind, got.fetched_at, got.expires_at, got.failures) == (
        kind,
        1000.0,
        expires_at,
        failures,
    )
    expected_private = {
        RobotsKind.RULES: False,
        RobotsKind.ALLOW_ALL: True,
        RobotsKind.DISALLOW_ALL: False,
    }[kind]
    assert got.allowed("https://example.org/private/x") is expected_private
    assert got.allowed("https://example.org/public") is (kind is not RobotsKind.DISALLOW_ALL)
    assert got.allowed("https://example.org/robots.txt")


def test_unreachable_backoff_grows_then_caps_at_ttl() -> None:
    previous: RobotsRules | None = None
    waits = []
    now = 0.0
    for _ in range(8):
        previous = robots_from_response(
            status=503, body=None, user_agent=UA, now=now, previous=previous, ttl=3600.0
        )
        assert previous.kind is RobotsKind.DISALLOW_ALL
        waits.append(previous.expires_at - now)
        now = previous.expires_at
    assert waits == [60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 3600.0, 3600.0]
    assert previous is not None and previous.failures == 8


def test_success_after_failures_resets_failures() -> None:
    failed = robots_from_response(status=None, body=None, user_agent=UA, now=0.0)
    failed = robots_from_response(status=None, body=None, user_agent=UA, now=60, previous=failed)
    assert failed.failures == 2
    ok = robots_from_response(status=200, body=b"", user_agent=UA, now=200.0, previous=failed)
    assert (ok.kind, ok.failures, ok.expires_at) == (RobotsKind.RULES, 0, 200.0 + DAY)
    gone = robots_from_response(status=404, body=None, user_agent=UA, now=0.0, previous=failed)
    assert gone.failures == 0


def test_recent_success_keeps_serving_during_outage() -> None:
    good = robots_from_response(
        status=200, body=b"User-agent: *\nDisallow: /x\nCrawl-delay: 3", user_agent=UA, now=0.0
    )
    kept = robots_from_response(status=500, body=None, user_agent=UA, now=100.0, previous=good)
    assert kept.kind is RobotsKind.RULES
    assert (kept.fetched_at, kept.expires_at, kept.failures, kept.crawl_delay) == (
        0.0,
        160.0,
        1,
        3.0,
    )
    assert not kept.allowed("http://h/x") and kept.allowed("http://h/y")
    # A kept copy never outlives ttl after its own fetch.
    late = robots_from_response(status=500, body=None, user_agent=UA, now=DAY - 10, previous=kept)
    assert late.kind is RobotsKind.RULES and late.expires_at == DAY
    # Past ttl: the outage means disallow-all, with the failure count carried on.
    stale = robots_from_response(status=500, body=None, user_agent=UA, now=DAY, previous=late)
    assert (stale.kind, stale.failures, stale.expires_at) == (
        RobotsKind.DISALLOW_ALL,
        3,
        DAY + 240.0,
    )


# -- body handling -------------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        b"\xff\xfe\x00garbage\x00\x00",
        b"User-agent: *\nDisallow: /\x80\x81",
        b"Crawl-delay: banana\nUser-agent: *\nCrawl-delay: -3\nCrawl-delay: nan",
        b"\n\n\n::::\n#\nUser-agent\nDisallow",
        b"User-agent: *\n" + b"Disallow: /" + b"a" * 200_000,
        bytes(range(256)) * 10,
    ],
)
def test_malformed_bodies_never_raise(body: bytes) -> None:
    got = robots_from_response(status=200, body=body, user_agent=UA, now=0.0)
    assert got.kind is RobotsKind.RULES
    assert isinstance(got.allowed("https://example.org/page"), bool)
    assert got.crawl_delay is None or got.crawl_delay >= 0


def test_body_cut_at_max_bytes() -> None:
    body = b"User-agent: *\nDisallow: /a\n" + b"#" * 100 + b"\nDisallow: /b\n"
    cut = robots_from_response(status=200, body=body, user_agent=UA, now=0.0, max_bytes=40)
    assert not cut.allowed("http://h/a") and cut.allowed("http://h/b")
    full = robots_from_response(status=200, body=body, user_agent=UA, now=0.0)
    assert not full.allowed("http://h/b")


def test_bom_is_stripped() -> None:
    got = robots_from_response(
        status=200, body=b"\xef\xbb\xbfUser-agent: *\nDisallow: /x", user_agent=UA, now=0.0
    )
    assert not got.allowed("http://h/x")


# -- group matching and rules --------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "url", "allowed"),
    [
        ("User-agent: MyBot\nDisallow: /\n", "http://h/a", False),
        ("User-agent: mybot\nDisallow: /\n", "http://h/a", False),
        ("User-agent: MyBot/2.0\nDisallow: /\n", "http://h/a", False),
        # A group whose name is only a prefix of our token is not ours.
        ("User-agent: My\nDisallow: /\n", "http://h/a", True),
        ("User-agent: MyBotX\nDisallow: /\n", "http://h/a", True),
        # Our group wins over '*', whatever the order.
        ("User-agent: *\nDisallow: /\n\nUser-agent: MyBot\nAllow: /\n", "http://h/a", True),
        ("User-agent: MyBot\nDisallow: /a\nUser-agent: *\nDisallow: /\n", "http://h/b", True),
        # Groups for the same agent are merged.
        (
            "User-agent: MyBot\nDisallow: /a\n\nUser-agent: MyBot\nDisallow: /b\n",
            "http://h/b",
            False,
        ),
        # Unknown lines do not end a group.
        ("User-agent: MyBot\nFoo: bar\nUser-agent: other\nDisallow: /\n", "http://h/a", False),
        # Longest match wins, allow on a tie.
        ("User-agent: *\nDisallow: /a\nAllow: /a/b\n", "http://h/a/b/c", True),
        ("User-agent: *\nDisallow: /a/b\nAllow: /a\n", "http://h/a/b/c", False),
        ("User-agent: *\nDisallow: /*.pdf$\n", "http://h/x.pdf", False),
        ("User-agent: *\nDisallow: /*.pdf$\n", "http://h/x.pdf?y", True),
        ("User-agent: *\nDisallow: /\n", "http://h/robots.txt", True),
        ("User-agent: *\nDisallow: /\n", "", False),
        ("User-agent: *\nDisallow: /q?\n", "http://h/q?x=1", False),
    ],
)
def test_group_matching_and_rules(body: str, url: str, allowed: bool) -> None:
    assert rules(body).allowed(url) is allowed


def test_unparsable_url_is_disallowed_not_raised() -> None:
    assert rules("User-agent: *\nDisallow: /x\n").allowed("http://[::1") is False


@pytest.mark.parametrize(
    ("body", "delay"),
    [
        ("User-agent: *\nCrawl-delay: 5\n", 5.0),
        ("User-agent: MyBot\nCrawl-delay: 2.5\nUser-agent: *\nCrawl-delay: 9\n", 2.5),
        ("User-agent: other\nCrawl-delay: 2\n", None),
        ("User-agent: *\nCrawl-delay: soon\n", None),
        ("User-agent: *\nCrawl-delay: -1\n", None),
        ("", None),
    ],
)
def test_crawl_delay(body: str, delay: float | None) -> None:
    assert rules(body).crawl_delay == delay


@pytest.mark.parametrize(
    ("delay", "max_delay", "expected"),
    [
        (None, 30.0, (None, False)),
        (0.0, 30.0, (0.0, False)),
        (10.0, 30.0, (10.0, False)),
        (30.0, 30.0, (30.0, False)),
        (31.0, 30.0, (31.0, True)),
        (float("inf"), 30.0, (None, False)),
        (float("nan"), 30.0, (None, False)),
        (-2.0, 30.0, (None, False)),
    ],
)
def test_clamp_crawl_delay(
    delay: float | None, max_delay: float, expected: tuple[float | None, bool]
) -> None:
    assert clamp_crawl_delay(delay, max_delay) == expected


# -- cache ---------------------------------------------------------------------------


def _entry(expires_at: float) -> RobotsRules:
    return RobotsRules(RobotsKind.ALLOW_ALL, fetched_at=0.0, expires_at=expires_at)


def test_cache_expiry_and_previous() -> None:
    cache = RobotsCache()
    assert cache.get("a", 0.0) is None and cache.previous("a") is None
    entry = _entry(100.0)
    cache.put("a", entry)
    assert cache.get("a", 99.9) is entry
    assert cache.get("a", 100.0) is None
    assert cache.previous("a") is entry
    assert len(cache) == 1


def test_cache_evicts_least_recently_used() -> None:
    cache = RobotsCache(max_entries=2)
    cache.put("a", _entry(10.0))
    cache.put("b", _entry(10.0))
    assert cache.get("a", 0.0) is not None  # touches a: b is now the oldest
    cache.put("c", _entry(10.0))
    assert len(cache) == 2
    assert cache.previous("b") is None
    assert cache.previous("a") is not None and cache.previous("c") is not None
    cache.put("a", _entry(20.0))  # replacing does not grow the cache
    assert len(cache) == 2 and cache.previous("a") == _entry(20.0)


def test_cache_rejects_zero_size() -> None:
    with pytest.raises(ValueError):
        RobotsCache(max_entries=0)
