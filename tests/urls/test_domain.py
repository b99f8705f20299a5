"""registered_domain: the public suffix list, bundled."""

from __future__ import annotations

import pytest

from headway.urls.domain import registered_domain, strip_port


@pytest.mark.parametrize(
    ("host", "domain"),
    [
        ("example.com", "example.com"),
        ("www.example.com", "example.com"),
        ("a.b.c.example.com", "example.com"),
        ("WWW.Example.CO.UK", "example.co.uk"),
        ("www.example.co.uk:8080", "example.co.uk"),
        ("example.com.", "example.com"),
        ("foo.blogspot.com", "foo.blogspot.com"),
        ("x.foo.github.io", "foo.github.io"),
        ("xn--bcher-kva.de", "xn--bcher-kva.de"),
        ("shop.xn--r8jz45g.jp", "xn--r8jz45g.jp"),
        ("co.uk", "co.uk"),
        ("localhost", "localhost"),
        ("localhost:8080", "localhost"),
        ("a.b.unknowntld", "a.b.unknowntld"),
        ("127.0.0.1", "127.0.0.1"),
        ("127.0.0.1:8080", "127.0.0.1"),
        ("[::1]", "[::1]"),
        ("[::1]:443", "[::1]"),
        ("", ""),
    ],
)
def test_registered_domain(host: str, domain: str) -> None:
    assert registered_domain(host) == domain


@pytest.mark.parametrize(
    ("host", "bare"),
    [("a.org:80", "a.org"), ("a.org", "a.org"), ("[::1]:80", "[::1]"), ("::1", "::1")],
)
def test_strip_port(host: str, bare: str) -> None:
    assert strip_port(host) == bare


def test_parent_domains_nearest_first() -> None:
    from headway.urls.domain import parent_domains

    assert list(parent_domains("a.b.example.org")) == ["b.example.org", "example.org", "org"]
    assert list(parent_domains("localhost")) == []


def test_match_host_exact_then_nearest_suffix() -> None:
    from headway.urls.domain import match_host

    exact = {"www.example.org": 1}
    suffixes = {"example.org": 2, "img.example.org": 3}
    assert match_host("www.example.org", exact, suffixes) == 1
    assert match_host("a.img.example.org", exact, suffixes) == 3
    assert match_host("other.example.org", exact, suffixes) == 2
    assert match_host("example.org", exact, suffixes) is None  # *.example.org: below only
    assert match_host("elsewhere.net", exact, suffixes) is None
