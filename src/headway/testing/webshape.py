"""A simulated web shaped like the web, for the soak benchmark, and the pages a correct
crawler fetches from it: pure values, computed from the graph alone.

Contract:
- ``shaped_web(hosts, pages, seed)`` is a deterministic ``ShapedWeb``: a ``SimWebSpec``
  of ``hosts`` hosts holding about ``pages`` pages with a long tail of host sizes (most
  hosts a handful of pages; ``HUGE_HOSTS`` hosts with a tenth of the pages each), links
  mostly within a host and a share (``CROSS_LINKS``) across hosts; robots.txt rules
  that disallow part of some hosts (or all of a few), Crawl-delay on some, slow hosts,
  hosts that answer 429 or 503 for a while (``pushback``: the server applies it),
  endless calendars, session-id links, and host 0 that links a new unique URL from every
  page (``Feature.UNIQUE_URLS``).
- ``linked(shape, fetched, max_depth)`` is every page a crawler that fetched ``fetched``
  (and was seeded with every home page) has been shown a followable link to, within the
  depth limit: with the URLs still in its frontier, what an unfinished crawl can be held
  to (a page linked, not fetched and not in the frontier is lost).
- ``reachable(shape, url_of, ...)`` enumerates what a correct crawler seeded with every
  home page fetches with 200 text/html: robots.txt obeyed, links followed to at most
  ``max_depth`` (exact here: the only pages a depth limit cuts are host 0's, each of
  which has one parent), traps (calendar pages, session-id URLs) left out, and the hosts
  whose URLs exceed ``host_budget`` named instead of enumerated (which of their URLs a
  crawler keeps depends on the order it finds them).
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from headway.testing.graph import (
    Feature,
    HostSpec,
    Kind,
    SimWebSpec,
    kind_of,
    links_of,
    robots_allows,
    unique_depth,
)

#: Hosts with a tenth of the pages each (the popular domains of a real crawl).
HUGE_HOSTS = 3
CROSS_LINKS = 0.15
LINKS_PER_PAGE = 8
#: Shares of the small hosts (those of at most ``SMALL_HOST`` pages) with each behaviour.
SMALL_HOST = 40
SHARES = {
    "crawl_delay": 0.02,
    "slow": 0.02,
    "pushback": 0.01,
    "trap": 0.005,
    "sessions": 0.01,
    "robots_partial": 0.10,
    "robots_none": 0.05,
    "robots_all": 0.005,
}
DEFAULT_ROBOTS = "User-agent: *\nDisallow: /private/\n"


@dataclass(frozen=True, slots=True)
class Pushback:
    """Host ``host`` answers ``status`` to every page from ``start`` to ``end`` (fractions
    of the run) with Retry-After ``retry_after`` seconds."""

    host: int
    status: int
    start: float
    end: float
    retry_after: float


@dataclass(frozen=True, slots=True)
class ShapedWeb:
    web: SimWebSpec
    pushback: tuple[Pushback, ...]

    def host_pages(self, host: int) -> int:
        return self.web.spec_for(host).pages


def _tail_sizes(count: int, total: int, cap: int, rng: random.Random) -> list[int]:
    """``count`` host sizes from a Pareto tail (shape 1.2), each 1..cap, summing to
    about ``total``."""
    raw = [min(float(cap), rng.paretovariate(1.2)) for _ in range(count)]
    scale = max(1.0, total - count) / max(1.0, sum(r - 1 for r in raw))
    return [max(1, min(cap, 1 + round((r - 1) * scale))) for r in raw]


def shaped_web(hosts: int, pages: int, seed: int = 0) -> ShapedWeb:
    """The soak's web: see the module contract. ``hosts`` >= HUGE_HOSTS + 2."""
    if hosts < HUGE_HOSTS + 2 or pages < hosts:
        raise ValueError(f"need hosts >= {HUGE_HOSTS + 2} and pages >= hosts")
    rng = random.Random(f"shape:{seed}")
    huge = max(1, pages // 10)
    small_count = hosts - 1 - HUGE_HOSTS
    tail = _tail_sizes(small_count, pages - HUGE_HOSTS * huge, max(1, huge // 2), rng)
    specs: dict[tuple[object, ...], HostSpec] = {}

    def spec(**kw: object) -> HostSpec:
        key = tuple(sorted(kw.items(), key=lambda kv: kv[0]))
        if key not in specs:
            specs[key] = HostSpec(links_per_page=LINKS_PER_PAGE, **kw)  # type: ignore[arg-type]
        return specs[key]

    overrides: dict[int, HostSpec] = {
        0: spec(pages=0, features=frozenset({Feature.UNIQUE_URLS}), robots=DEFAULT_ROBOTS)
    }
    for i in range(1, HUGE_HOSTS + 1):
        overrides[i] = spec(pages=huge, robots=DEFAULT_ROBOTS)
    pushback: list[Pushback] = []
    for offset, size in enumerate(tail):
        index = HUGE_HOSTS + 1 + offset
        kw: dict[str, object] = {"pages": size, "robots": DEFAULT_ROBOTS}
        roll = rng.random
        if roll() < SHARES["robots_partial"]:
            # a prefix rule: /p/1 also disallows /p/10, /p/1xx ...
            kw["robots"] = f"User-agent: *\nDisallow: /p/{rng.randrange(1, 10)}\n"
        elif roll() < SHARES["robots_none"]:
            kw["robots"] = None
        elif roll() < SHARES["robots_all"]:
            kw["robots"] = "User-agent: *\nDisallow: /\n"
        if size <= SMALL_HOST:
            if roll() < SHARES["crawl_delay"]:
                kw["crawl_delay"] = float(rng.choice((1, 2)))
            if roll() < SHARES["slow"]:
                kw["delay"] = rng.choice((0.3, 0.8, 1.5))
            if roll() < SHARES["pushback"]:
                start = rng.uniform(0.05, 0.6)
                status = rng.choice((429, 503))
                pushback.append(Pushback(index, status, start, start + 0.1, 5.0))
        features: set[str] = set()
        if roll() < SHARES["trap"]:
            features.add(Feature.TRAP)
        if size > 1 and roll() < SHARES["sessions"]:
            features.add(Feature.SESSION_IDS)
        if features:
            kw["features"] = frozenset(features)
        overrides[index] = spec(**kw)
    web = SimWebSpec(
        hosts=hosts,
        host_spec=spec(pages=1, robots=DEFAULT_ROBOTS),
        overrides=overrides,
        cross_links=CROSS_LINKS,
        seed=seed,
    )
    return ShapedWeb(web, tuple(pushback))


@dataclass(frozen=True, slots=True)
class Reachable:
    """What a correct crawler fetches (``pages``: URLs), and what it may fetch but need
    not: ``traps`` (URLs of calendar pages and session-id variants found within the
    depth limit; the calendar is endless, so these are only the first ones) and
    ``over_budget`` (host -> URLs found on it, for hosts past ``host_budget``)."""

    pages: frozenset[str]
    traps: frozenset[str]
    over_budget: Mapping[str, int]


def reachable(
    shape: ShapedWeb,
    url_of: Callable[[int, str, str], str],
    *,
    max_depth: int,
    host_budget: int,
    user_agent_token: str = "*",
    trap_limit: int = 24,
) -> Reachable:
    """The pages a correct crawler seeded with every home page fetches (see the module
    contract). ``url_of(host, path, query)`` spells a URL; calendar pages are followed
    ``trap_limit`` links deep at most (they are reported, never required)."""
    web = shape.web
    allows = [robots_allows(web.spec_for(h)) for h in range(web.hosts)]
    queue: deque[tuple[int, str, int]] = deque((h, "/", 0) for h in range(web.hosts))
    seen: set[tuple[int, str]] = {(h, "/") for h in range(web.hosts)}
    pages: set[str] = set()
    traps: set[str] = set()
    found = [1] * web.hosts
    while queue:
        host, path, depth = queue.popleft()
        url = url_of(host, path, "")
        if not allows[host](url, user_agent_token):
            continue
        answer = kind_of(web.spec_for(host), path)
        if answer.kind is Kind.TRAP:
            traps.add(url)
        elif answer.kind is Kind.HTML:
            pages.add(url)
        else:
            continue
        if depth >= max_depth or (answer.kind is Kind.TRAP and depth >= trap_limit):
            continue
        for link in links_of(web, host, path):
            if link.nofollow:
                continue
            if link.query:
                variant = url_of(link.host, link.path, link.query)
                if variant not in traps:
                    traps.add(variant)
                    found[link.host] += 1
                continue
            node = (link.host, link.path)
            if node not in seen:
                seen.add(node)
                found[link.host] += 1
                queue.append((link.host, link.path, depth + 1))
    over = {web.host_name(h): n for h, n in enumerate(found) if n > host_budget}
    names = tuple(url_of(h, "", "") for h in range(web.hosts))
    capped = {h for h, n in enumerate(found) if n > host_budget}
    if capped:
        prefixes = tuple(names[h] + "/" for h in capped)
        pages = {u for u in pages if not u.startswith(prefixes)}
    return Reachable(frozenset(pages), frozenset(traps), over)


def linked(
    shape: ShapedWeb, fetched: Iterable[tuple[int, str]], *, max_depth: int
) -> set[tuple[int, str]]:
    """(host, path) of the home pages and of every followable link (no query, not
    nofollow, within ``max_depth`` on the unique-URL host) on the HTML pages of
    ``fetched`` (paths with or without a query)."""
    web = shape.web
    out = {(h, "/") for h in range(web.hosts)}
    for host, raw in fetched:
        path = raw.partition("?")[0]  # a session-id URL answers its page
        if kind_of(web.spec_for(host), path).kind is not Kind.HTML:
            continue
        for link in links_of(web, host, path):
            if link.nofollow or link.query:
                continue
            depth = unique_depth(link.path)
            if depth is not None and depth > max_depth:
                continue
            out.add((link.host, link.path))
    return out
