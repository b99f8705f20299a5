"""surt: keys as the Internet Archive's reference implementation computes them."""

from __future__ import annotations

import pytest

from headway.urls.surt import surt

SID = "0123456789abcdefghijklemopqrstuv"


@pytest.mark.parametrize(
    ("url", "key"),
    [
        ("http://www.Example.com:8080/a?b=1", "com,example:8080)/a?b=1"),
        ("http://www.archive.org/", "org,archive)/"),
        ("http://archive.org/", "org,archive)/"),
        ("https://archive.org", "org,archive)/"),
        ("http://archive.org/goo/", "org,archive)/goo"),
        ("http://archive.org/goo/?", "org,archive)/goo"),
        ("http://archive.org/goo/?b&a", "org,archive)/goo?a&b"),
        ("http://archive.org/goo/?a=2&b&a=1", "org,archive)/goo?a=1&a=2&b"),
        ("http://www34.archive.org/index.html?b=a&b=b&a=b", "org,archive)/index.html?a=b&b=a&b=b"),
        ("http://www2foo.com/", "com,www2foo)/"),
        ("http://www.archive.org:80/", "org,archive)/"),
        ("https://www.archive.org:443/", "org,archive)/"),
        ("https://www.archive.org:80/", "org,archive:80)/"),
        ("http://example.com/foo?X=Y", "com,example)/foo?x=y"),
        ("http://example.com/Index.HTML#frag", "com,example)/index.html"),
        ("http://user:pw@example.com/", "com,example)/"),
        ("http://bücher.ch:8080/", "ch,xn--bcher-kva:8080)/"),
        ("http://127.0.0.1:8080/x", "1,0,0,127:8080)/x"),
        ("http://[::1]:8080/x", "[::1]:8080)/x"),
        ("http://host/%2525252525252525", "host)/%25"),
        ("http://host/a%7Eb%2fc", "host)/a~b/c"),
        (
            f"http://archive.org/index.php?PHPSESSID={SID}&action=profile;u=4221",
            "org,archive)/index.php?action=profile;u=4221",
        ),
        (f"http://a.org/?jsessionid={SID}&x=y", "org,a)/?x=y"),
        (f"http://a.org/?jsessionid={SID}0", f"org,a)/?jsessionid={SID}0"),
        ("http://a.org/?sid=9682993c8daa2c5497996114facdc805&x=y", "org,a)/?x=y"),
        ("http://a.org/?CFID=1169580&CFTOKEN=48630702&dt=1", "org,a)/?dt=1"),
        (
            "http://visit.webhosting.yahoo.com/visit.gif?&r=http%3A//web.archive.org/"
            "&b=Netscape%205.0%20%28Windows%3B%20en-US%29&s=1366x768",
            "com,yahoo,webhosting,visit)/visit.gif?&b=netscape%205.0%20(windows;%20en-us)"
            "&r=http://web.archive.org/&s=1366x768",
        ),
        ("dns:archive.org", "dns:archive.org"),
        ("warcinfo:foo.warc.gz", "warcinfo:foo.warc.gz"),
        ("mailto:foo@example.com", "mailto:foo@example.com"),
    ],
)
def test_surt_table(url: str, key: str) -> None:
    assert surt(url) == key


def test_surt_keys_sort_by_domain() -> None:
    urls = [
        "http://b.example.com/",
        "http://example.com/z",
        "http://a.example.com/",
        "http://example.org/",
    ]
    keys = sorted(surt(u) for u in urls)
    assert keys == ["com,example)/z", "com,example,a)/", "com,example,b)/", "org,example)/"]
