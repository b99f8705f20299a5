"""expected_pages() is honest: it equals what a tiny crawler finds in the served HTML."""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable
from urllib.parse import parse_qsl, urldefrag, urlencode, urljoin, urlsplit, urlunsplit

import aiohttp
from selectolax.lexbor import LexborHTMLParser

from headway.testing.graph import FEATURES, SOAK_ONLY
from headway.testing.simweb import HostSpec, SimWeb, SimWebSpec
from tests.testing.simclient import session

try:
    from headway.urls.canonical import canonicalize
except ImportError:  # pragma: no cover - the urls package is built alongside
    canonicalize = None  # type: ignore[assignment]


def canon(href: str, base: str) -> str | None:
    """Canonical form: resolved, no fragment, tracking params dropped, query sorted."""
    if canonicalize is not None:
        url = canonicalize(href, base)
        if url is None:
            return None
    else:
        url = urldefrag(urljoin(base, href)).url
    parts = urlsplit(url)
    query = sorted(kv for kv in parse_qsl(parts.query, True) if not kv[0].startswith("utm_"))
    return urlunsplit((parts.scheme, parts.netloc, parts.path or "/", urlencode(query), ""))


def robots_rules(status: int, body: str) -> Callable[[str], bool]:
    """A deliberately small robots reader for the bodies these tests serve: the
    ``User-agent: *`` group's Disallow prefixes; 4xx allows all, 5xx allows none."""
    if 400 <= status < 500:
        return lambda path: True
    if status != 200:
        return lambda path: False
    prefixes = [m[1].strip() for m in re.finditer(r"(?im)^disallow:(.*)$", body) if m[1].strip()]
    return lambda path: not any(path.startswith(p) for p in prefixes)


async def crawl(client: aiohttp.ClientSession, seeds: list[str]) -> tuple[set[str], int]:
    """Breadth-first fetch of everything linked (robots obeyed, nofollow skipped,
    redirects followed, one retry after a 503); returns the 200 text/html URLs outside
    the calendar trap, and how many trap pages were fetched (capped)."""
    rules: dict[str, Callable[[str], bool]] = {}
    queue = deque((url, 0) for url in seeds)
    seen = set(seeds)
    pages: set[str] = set()
    trap = 0
    while queue:
        url, tries = queue.popleft()
        parts = urlsplit(url)
        origin = f"{parts.scheme}://{parts.netloc}"
        if origin not in rules:
            async with client.get(origin + "/robots.txt") as r:
                rules[origin] = robots_rules(r.status, await r.text())
        if not rules[origin](parts.path):
            continue
        if parts.path.startswith("/cal/"):
            if trap >= 25:
                continue
            trap += 1
        async with client.get(url, allow_redirects=False) as r:
            body = await r.read()
            ctype = r.headers.get("Content-Type", "")
            found: list[str] = []
            if r.status in (301, 302, 303, 307, 308):
                found.append(r.headers["Location"])
            elif r.status == 503 and "Retry-After" in r.headers and tries == 0:
                queue.append((url, 1))
            elif r.status == 200 and ctype.startswith("text/html"):
                if not parts.path.startswith("/cal/"):
                    pages.add(url)
                tree = LexborHTMLParser(body.decode())
                for a in tree.css("a[href]"):
                    if "nofollow" not in (a.attributes.get("rel") or ""):
                        found.append(a.attributes.get("href") or "")
        for href in found:
            target = canon(href, url)
            if target is not None and target not in seen:
                seen.add(target)
                queue.append((target, 0))
    return pages, trap


async def test_expected_pages_match_a_crawl_of_the_served_html() -> None:
    spec = SimWebSpec(
        hosts=5,
        # (this crawler reads HTML only; sitemaps are tests/integration/test_sitemaps.py's
        # and test_document_kind.py's)
        host_spec=HostSpec(
            pages=25,
            features=FEATURES - {"sitemaps", "sitemap-faults", "large-sitemap", *SOAK_ONLY},
        ),
        overrides={
            1: HostSpec(pages=15, robots=None, features=frozenset({"private", "tracking"})),
            2: HostSpec(pages=10, robots_status=503),
            3: HostSpec(pages=40, robots="User-agent: *\nDisallow: /p/1\n", links_per_page=2),
            4: HostSpec(pages=0),
        },
        cross_links=0.2,
        seed=3,
    )
    async with SimWeb(spec) as web, session() as client:
        found, trap_pages = await crawl(client, web.seeds())
        expected = web.expected_pages()
        assert found == expected
        assert trap_pages == 25
        # the spec's corners are really exercised
        host = web.url("site0.sim", "")
        assert {host + p for p in ("/dup/1", "/huge", "/flaky", "/p/24")} <= expected
        assert host + "/nofollow-target" not in expected and host + "/private/1" not in expected
        assert web.url("site1.sim", "/private/2") in expected
        assert not any("site2.sim" in u for u in expected)
        assert web.url("site3.sim", "/p/12") not in expected
        assert web.url("site4.sim") in expected


async def test_expected_pages_from_one_seed_in_scope() -> None:
    spec = SimWebSpec(hosts=4, host_spec=HostSpec(pages=20), cross_links=0.3, seed=5)
    async with SimWeb(spec) as web, session() as client:
        seed = web.url("site0.sim")
        found, _ = await crawl(client, [seed])
        assert web.expected_pages(seeds=[seed]) == found
        only0 = web.expected_pages(seeds=[seed], in_scope=lambda u: u.startswith(seed))
        assert only0 == {u for u in found if u.startswith(seed)}
        assert only0 != found  # cross links do lead elsewhere
