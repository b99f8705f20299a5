"""Bodies and headers of the simulated web's answers.

Contract: ``Renderer.respond(host, path)`` returns the ``Reply`` for one path (query
ignored) of one host, as a pure, deterministic function of the ``SimWebSpec`` and the
origins (``http://siteN.sim:PORT``) it was built with. Runtime faults (pushback, delays,
hangs, the first answer of ``/flaky``) are not its business; the server adds them.
Replies are cached in a bounded LRU, so memory stays flat however many pages are served.
"""

from __future__ import annotations

import functools
import gzip
import html
import json
import random
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

from headway.testing.graph import (
    FAULT_LINKS,
    LARGE_SITEMAP_PATH,
    LARGE_SITEMAP_URLS,
    SITEMAP_LINKS,
    SITEMAP_PATHS,
    Feature,
    Kind,
    Link,
    LinkForm,
    SimWebSpec,
    kind_of,
    links_of,
    near_dup_group,
    page_bytes,
    robots_body,
    sitemaps_named,
)
from headway.testing.pagemix import PageMix

HTML_TYPE = "text/html; charset=utf-8"
HUGE_BYTES = 2 * 1024 * 1024
_CACHE_SIZE = 4096
_TEXT = (
    "crawler harbor lantern meadow orbit pillar quartz river saddle timber umbra velvet "
    "willow yonder zephyr anchor basalt cobalt delta ember fjord glacier hollow island "
    "juniper kestrel lagoon marble nectar oasis prairie quiver ripple summit tundra "
    "upland valley wander xylem yarrow zenith archive beacon canyon dune estuary fable "
    "garnet heron inlet jasper knoll ledger mosaic nimbus opal pebble quill reef sierra"
)
_WORDS = tuple(_TEXT.split())
_FAULT_DOCUMENTS = frozenset({"/sitemap-empty.xml", *FAULT_LINKS})


_ENTITY_BOMB = (
    b'<?xml version="1.0"?>\n<!DOCTYPE urlset [\n <!ENTITY a "aaaaaaaaaa">\n'
    + b"".join(
        f' <!ENTITY {chr(98 + i)} "{("&" + chr(97 + i) + ";") * 10}">\n'.encode() for i in range(8)
    )
    + b"]>\n<urlset><url><loc>http://x/&i;</loc></url></urlset>\n"
)


@functools.cache
def _gzip_bomb() -> bytes:
    """A gzipped sitemap of about 60 KB that inflates past the 50 MB limit."""
    body = b"<urlset>" + b" " * (51 * 1024 * 1024) + b"</urlset>"
    return gzip.compress(body, compresslevel=9, mtime=0)


@dataclass(frozen=True, slots=True)
class Reply:
    status: int
    content_type: str
    body: bytes
    headers: tuple[tuple[str, str], ...] = ()
    html: bool = False  # a 200 text/html page (eligible for gzip)


def _filler_pool(seed: int) -> tuple[str, ...]:
    rng = random.Random(f"{seed}:filler")
    pool = []
    for _ in range(64):
        words = [rng.choice(_WORDS) for _ in range(rng.randint(45, 110))]
        words[0] = words[0].capitalize()
        pool.append(" ".join(words) + ".")
    return tuple(pool)


class Renderer:
    """Builds every reply of a simulated web whose hosts live at ``origins``."""

    def __init__(self, web: SimWebSpec, origins: Sequence[str]) -> None:
        self._web = web
        self._origins = tuple(origins)
        self._pool = _filler_pool(web.seed)
        self._names = [html.escape(web.host_name(i)) for i in range(web.hosts)]
        self._cache: OrderedDict[tuple[int, str, bool], Reply] = OrderedDict()

    def respond(self, host: int, path: str, *, gzipped: bool = False) -> Reply:
        """The reply for ``path`` on host ``host``; ``gzipped`` asks for a
        gzip-encoded body, honoured for HTML pages of hosts with ``gzip`` on."""
        gzipped = gzipped and self._web.spec_for(host).gzip
        key = (host, path, gzipped)
        reply = self._cache.get(key)
        if reply is not None:
            self._cache.move_to_end(key)
            return reply
        reply = self._build(host, path)
        if gzipped and reply.html:
            body = gzip.compress(reply.body, compresslevel=6, mtime=0)
            extra = (("Content-Encoding", "gzip"), ("Vary", "Accept-Encoding"))
            reply = Reply(reply.status, reply.content_type, body, reply.headers + extra, True)
        self._cache[key] = reply
        if len(self._cache) > _CACHE_SIZE:
            self._cache.popitem(last=False)
        return reply

    def _build(self, host: int, path: str) -> Reply:
        spec = self._web.spec_for(host)
        if path == "/robots.txt":
            body = robots_body(spec)
            if body is None:
                return Reply(404, "text/plain", b"no robots.txt\n")
            if not 200 <= spec.robots_status < 300:
                return Reply(spec.robots_status, "text/plain", b"robots.txt unavailable\n")
            for named in sitemaps_named(spec):
                body += f"Sitemap: {self._origins[host]}{named}\n"
            return Reply(spec.robots_status, "text/plain; charset=utf-8", body.encode())
        answer = kind_of(spec, path)
        if Feature.SITEMAPS in spec.features and path in SITEMAP_PATHS:
            document = self._document(host, path)
            if document is not None:
                return document
        if Feature.SITEMAP_FAULTS in spec.features and path in _FAULT_DOCUMENTS:
            return self._fault_document(host, path)
        if Feature.LARGE_SITEMAP in spec.features and path == LARGE_SITEMAP_PATH:
            return self._large_sitemap(host)
        if answer.kind is Kind.REDIRECT and answer.target is not None:
            location = answer.target
            if path.startswith("/r/") and int(path[3:]) % 2 == 0:
                location = self._origins[host] + location
            return Reply(answer.status, HTML_TYPE, b"", (("Location", location),))
        if answer.kind is Kind.OTHER:
            return self._other(path, answer.status)
        return Reply(200, HTML_TYPE, self._page(host, path).encode(), html=True)

    def _document(self, host: int, path: str) -> Reply | None:
        """The sitemaps and the feed of ``Feature.SITEMAPS`` (None: an HTML page)."""
        origin = self._origins[host]
        ns = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
        if path == "/sitemap.xml":
            entries = "".join(
                f"<sitemap><loc>{origin}{p}</loc><lastmod>2024-05-01</lastmod></sitemap>"
                for p in SITEMAP_LINKS[path]
            )
            body = f'<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex {ns}>{entries}'
            return Reply(200, "application/xml", (body + "</sitemapindex>\n").encode())
        if path == "/sitemap-pages.xml.gz":
            urls = "".join(
                f"<url><loc>{origin}{p}</loc><changefreq>daily</changefreq></url>"
                for p in SITEMAP_LINKS[path]
            )
            urls += "<url><loc>http://outside.example/page</loc></url>"
            body = f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset {ns}>{urls}</urlset>\n'
            return Reply(200, "application/x-gzip", gzip.compress(body.encode(), mtime=0))
        if path == "/feed.xml":
            items = "".join(
                f"<item><title>{p}</title><link>{origin}{p}</link>"
                "<pubDate>Wed, 01 May 2024 10:00:00 GMT</pubDate></item>"
                for p in SITEMAP_LINKS[path]
            )
            body = f'<?xml version="1.0"?>\n<rss version="2.0"><channel>{items}</channel></rss>\n'
            return Reply(200, "application/rss+xml", body.encode())
        if path == "/sitemap-bomb.xml":
            return Reply(200, "application/xml", _ENTITY_BOMB)
        if path == "/sitemap-big.xml.gz":
            return Reply(200, "application/x-gzip", _gzip_bomb())
        return None

    def _fault_document(self, host: int, path: str) -> Reply:
        """The documents of ``Feature.SITEMAP_FAULTS`` (``graph.FAULT_PATHS``)."""
        if path == "/sitemap-empty.xml":
            return Reply(200, "application/xml", b"")
        origin = self._origins[host]
        (target,) = FAULT_LINKS[path]
        if path == "/sitemap-plain.xml":
            body = (
                '<?xml version="1.0" encoding="UTF-8"?>\n'
                '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
                f"<url><loc>{origin}{target}</loc></url></urlset>\n"
            )
            return Reply(200, "text/plain; charset=utf-8", body.encode())
        page = (
            '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f"<title>{html.escape(path)}</title>\n</head>\n<body>\n"
            f'<p>Not a document.</p><a href="{target}">more</a>\n</body>\n</html>\n'
        )
        return Reply(200, HTML_TYPE, page.encode(), html=True)

    def _large_sitemap(self, host: int) -> Reply:
        """``Feature.LARGE_SITEMAP``'s urlset: over 1 MB, uncompressed."""
        origin = self._origins[host]
        last = LARGE_SITEMAP_URLS - 1
        entries = [
            f"<url><loc>{origin}/listed/{i}</loc><changefreq>monthly</changefreq></url>\n"
            for i in range(last)
        ]
        # a date in the future counts as today: the last entry is ranked first
        entries.append(f"<url><loc>{origin}/listed/{last}</loc><lastmod>2100-01-01</lastmod></url>")
        body = (
            '<?xml version="1.0" encoding="UTF-8"?>\n'
            '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
            + "".join(entries)
            + "\n</urlset>\n"
        )
        return Reply(200, "application/xml", body.encode())

    def _other(self, path: str, status: int) -> Reply:
        if status == 200 and path == "/file.pdf":
            body = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << >>\n%%EOF\n"
            return Reply(200, "application/pdf", body)
        if status == 200 and path == "/data.json":
            data = {"pages": ["/p/0", "/p/1"], "note": "not HTML; links here are not links"}
            return Reply(200, "application/json", json.dumps(data).encode())
        text = {404: "Not Found", 410: "Gone", 500: "Internal Server Error"}.get(status, "Error")
        page = f"<!DOCTYPE html><html><head><title>{status} {text}</title></head>"
        page += f"<body><h1>{text}</h1></body></html>"
        return Reply(status, HTML_TYPE, page.encode())

    def _href(self, link: Link, host: int, base: str) -> str:
        if link.host != host or link.form is LinkForm.ABSOLUTE:
            href = self._origins[link.host] + link.path
        elif link.form is LinkForm.RELATIVE and not link.path.endswith("/"):
            base_dir = base.rpartition("/")[0]
            target_dir, _, name = link.path.rpartition("/")
            if target_dir == base_dir:
                href = "./" + name if len(link.path) % 2 else name
            else:
                href = "../" * base_dir.count("/") + link.path[1:]
        else:
            href = link.path
        if link.query:
            href += "?" + link.query
        elif link.tracking == 1:
            href += "?utm_source=x&utm_medium=y"
        elif link.tracking == 2:
            href += "?utm_medium=y&utm_source=x"
        if link.fragment:
            href += "#top"
        return href

    def _anchor(self, link: Link, host: int, base: str) -> str:
        # Generated hrefs hold no quotes or angle brackets; only the query's & needs escaping.
        href = self._href(link, host, base).replace("&", "&amp;")
        rel = ' rel="nofollow"' if link.nofollow else ""
        return f'<a href="{href}"{rel}>{self._names[link.host]}{link.path}</a>'

    def _near_dup_page(self, host: int, path: str, group: int) -> str:
        """An article of the labelled set: the variants of one group share every word
        but a date, an ad block or a session id."""
        name = html.escape(self._web.host_name(host))
        rng = random.Random(f"{self._web.seed}:{host}:nd:{group}")
        paragraphs = [self._pool[rng.randrange(len(self._pool))] for _ in range(rng.randint(5, 8))]
        day = 14 if path.endswith("/date") else 7
        home = self._origins[host] + "/"
        sid = "5e55105d" if "/sid-" in path else "a11ce000"
        parts = [
            f"<!DOCTYPE html>\n<html><head><title>{name} article {group}</title></head>\n",
            f'<body><nav><a href="{home}">Home</a></nav>\n<main>',
            f"<h1>Article {group}</h1>\n<p>Published 2024-05-{day:02d}</p>\n",
        ]
        for i, para in enumerate(paragraphs):
            parts.append(f"<p>{para}</p>\n")
            if i == 1 and path.endswith("/ad"):
                parts.append(
                    "<aside>Sponsored: summer sale on garden furniture, up to half off, "
                    "order today for free delivery</aside>\n"
                )
        parts.append(f"</main><footer>session {sid}</footer></body></html>\n")
        return "".join(parts)

    def _spam_page(self, host: int, path: str) -> str:
        """A thin page of a spam host: the same few sentences on every page, a number,
        and many links all with the same anchor text."""
        name = html.escape(self._web.host_name(host))
        links = links_of(self._web, host, path)
        anchors = "".join(
            f'<li><a href="{self._href(ln, host, path)}">best offer</a></li>' for ln in links
        )
        return (
            f"<!DOCTYPE html>\n<html><head><title>{name} best offers</title></head>\n"
            f"<body><h1>Best offers</h1><p>{self._pool[host % len(self._pool)]}</p>"
            f"<p>Offer {html.escape(path)}</p><ul>{anchors}</ul></body></html>\n"
        )

    def _page(self, host: int, path: str) -> str:
        spec = self._web.spec_for(host)
        if Feature.NEAR_DUPS in spec.features and (group := near_dup_group(path)) is not None:
            return self._near_dup_page(host, path, group)
        if Feature.SPAM in spec.features and path.startswith("/p/"):
            return self._spam_page(host, path)
        name = self._web.host_name(host)
        rng = random.Random(f"{self._web.seed}:{host}:{path}:text")
        all_links = links_of(self._web, host, path)
        feeds = "".join(
            f'<link rel="alternate" type="application/rss+xml" href="{ln.path}">\n'
            for ln in all_links
            if ln.feed
        )
        links = tuple(ln for ln in all_links if not ln.feed)
        nav, rest = (links[0], links[1:]) if path != "/" else (None, links)
        if path.startswith("/dup/"):
            rng = random.Random(f"{self._web.seed}:{host}:dup")
        count = rng.randint(4, 9)
        budget = HUGE_BYTES if path == "/huge" else page_bytes(self._web, host, path)
        anchors = [self._anchor(ln, host, path) for ln in rest]
        if spec.page_mix == PageMix.REAL:  # the whole page about its drawn size
            budget -= sum(len(a) + 9 for a in anchors) + 2 * len(name) + 2 * len(path) + 300
        paragraphs: list[str] = []
        size = 0
        while size < budget or len(paragraphs) < count:
            paragraphs.append(f"<p>{self._pool[rng.randrange(len(self._pool))]}</p>")
            size += len(paragraphs[-1]) + 1
        title = html.escape(f"{name} {path}" if not path.startswith("/dup/") else f"{name} dup")
        out = [
            '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n' + feeds,
            f'<title>{title}</title>\n</head>\n<body>\n<a id="top"></a>\n<header><nav>',
            self._anchor(nav, host, path).replace(f">{name}/<", ">Home<") if nav else "Home",
            f"</nav></header>\n<main>\n<h1>{title}</h1>\n",
        ]
        # Links sit between paragraphs, the way articles cite other pages.
        per_gap = max(1, -(-len(rest) // max(1, len(paragraphs))))
        for i, para in enumerate(paragraphs):
            out.append(para + "\n")
            chunk = anchors[i * per_gap : (i + 1) * per_gap]
            if chunk:
                items = "".join(f"<li>{a}</li>" for a in chunk)
                out.append(f"<ul>{items}</ul>\n")
        out.append("</main>\n<footer>simulated web</footer>\n</body>\n</html>\n")
        return "".join(out)
