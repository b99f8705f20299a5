"""Scope, OptOut and load_optout: table tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from headway.errors import ConfigError
from headway.urls.scope import OptOut, Scope, ScopeMode, ScopeRules, load_optout

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
