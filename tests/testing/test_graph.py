"""The simulated web's pure model: specs, paths, links, robots, expected pages."""

from __future__ import annotations

import pytest

from headway.testing.graph import (
    FEATURES,
    LARGE_SITEMAP_URLS,
    SOAK_ONLY,
    Answer,
    HostSpec,
    Kind,
    SimWebSpec,
    expected_urls,
    kind_of,
    links_of,
    near_dup_paths,
    robots_allows,
    robots_body,
)

#: (the 15,000 pages of the large sitemap have a test of their own)
ALL = HostSpec(pages=10, features=FEATURES - {"large-sitemap", *SOAK_ONLY})
PLAIN = HostSpec(pages=10)


def url_of(host: int, path: str) -> str:
    return f"http://site{host}.sim:8000{path}"


def test_unknown_feature_rejected() -> None:
    with pytest.raises(ValueError, match="teleport"):
        HostSpec(features=frozenset({"teleport"}))


@pytest.mark.parametrize(
    ("spec", "path", "answer"),
    [
        (PLAIN, "/", Answer(Kind.HTML, 200)),
        (PLAIN, "/p/0", Answer(Kind.HTML, 200)),
        (PLAIN, "/p/9", Answer(Kind.HTML, 200)),
        (PLAIN, "/p/10", Answer(Kind.OTHER, 404)),
        (PLAIN, "/p/01", Answer(Kind.OTHER, 404)),
        (PLAIN, "/r/3", Answer(Kind.OTHER, 404)),
        (ALL, "/r/3", Answer(Kind.REDIRECT, 301, "/p/3")),
        (ALL, "/r/10", Answer(Kind.OTHER, 404)),
        (PLAIN, "/gone", Answer(Kind.OTHER, 404)),
        (ALL, "/gone", Answer(Kind.OTHER, 410)),
        (ALL, "/boom", Answer(Kind.OTHER, 500)),
        (ALL, "/loop/a", Answer(Kind.REDIRECT, 302, "/loop/b")),
        (ALL, "/cal/2024/13", Answer(Kind.OTHER, 404)),
        (ALL, "/cal/0000/01", Answer(Kind.OTHER, 404)),
        (ALL, "/cal/9999/12", Answer(Kind.TRAP, 200)),
        (PLAIN, "/cal/2024/01", Answer(Kind.OTHER, 404)),
        (PLAIN, "/nofollow-target", Answer(Kind.NOFOLLOW, 200)),
        (ALL, "/huge", Answer(Kind.HTML, 200)),
        (PLAIN, "/huge", Answer(Kind.OTHER, 404)),
    ],
)
def test_kind_of(spec: HostSpec, path: str, answer: Answer) -> None:
    assert kind_of(spec, path) == answer


def test_every_page_links_to_the_next_one() -> None:
    web = SimWebSpec(hosts=1, host_spec=PLAIN)
    for i in range(10):
        targets = {(ln.host, ln.path) for ln in links_of(web, 0, f"/p/{i}")}
        assert (0, f"/p/{(i + 1) % 10}") in targets
    home = links_of(web, 0, "/")
    assert [ln.path for ln in home if ln.nofollow] == ["/nofollow-target"]


def test_links_are_deterministic_and_seeded() -> None:
    a = [links_of(SimWebSpec(seed=1), 0, f"/p/{i}") for i in range(30)]
    b = [links_of(SimWebSpec(seed=1), 0, f"/p/{i}") for i in range(30)]
    c = [links_of(SimWebSpec(seed=2), 0, f"/p/{i}") for i in range(30)]
    assert a == b
    assert a != c


@pytest.mark.parametrize(("cross", "expect_other"), [(0.0, False), (1.0, True)])
def test_cross_links(cross: float, expect_other: bool) -> None:
    web = SimWebSpec(hosts=3, cross_links=cross)
    hosts = {ln.host for i in range(30) for ln in links_of(web, 1, f"/p/{i}")}
    assert (hosts != {1}) is expect_other


@pytest.mark.parametrize(
    ("spec", "path", "allowed"),
    [
        (PLAIN, "/p/1", True),
        (PLAIN, "/private/1", False),
        (HostSpec(robots=None), "/private/1", True),
        (HostSpec(robots_status=404), "/private/1", True),
        (HostSpec(robots_status=503), "/p/1", False),
        (HostSpec(robots_status=429), "/p/1", True),  # RFC 9309: 4xx is "unavailable"
        (HostSpec(robots="User-agent: *\nDisallow: /p/1\n"), "/p/12", False),
        (HostSpec(robots="User-agent: *\nDisallow: /p/1\n"), "/p/2", True),
    ],
)
def test_robots_allows(spec: HostSpec, path: str, allowed: bool) -> None:
    assert robots_allows(spec)(url_of(0, path), "*") is allowed


def test_robots_body_crawl_delay() -> None:
    assert robots_body(HostSpec(crawl_delay=1.5)) == (
        "User-agent: *\nDisallow: /private/\nCrawl-delay: 1.5\n"
    )
    assert robots_body(HostSpec(robots=None, crawl_delay=2)) is None


def test_expected_plain_site_is_home_and_every_page() -> None:
    web = SimWebSpec(hosts=1, host_spec=PLAIN)
    got = expected_urls(web, url_of, [(0, "/")])
    assert got == {url_of(0, "/")} | {url_of(0, f"/p/{i}") for i in range(10)}


def test_expected_with_all_features() -> None:
    web = SimWebSpec(hosts=1, host_spec=ALL)
    got = {u.removeprefix(url_of(0, "")) for u in expected_urls(web, url_of, [(0, "/")])}
    extras = {"/dup/1", "/dup/2", "/dup/3", "/huge", "/flaky", *near_dup_paths()}
    extras |= {"/hidden/sitemap", "/hidden/feed"}  # through the sitemap and the feed
    # through the sitemap served as text/plain; never through the documents that are not
    extras.add("/hidden/plain")
    assert got == {"/"} | {f"/p/{i}" for i in range(10)} | extras


def test_expected_through_a_large_sitemap() -> None:
    web = SimWebSpec(hosts=1, host_spec=HostSpec(pages=2, features=frozenset({"large-sitemap"})))
    got = {u.removeprefix(url_of(0, "")) for u in expected_urls(web, url_of, [(0, "/")])}
    listed = {f"/listed/{i}" for i in range(LARGE_SITEMAP_URLS)}
    assert got == {"/", "/p/0", "/p/1"} | listed
    assert kind_of(web.host_spec, f"/listed/{LARGE_SITEMAP_URLS}").status == 404


def test_expected_respects_scope_and_dead_robots() -> None:
    web = SimWebSpec(
        hosts=3, cross_links=0.5, overrides={2: HostSpec(robots_status=500)}, host_spec=PLAIN
    )
    everything = expected_urls(web, url_of, [(0, "/")])
    assert {u.split("/")[2] for u in everything} == {"site0.sim:8000", "site1.sim:8000"}
    only0 = expected_urls(web, url_of, [(0, "/")], in_scope=lambda u: "site0." in u)
    assert only0 == {u for u in everything if "site0." in u}
