"""The simulated web's shape, as pure values: host specs, the seeded link graph, what
each path answers, and the pages a correct crawler must fetch.

Contract:
- ``HostSpec`` / ``SimWebSpec`` describe a simulated web; everything else is a pure,
  deterministic function of a spec (no IO, no clock, no global randomness).
- Host ``i`` is ``site{i}.{suffix}``. Its home page ``/`` is its own URL (not an alias
  of ``/p/0``): it links to ``/p/0 .. /p/{k-1}`` (``k = min(links_per_page, pages)``),
  to one entry point of every enabled feature, and once, with ``rel="nofollow"``, to
  ``/nofollow-target``. Page ``/p/i`` links to ``/p/{(i+1) % pages}`` and to
  ``links_per_page - 1`` seeded others (another host's page with probability
  ``cross_links``), so every page is reachable from ``/``. In the real page mix
  (``HostSpec.page_mix``) a ``/p/`` page's size and link count are drawn instead
  (``page_bytes``, ``links_per_page``; see ``pagemix``).
- ``SimWebSpec.hubs`` (off by default) shapes the links like the web's: a cross link
  picks its target host and page log-uniformly (``log_uniform``: host ``i`` gets about
  ``1 / ((i + 1) ln n)`` of them, so the low-numbered hosts are hubs; a share
  ``home_links`` of them point at its home page, the rest at a page drawn so that each
  host's low-numbered pages are its popular ones), a local link its page the same way,
  and the home page of host ``i`` links to the home pages of hosts ``2i+1`` and ``2i+2``
  (every host is reachable from host 0). The hosts of ``SimWebSpec.farm`` (a half-open
  range) are a link farm: their cross links go to farm hosts only.
- ``kind_of`` classifies a path without serving it; ``expected_urls`` walks the graph the
  way a correct crawler would (robots obeyed, nofollow skipped, redirects followed).
"""

from __future__ import annotations

import random
import re
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from protego import Protego

from headway.testing.pagemix import PageMix, links_for_size, real_page_bytes


class Feature(StrEnum):
    """Optional behaviours of a host (``HostSpec.features`` accepts these or plain strings)."""

    REDIRECTS = "redirects"
    REDIRECT_LOOP = "redirect-loop"
    ERRORS = "errors"
    NON_HTML = "non-html"
    DUPLICATES = "duplicates"
    TRACKING = "tracking"
    TRAP = "trap"
    HUGE = "huge"
    PRIVATE = "private"
    RETRY_AFTER = "retry-after"
    NEAR_DUPS = "near-dups"  # a labelled set of near-duplicate pages (see near_dup_group)
    SPAM = "spam"  # every /p/ page is a thin near-duplicate full of links
    SITEMAPS = "sitemaps"  # robots.txt names a sitemap index; the home page a feed
    SITEMAP_FAULTS = "sitemap-faults"  # sitemaps and a feed that are not (see FAULT_PATHS)
    LARGE_SITEMAP = "large-sitemap"  # robots.txt names a sitemap of over 1 MB uncompressed
    UNIQUE_URLS = "unique-urls"  # every /u/ page links to URLs never linked before
    SESSION_IDS = "session-ids"  # /p/ pages also link a page under a session id query


FEATURES = frozenset(str(f) for f in Feature)
#: Features for the soak's web (``webshape``), whose pages ``expected_urls`` does not
#: enumerate: an endless comb of unique URLs, and session-id variants of pages.
SOAK_ONLY = frozenset({Feature.UNIQUE_URLS, Feature.SESSION_IDS})


@dataclass(frozen=True, slots=True)
class HostSpec:
    """Behaviour of one host; the defaults are a plain, well-behaved site."""

    pages: int = 30
    links_per_page: int = 8
    robots: str | None = "User-agent: *\nDisallow: /private/\n"
    robots_status: int = 200
    crawl_delay: float | None = None
    delay: float = 0.0
    gzip: bool = False
    features: frozenset[str] = frozenset()
    page_bytes: int = 0  # pages are padded with text paragraphs to at least this size
    validators: bool = False  # 200 pages carry ETag/Last-Modified and answer 304 to them
    change_every: int = 0  # with validators: /p/i with i % change_every == 0 change ...
    change_period: float = 0.0  # ... to a new content version every change_period seconds
    #: "fixed": every /p/ page page_bytes and links_per_page; "real": each /p/ page's size
    #: and links drawn (see ``pagemix``)
    page_mix: str = PageMix.FIXED

    def __post_init__(self) -> None:
        unknown = set(self.features) - FEATURES
        if unknown:
            raise ValueError(f"unknown simweb features: {sorted(unknown)}")
        if self.pages < 0 or self.links_per_page < 1:
            raise ValueError("pages must be >= 0 and links_per_page >= 1")
        if self.page_mix not in set(PageMix):
            raise ValueError(f"page_mix must be one of {sorted(PageMix)}; got {self.page_mix!r}")


@dataclass(frozen=True, slots=True)
class SimWebSpec:
    """A whole simulated web: ``hosts`` hosts, all ``host_spec`` except ``overrides``."""

    hosts: int = 5
    host_spec: HostSpec = HostSpec()
    overrides: Mapping[int, HostSpec] = field(default_factory=dict)
    cross_links: float = 0.1
    seed: int = 0
    suffix: str = "sim"
    hubs: bool = False  # links shaped like the web's (see the module contract)
    farm: tuple[int, int] = (0, 0)  # hosts [start, end) form a link farm (with hubs)
    home_links: float = 0.5  # with hubs: the share of cross links to a home page

    def spec_for(self, index: int) -> HostSpec:
        return self.overrides.get(index, self.host_spec)

    def host_name(self, index: int) -> str:
        return f"site{index}.{self.suffix}"


class LinkForm(StrEnum):
    """How an href is written in the HTML (all resolve to the same target)."""

    ROOT = "root"  # /p/3
    ABSOLUTE = "absolute"  # http://site0.sim:PORT/p/3
    RELATIVE = "relative"  # 3, ./3 or ../p/3 depending on the base


@dataclass(frozen=True, slots=True)
class Link:
    """One ``<a href>``: its target (host index, canonical path) and how it is written."""

    host: int
    path: str
    form: LinkForm = LinkForm.ROOT
    fragment: bool = False
    tracking: int = 0  # 0: none; 1, 2: two orderings of utm_source/utm_medium
    nofollow: bool = False
    feed: bool = False  # announced as <link rel=alternate type=application/rss+xml>
    query: str = ""  # a query the href carries (the page answered ignores it)


class Kind(StrEnum):
    """What a path answers (before runtime faults such as pushback)."""

    HTML = "html"  # 200 text/html, counted in expected pages
    REDIRECT = "redirect"  # 3xx to ``Answer.target``
    TRAP = "trap"  # 200 text/html, endless calendar, never expected
    NOFOLLOW = "nofollow"  # 200 text/html, expected only if linked normally
    OTHER = "other"  # errors, non-HTML, unknown paths
    DOCUMENT = "document"  # 200 sitemap or feed: read for its links, not a page


@dataclass(frozen=True, slots=True)
class Answer:
    kind: Kind
    status: int
    target: str | None = None  # redirect target path


FIXED: dict[str, tuple[str, Answer]] = {
    "/gone": (Feature.ERRORS, Answer(Kind.OTHER, 410)),
    "/missing": (Feature.ERRORS, Answer(Kind.OTHER, 404)),
    "/boom": (Feature.ERRORS, Answer(Kind.OTHER, 500)),
    "/file.pdf": (Feature.NON_HTML, Answer(Kind.OTHER, 200)),
    "/data.json": (Feature.NON_HTML, Answer(Kind.OTHER, 200)),
    "/dup/1": (Feature.DUPLICATES, Answer(Kind.HTML, 200)),
    "/dup/2": (Feature.DUPLICATES, Answer(Kind.HTML, 200)),
    "/dup/3": (Feature.DUPLICATES, Answer(Kind.HTML, 200)),
    "/huge": (Feature.HUGE, Answer(Kind.HTML, 200)),
    "/flaky": (Feature.RETRY_AFTER, Answer(Kind.HTML, 200)),
    "/private/1": (Feature.PRIVATE, Answer(Kind.HTML, 200)),
    "/private/2": (Feature.PRIVATE, Answer(Kind.HTML, 200)),
    "/loop/a": (Feature.REDIRECT_LOOP, Answer(Kind.REDIRECT, 302, "/loop/b")),
    "/loop/b": (Feature.REDIRECT_LOOP, Answer(Kind.REDIRECT, 302, "/loop/a")),
}

#: Entry links of each feature on the home page.
ENTRIES: dict[str, tuple[str, ...]] = {
    Feature.REDIRECT_LOOP: ("/loop/a",),
    Feature.ERRORS: ("/gone", "/missing", "/boom"),
    Feature.NON_HTML: ("/file.pdf", "/data.json"),
    Feature.DUPLICATES: ("/dup/1", "/dup/2", "/dup/3"),
    Feature.TRAP: ("/cal/2024/01",),
    Feature.HUGE: ("/huge",),
    Feature.PRIVATE: ("/private/1",),
    Feature.RETRY_AFTER: ("/flaky",),
    Feature.UNIQUE_URLS: ("/u/0-1",),
}

#: ``Feature.UNIQUE_URLS``: a comb of pages ``/u/B-s`` that never ends. The spine
#: ``/u/0-s`` (depth ``s`` from the home page) links to ``/u/0-{s+1}`` and starts
#: ``UNIQUE_BRANCHES`` branches ``/u/{(s-1)*UNIQUE_BRANCHES+j}-1`` (j = 1..); a branch page
#: ``/u/B-s`` links to ``/u/B-{s+1}``. Each page has one parent, so its depth is exact
#: (``unique_depth``) and the pages within a depth limit can be counted.
UNIQUE_BRANCHES = 3

#: Groups of the labelled near-duplicate set (``Feature.NEAR_DUPS``): group ``g`` is the
#: article ``/nd/{g}`` and its variants that differ only by a date, an ad block or a
#: session id; different groups are different articles.
NEAR_DUP_GROUPS = 8
NEAR_DUP_VARIANTS = ("", "/date", "/ad", "/sid-5e55105d")


def near_dup_paths() -> tuple[str, ...]:
    """Every path of the labelled near-duplicate set, group by group."""
    return tuple(f"/nd/{g}{v}" for g in range(NEAR_DUP_GROUPS) for v in NEAR_DUP_VARIANTS)


def near_dup_group(path: str) -> int | None:
    """The label of a path of the near-duplicate set: its group, or None."""
    m = _ND.fullmatch(path)
    if m is None or int(m[1]) >= NEAR_DUP_GROUPS:
        return None
    return int(m[1])


NOT_FOUND = Answer(Kind.OTHER, 404)

#: ``Feature.SITEMAPS``: robots.txt names ``/sitemap.xml``, an index of a gzipped sitemap
#: (listing ``/hidden/sitemap``, linked from nowhere else, the robots-disallowed
#: ``/private/2`` and a URL of a host out of any scope), an entity bomb and a gzip
#: bomb (over 50 MB inflated); the home page announces ``/feed.xml``, an RSS feed
#: listing ``/hidden/feed``.
SITEMAP_PATHS: dict[str, Answer] = {
    "/sitemap.xml": Answer(Kind.DOCUMENT, 200),
    "/sitemap-pages.xml.gz": Answer(Kind.DOCUMENT, 200),
    "/feed.xml": Answer(Kind.DOCUMENT, 200),
    "/sitemap-bomb.xml": Answer(Kind.OTHER, 200),
    "/sitemap-big.xml.gz": Answer(Kind.OTHER, 200),
    "/hidden/sitemap": Answer(Kind.HTML, 200),
    "/hidden/feed": Answer(Kind.HTML, 200),
}
SITEMAP_LINKS: dict[str, tuple[str, ...]] = {
    "/sitemap.xml": ("/sitemap-pages.xml.gz", "/sitemap-bomb.xml", "/sitemap-big.xml.gz"),
    "/sitemap-pages.xml.gz": ("/hidden/sitemap", "/private/2"),
    "/feed.xml": ("/hidden/feed",),
}
#: ``Feature.SITEMAP_FAULTS``: robots.txt names ``/sitemap-html.xml`` (an HTML page
#: linking ``/lure/sitemap``), ``/sitemap-empty.xml`` (an empty body) and
#: ``/sitemap-plain.xml`` (a good sitemap served as text/plain, listing
#: ``/hidden/plain``); the home page announces ``/feed-html.xml`` as an RSS feed, an HTML
#: page linking ``/lure/feed``. A crawler reads each as what it was named as: the two
#: lures are never fetched.
FAULT_PATHS: dict[str, Answer] = {
    "/sitemap-html.xml": Answer(Kind.OTHER, 200),
    "/sitemap-empty.xml": Answer(Kind.OTHER, 200),
    "/sitemap-plain.xml": Answer(Kind.DOCUMENT, 200),
    "/feed-html.xml": Answer(Kind.OTHER, 200),
    "/lure/sitemap": Answer(Kind.HTML, 200),
    "/lure/feed": Answer(Kind.HTML, 200),
    "/hidden/plain": Answer(Kind.HTML, 200),
}
FAULT_LINKS: dict[str, tuple[str, ...]] = {
    "/sitemap-html.xml": ("/lure/sitemap",),
    "/sitemap-plain.xml": ("/hidden/plain",),
    "/feed-html.xml": ("/lure/feed",),
}
#: ``Feature.LARGE_SITEMAP``: robots.txt names ``/sitemap-large.xml``, an uncompressed
#: urlset of this many URLs ``/listed/0`` ... (over 1 MB), served as application/xml;
#: only its last entry has a ``<lastmod>``.
LARGE_SITEMAP_URLS = 15_000
LARGE_SITEMAP_PATH = "/sitemap-large.xml"
_ND = re.compile(r"/nd/(0|[1-9][0-9]?)(/date|/ad|/sid-5e55105d)?")
_LISTED = re.compile(r"/listed/(0|[1-9][0-9]{0,8})")
_PAGE = re.compile(r"/(p|r)/(0|[1-9][0-9]{0,8})")
_CAL = re.compile(r"/cal/([0-9]{4})/([0-9]{2})")
_UNIQUE = re.compile(r"/u/(0|[1-9][0-9]{0,8})-([1-9][0-9]{0,8})")


def unique_depth(path: str) -> int | None:
    """Link depth from the home page of a ``Feature.UNIQUE_URLS`` page, or None."""
    m = _UNIQUE.fullmatch(path)
    if m is None:
        return None
    branch, step = int(m[1]), int(m[2])
    return step if branch == 0 else (branch - 1) // UNIQUE_BRANCHES + 1 + step


def kind_of(spec: HostSpec, path: str) -> Answer:
    """What ``path`` (no query) answers on a host of ``spec``."""
    if path in ("/", "/nofollow-target"):
        return Answer(Kind.HTML if path == "/" else Kind.NOFOLLOW, 200)
    m = _PAGE.fullmatch(path)
    if m:
        if int(m[2]) >= spec.pages:
            return NOT_FOUND
        if m[1] == "p":
            return Answer(Kind.HTML, 200)
        if Feature.REDIRECTS in spec.features:
            return Answer(Kind.REDIRECT, 301, f"/p/{m[2]}")
        return NOT_FOUND
    if path in SITEMAP_PATHS and Feature.SITEMAPS in spec.features:
        return SITEMAP_PATHS[path]
    if path in FAULT_PATHS and Feature.SITEMAP_FAULTS in spec.features:
        return FAULT_PATHS[path]
    if Feature.LARGE_SITEMAP in spec.features:
        if path == LARGE_SITEMAP_PATH:
            return Answer(Kind.DOCUMENT, 200)
        listed = _LISTED.fullmatch(path)
        if listed and int(listed[1]) < LARGE_SITEMAP_URLS:
            return Answer(Kind.HTML, 200)
    if path.startswith("/nd/") and Feature.NEAR_DUPS in spec.features:
        return Answer(Kind.HTML, 200) if near_dup_group(path) is not None else NOT_FOUND
    if path in FIXED:
        feature, answer = FIXED[path]
        return answer if feature in spec.features else NOT_FOUND
    if Feature.UNIQUE_URLS in spec.features and _UNIQUE.fullmatch(path):
        return Answer(Kind.HTML, 200)
    c = _CAL.fullmatch(path)
    if c and Feature.TRAP in spec.features and calendar_month(path) is not None:
        return Answer(Kind.TRAP, 200)
    return NOT_FOUND


def calendar_month(path: str) -> tuple[int, int] | None:
    """(year, month) of a trap page path, or None when it is not a valid one."""
    c = _CAL.fullmatch(path)
    if not c:
        return None
    year, month = int(c[1]), int(c[2])
    return (year, month) if 1 <= year <= 9999 and 1 <= month <= 12 else None


def cal_path(year: int, month: int) -> str:
    return f"/cal/{year:04d}/{month:02d}"


_FORMS = (LinkForm.ROOT, LinkForm.ABSOLUTE, LinkForm.RELATIVE)


def links_of(web: SimWebSpec, host: int, path: str) -> tuple[Link, ...]:
    """The links on the HTML page ``path`` of ``host`` in document order (empty for
    pages without links). Deterministic from ``web.seed``."""
    spec = web.spec_for(host)
    draw = random.Random(f"{web.seed}:{host}:{path}").random  # floats only: fast, seeded

    def pick(n: int) -> int:
        return int(draw() * n)

    def local(target: str, tracking: int = 0) -> Link:
        return Link(host, target, _FORMS[pick(3)], draw() < 0.15, tracking)

    links: list[Link] = []
    if path != "/":
        links.append(Link(host, "/"))  # the nav's home link
    if path == "/":
        links.extend(local(f"/p/{i}") for i in range(min(spec.links_per_page, spec.pages)))
        if Feature.REDIRECTS in spec.features and spec.pages:
            links.append(Link(host, f"/r/{spec.pages - 1}"))
        if Feature.TRACKING in spec.features and spec.pages:
            links.append(Link(host, "/p/0", tracking=1))
        for feature in sorted(spec.features):
            links.extend(Link(host, p) for p in ENTRIES.get(feature, ()))
        if Feature.NEAR_DUPS in spec.features:
            links.extend(Link(host, p) for p in near_dup_paths())
        if Feature.SITEMAPS in spec.features:
            links.append(Link(host, "/feed.xml", feed=True))
        if Feature.SITEMAP_FAULTS in spec.features:
            links.append(Link(host, "/feed-html.xml", feed=True))
        links.append(Link(host, "/nofollow-target", nofollow=True))
        if web.hubs:  # the directory of homes: every host reachable from host 0
            kids = range(2 * host + 1, min(2 * host + 3, web.hosts))
            links.extend(Link(k, "/", LinkForm.ABSOLUTE) for k in kids)
    elif path in SITEMAP_LINKS and Feature.SITEMAPS in spec.features:
        links = [Link(host, p) for p in SITEMAP_LINKS[path]]
    elif path in FAULT_LINKS and Feature.SITEMAP_FAULTS in spec.features:
        links = [Link(host, p) for p in FAULT_LINKS[path]]
    elif path == LARGE_SITEMAP_PATH and Feature.LARGE_SITEMAP in spec.features:
        links = [Link(host, f"/listed/{i}") for i in range(LARGE_SITEMAP_URLS)]
    elif path.startswith("/p/"):
        pages = spec.pages
        links.append(local(f"/p/{(int(path[3:]) + 1) % pages}"))
        if web.hubs:
            links.extend(_hub_links(web, host, path, draw, local))
        for _ in range(0 if web.hubs else links_per_page(web, host, path) - 1):
            if web.hosts > 1 and draw() < web.cross_links:
                other = pick(web.hosts - 1)
                other += other >= host
                other_pages = web.spec_for(other).pages
                target = f"/p/{pick(other_pages)}" if other_pages else "/"
                links.append(Link(other, target, LinkForm.ABSOLUTE, draw() < 0.15))
            else:
                links.append(local(f"/p/{pick(pages)}"))
        if Feature.REDIRECTS in spec.features and draw() < 0.3:
            links.append(local(f"/r/{pick(pages)}"))
        if Feature.TRACKING in spec.features and draw() < 0.3:
            links.append(local(f"/p/{pick(pages)}", tracking=1 + pick(2)))
        if Feature.SESSION_IDS in spec.features:
            sid = f"sid={int(draw() * 2**48):012x}"
            links.append(Link(host, f"/p/{pick(pages)}", query=sid))
    elif (unique := _UNIQUE.fullmatch(path)) and Feature.UNIQUE_URLS in spec.features:
        branch, step = int(unique[1]), int(unique[2])
        links.append(Link(host, f"/u/{branch}-{step + 1}"))
        if branch == 0:
            first = (step - 1) * UNIQUE_BRANCHES
            links.extend(Link(host, f"/u/{first + j}-1") for j in range(1, UNIQUE_BRANCHES + 1))
    elif path.startswith("/private/"):
        links.append(Link(host, "/private/2" if path == "/private/1" else "/private/1"))
    elif (month := calendar_month(path)) is not None:
        year, mon = month
        prev = (year, mon - 1) if mon > 1 else (year - 1, 12)
        nxt = (year, mon + 1) if mon < 12 else (year + 1, 1)
        for y, m in (prev, nxt):
            if 1 <= y <= 9999:
                links.append(Link(host, cal_path(y, m), LinkForm.RELATIVE))
    return tuple(links)


def log_uniform(n: int, u: float) -> int:
    """An index in ``0 .. n-1`` for ``u`` in [0, 1): ``floor((n + 1) ** u) - 1``, so
    index ``i`` has probability ``log((i + 2) / (i + 1)) / log(n + 1)``."""
    return min(n - 1, int((n + 1) ** u) - 1)


def _hub_links(
    web: SimWebSpec,
    host: int,
    path: str,
    draw: Callable[[], float],
    local: Callable[[str], Link],
) -> list[Link]:
    """The seeded links of a ``/p/`` page of a web with hubs (see the module contract)."""
    start, end = web.farm
    in_farm = start <= host < end
    out: list[Link] = []
    for _ in range(links_per_page(web, host, path) - 1):
        if web.hosts > 1 and (in_farm or draw() < web.cross_links):
            if in_farm:
                other = start + int(draw() * (end - start))
            else:
                other = log_uniform(web.hosts, draw())
            if other == host:
                out.append(local(f"/p/{log_uniform(web.spec_for(host).pages, draw())}"))
                continue
            pages = web.spec_for(other).pages
            home = draw() < web.home_links or not pages
            target = "/" if home else f"/p/{log_uniform(pages, draw())}"
            out.append(Link(other, target, LinkForm.ABSOLUTE, draw() < 0.15))
        else:
            out.append(local(f"/p/{log_uniform(web.spec_for(host).pages, draw())}"))
    return out


def page_bytes(web: SimWebSpec, host: int, path: str) -> int:
    """The size a page ``path`` of ``host`` is padded to: the host's ``page_bytes``, or
    in the real mix a ``/p/`` page's drawn size (``pagemix``)."""
    spec = web.spec_for(host)
    if spec.page_mix == PageMix.REAL and path.startswith("/p/"):
        return real_page_bytes(web.seed, host, path)
    return spec.page_bytes


def links_per_page(web: SimWebSpec, host: int, path: str) -> int:
    """Links on a ``/p/`` page: the host's ``links_per_page``, or in the real mix a
    number growing with the page's drawn size (``pagemix``)."""
    spec = web.spec_for(host)
    if spec.page_mix == PageMix.REAL and path.startswith("/p/"):
        return links_for_size(real_page_bytes(web.seed, host, path))
    return spec.links_per_page


def sitemaps_named(spec: HostSpec) -> tuple[str, ...]:
    """Paths of the sitemaps a host's robots.txt names (``Sitemap:`` lines)."""
    named: list[str] = []
    if Feature.SITEMAPS in spec.features:
        named.append("/sitemap.xml")
    if Feature.SITEMAP_FAULTS in spec.features:
        named += ["/sitemap-html.xml", "/sitemap-empty.xml", "/sitemap-plain.xml"]
    if Feature.LARGE_SITEMAP in spec.features:
        named.append(LARGE_SITEMAP_PATH)
    return tuple(named)


def robots_body(spec: HostSpec) -> str | None:
    """The robots.txt body served (None: no robots.txt, answered 404)."""
    if spec.robots is None:
        return None
    body = spec.robots
    if spec.crawl_delay is not None:
        body = f"{body.rstrip(chr(10))}\nCrawl-delay: {spec.crawl_delay:g}\n"
    return body


def robots_allows(spec: HostSpec) -> Callable[[str, str], bool]:
    """``allowed(url, user_agent_token)`` as RFC 9309 reads this host's robots.txt:
    a 2xx body is parsed; any 4xx, 429 included (RFC 9309 2.3.1.3: "unavailable"), and
    no robots.txt allow everything; 5xx and anything else disallow everything."""
    body = robots_body(spec)
    status = spec.robots_status if body is not None else 404
    if 200 <= status < 300 and body is not None:
        parsed = Protego.parse(body)
        return lambda url, agent: bool(parsed.can_fetch(url, agent))
    allow = 400 <= status < 500
    return lambda url, agent: allow


def expected_urls(
    web: SimWebSpec,
    url_of: Callable[[int, str], str],
    seeds: Iterable[tuple[int, str]],
    user_agent_token: str = "*",
    in_scope: Callable[[str], bool] | None = None,
) -> set[str]:
    """URLs a correct crawler starting at ``seeds`` fetches with 200 text/html: robots
    obeyed per host, nofollow links not followed, redirects followed to their targets,
    traps, errors and non-HTML left out; ``in_scope(url)`` limits where it may go."""
    if any(web.spec_for(h).features & SOAK_ONLY for h in range(web.hosts)):
        raise ValueError("expected_urls does not enumerate soak features: see webshape")
    allows = [robots_allows(web.spec_for(h)) for h in range(web.hosts)]
    queue: deque[tuple[int, str]] = deque(seeds)
    seen: set[tuple[int, str]] = set(queue)
    found: set[str] = set()
    while queue:
        host, path = queue.popleft()
        url = url_of(host, path)
        if (in_scope is not None and not in_scope(url)) or not allows[host](url, user_agent_token):
            continue
        spec = web.spec_for(host)
        answer = kind_of(spec, path)
        nxt: list[tuple[int, str]] = []
        if robots_body(spec) is not None and 200 <= spec.robots_status < 300:
            nxt.extend((host, p) for p in sitemaps_named(spec))  # named by robots.txt
        if answer.kind is Kind.REDIRECT and answer.target is not None:
            nxt.append((host, answer.target))
        elif answer.kind is Kind.DOCUMENT:
            nxt.extend((ln.host, ln.path) for ln in links_of(web, host, path))
        elif answer.kind in (Kind.HTML, Kind.NOFOLLOW):
            found.add(url)
            nxt.extend((ln.host, ln.path) for ln in links_of(web, host, path) if not ln.nofollow)
        for node in nxt:
            if node not in seen:
                seen.add(node)
                queue.append(node)
    return found
