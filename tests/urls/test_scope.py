"""Scope, OptOut and load_optout: table tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from headway.errors import ConfigError
from headway.urls.scope import (
    OptOut,
    Scope,
    ScopeMode,
    ScopeRules,
    SeedScope,
    load_optout,
    surt_prefix,
)

OPTOUT = OptOut(["Blocked.org", "*.wild.net", "xn--bcher-kva.de.", "bücher.ch", "not a domain"])


@pytest.mark.parametrize(
    ("host", "blocked"),
    [
        ("blocked.org", True),
        ("BLOCKED.ORG", True),
        ("www.blocked.org", True),
        ("a.b.blocked.org:8080", True),
        ("blocked.org.", True),
        ("notblocked.org", False),
        ("blocked.org.evil.com", False),
        ("org", False),
        ("wild.net", True),
        ("x.wild.net", True),
        ("www.xn--bcher-kva.de", True),
        ("xn--bcher-kva.ch", True),
        ("example.com", False),
        ("", False),
    ],
)
def test_optout_blocks(host: str, blocked: bool) -> None:
    assert OPTOUT.blocks(host) is blocked


def test_optout_len_counts_valid_distinct_domains() -> None:
    assert len(OPTOUT) == 4
    assert len(OptOut(["a.org", "A.org", "a.org."])) == 1
    assert not OptOut([]).blocks("a.org")


def test_load_optout_reports_bad_lines(tmp_path: Path) -> None:
    path = tmp_path / "optout.txt"
    path.write_text(
        "# operators' opt-out list\n\nexample.org\n  Sub.Example.NET  # asked 2024\n"
        "bad domain here\nhttps://www.url-form.com/path\nexa$mple.com\n",
        encoding="utf-8",
    )
    optout, problems = load_optout(path)
    assert len(optout) == 3
    assert optout.blocks("a.example.org")
    assert optout.blocks("sub.example.net")
    assert not optout.blocks("example.net")
    assert optout.blocks("www.url-form.com")
    assert problems == [
        "line 5: not a domain: 'bad domain here'",
        "line 7: not a domain: 'exa$mple.com'",
    ]


def test_load_optout_unreadable_is_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load_optout(tmp_path / "missing.txt")
    assert info.value.key == "scope.optout_file"
    bad = tmp_path / "latin1.txt"
    bad.write_bytes(b"caf\xe9.com\n")
    with pytest.raises(ConfigError):
        load_optout(bad)


SEEDS = [
    "https://www.example.com/",
    "http://blog.example.org:8080/start",
    "https://127.0.0.1:9000/",
]


@pytest.mark.parametrize(
    ("mode", "url", "depth", "reason"),
    [
        (ScopeMode.SEED_DOMAINS, "https://www.example.com/a", 1, None),
        (ScopeMode.SEED_DOMAINS, "https://shop.example.com/a", 1, None),
        (ScopeMode.SEED_DOMAINS, "http://example.org/", 3, None),
        (ScopeMode.SEED_DOMAINS, "https://127.0.0.1:9000/x", 1, None),
        (ScopeMode.SEED_DOMAINS, "https://127.0.0.2/x", 1, "out-of-scope"),
        (ScopeMode.SEED_DOMAINS, "https://other.net/", 1, "out-of-scope"),
        (ScopeMode.SEED_DOMAINS, "https://example.com.evil.net/", 1, "out-of-scope"),
        (ScopeMode.SEED_HOSTS, "https://www.example.com/a", 1, None),
        (ScopeMode.SEED_HOSTS, "http://www.example.com:81/a", 1, None),
        (ScopeMode.SEED_HOSTS, "https://shop.example.com/a", 1, "out-of-scope"),
        (ScopeMode.SEED_HOSTS, "https://example.com/", 1, "out-of-scope"),
        (ScopeMode.OPEN, "https://anything.example.net/", 1, None),
        (ScopeMode.OPEN, "https://www.blocked.org/", 1, "opted-out"),
        (ScopeMode.SEED_DOMAINS, "https://www.example.com/a", 50, None),
        (ScopeMode.SEED_DOMAINS, "https://www.example.com/a", 51, "too-deep"),
        (ScopeMode.SEED_DOMAINS, "https://www.example.com/" + "a" * 2100, 1, "too-long"),
        (ScopeMode.SEED_DOMAINS, "https://www.example.com/logout", 1, "excluded"),
        (ScopeMode.SEED_DOMAINS, "https://www.example.com/a?sessionid=1", 1, "excluded"),
        (ScopeMode.OPEN, "not-a-url", 1, "out-of-scope"),
    ],
)
def test_scope_check(mode: ScopeMode, url: str, depth: int, reason: str | None) -> None:
    scope = Scope.for_seeds(
        SEEDS, mode=mode, exclude=(r"/logout\b", r"[?&]sessionid="), optout=OPTOUT
    )
    assert scope.check(url, depth) == reason


def test_reasons_follow_the_documented_order() -> None:
    scope = Scope.for_seeds(
        ["https://blocked.org/"], optout=OPTOUT, max_depth=2, exclude=("x",), include=("y",)
    )
    # A seed of an opted-out domain is in scope by domain but still opted out.
    assert scope.check("https://blocked.org/", 0) == "opted-out"
    assert scope.check("https://blocked.org/" + "x" * 3000, 9) == "too-long"
    assert scope.check("https://blocked.org/", 9) == "too-deep"
    assert scope.check("https://other.net/x", 1) == "out-of-scope"


def test_include_requires_a_match() -> None:
    scope = Scope.for_seeds(["https://example.com/"], include=(r"/docs/", r"\.html$"))
    assert scope.check("https://example.com/docs/intro", 1) is None
    assert scope.check("https://example.com/page.html", 1) is None
    assert scope.check("https://example.com/blog/", 1) == "not-included"


def test_add_seed_host_follows_a_redirected_seed() -> None:
    scope = Scope.for_seeds(["https://old-name.org/"], mode=ScopeMode.SEED_HOSTS)
    assert scope.check("https://www.new-name.com/", 1) == "out-of-scope"
    scope.add_seed_host("WWW.New-Name.com:443")
    assert scope.check("https://www.new-name.com/", 1) is None
    assert "new-name.com" in scope.seed_domains
    assert "www.new-name.com" in scope.seed_hosts


def test_rules_built_directly() -> None:
    rules = ScopeRules(mode=ScopeMode.SEED_HOSTS, seed_hosts=frozenset({"Example.com"}))
    scope = Scope(rules)
    assert scope.check("https://example.com/", 0) is None
    assert scope.check("https://www.example.com/", 0) == "out-of-scope"


@pytest.mark.parametrize(
    ("field", "key"), [("include", "scope.include"), ("exclude", "scope.exclude")]
)
def test_bad_regex_is_config_error(field: str, key: str) -> None:
    with pytest.raises(ConfigError) as info:
        Scope.for_seeds(["https://a.org/"], **{field: ("(unclosed",)})  # type: ignore[arg-type]
    assert info.value.key == key


def test_prefix_scope_is_the_seeds_path_up_to_its_last_slash() -> None:
    scope = Scope.for_seeds(
        ["https://example.org/docs/intro.html", "https://other.net/a/b/"],
        mode=ScopeMode.PREFIX,
    )
    cases = {
        "https://example.org/docs/": None,
        "https://example.org/docs/api/x": None,
        "http://example.org/docs/y": None,  # either scheme
        "https://example.org/doc": "out-of-scope",
        "https://example.org/": "out-of-scope",
        "https://www.example.org/docs/": "out-of-scope",
        "https://other.net/a/b/c": None,
        "https://other.net/a/": "out-of-scope",
    }
    assert {u: scope.check(u, 1) for u in cases} == cases
    scope.add_seed("https://example.org/blog/")
    assert scope.check("https://example.org/blog/post", 1) is None
    assert scope.check("https://example.org/news/", 1) == "out-of-scope"


def test_seeds_on_one_host_with_scopes_and_depths_of_their_own() -> None:
    seeds = ["https://example.org/docs/", "https://example.org/blog/", "https://b.org/"]
    scope = Scope.for_seeds(
        seeds,
        mode=ScopeMode.SEED_HOSTS,
        seed_scopes={
            seeds[0]: SeedScope(mode=ScopeMode.PREFIX, max_depth=3, extra_hops=1),
            seeds[1]: SeedScope(mode=ScopeMode.PREFIX, max_depth=1),
        },
    )
    assert scope.check("https://example.org/docs/a/b", 3) is None
    assert scope.check("https://example.org/docs/a/b", 4) == "too-deep"
    assert scope.check("https://example.org/blog/2024", 1) is None
    assert scope.check("https://example.org/blog/2024", 2) == "too-deep"
    assert scope.check("https://example.org/shop/", 1) == "out-of-scope"
    assert scope.check("https://b.org/anything", 40) is None  # the crawl's mode and depth
    assert scope.check("https://b.org/anything", 51) == "too-deep"
    assert scope.extra_hops("https://example.org/docs/x") == (1, 3)
    assert scope.extra_hops("https://example.org/blog/x") == (0, 1)
    assert scope.extra_hops("https://elsewhere.net/") is None
    assert scope.hops_possible


def test_a_seed_deeper_than_the_crawl() -> None:
    seeds = ["https://a.org/", "https://b.org/"]
    scope = Scope.for_seeds(seeds, max_depth=2, seed_scopes={seeds[0]: SeedScope(max_depth=9)})
    assert scope.check("https://a.org/x", 9) is None
    assert scope.check("https://b.org/x", 3) == "too-deep"
    assert scope.check("https://a.org/x", 10) == "too-deep"


@pytest.mark.parametrize(
    ("given", "prefix"),
    [
        ("org,example)/docs", "org,example)/docs"),
        ("http://(org,example,)/docs", "org,example)/docs"),
        ("http://(org,example,", "org,example,"),
        ("https://www.Example.org/docs/", "org,example)/docs/"),
        ("  ", None),
    ],
)
def test_surt_prefixes_in_three_spellings(given: str, prefix: str | None) -> None:
    assert surt_prefix(given) == prefix


def test_surt_include_and_exclude() -> None:
    scope = Scope.for_seeds(
        ["https://example.org/"],
        mode=ScopeMode.SEED_HOSTS,
        include_surts=["http://(net,cdn,"],
        exclude_surts=["org,example)/calendar"],
    )
    assert scope.check("https://img.cdn.net/a.png", 1) is None  # a SURT include is in scope
    assert scope.check("https://cdn.org/a.png", 1) == "out-of-scope"
    assert scope.check("https://example.org/calendar/2031/01", 1) == "excluded"
    assert scope.check("https://www.example.org/calendar", 1) == "out-of-scope"  # other host
    assert scope.check("https://example.org/about", 1) is None


def test_a_seed_fetched_again_keeps_its_own_scope() -> None:
    seeds = ["https://example.org/docs/"]
    scope = Scope.for_seeds(
        seeds, mode=ScopeMode.SEED_HOSTS, seed_scopes={seeds[0]: SeedScope(ScopeMode.PREFIX)}
    )
    scope.add_seed(seeds[0])  # what settling a seed's fetch does
    assert scope.check("https://example.org/blog/", 1) == "out-of-scope"
