"""The fuzz targets: every parser of outside input, each called the way the crawl calls
it, with the exceptions its contract documents and the bounds it must keep.

A target takes one input as bytes (what a coverage-guided fuzzer hands it) and splits it
where it needs several values: ``split(data, n)`` cuts at the first ``n - 1`` newlines.
It raises ``Broken`` when an output breaks a bound or a stated property; any exception
not in its ``allowed`` tuple is a crash. ``tokens`` are fragments of the format (a
fuzzer's dictionary), so that random inputs reach past the first check.
"""

from __future__ import annotations

import atexit
import gzip
import json
import math
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from headway.control.log import ControlKind, check_args, control_from_json, describe
from headway.errors import ConfigError, ControlError, SeedError
from headway.fetch.decode import MAX_CODINGS, decode_content
from headway.parse.charset import decode_body, detect_charset
from headway.parse.directives import refresh_url, robots_content, x_robots_tag
from headway.parse.feed import FEED_HANDLER
from headway.parse.handler import Document, media_type_of
from headway.parse.handlers import HTML_HANDLER, load_handlers
from headway.parse.page import ParsedPage
from headway.parse.sitemap import SITEMAP_HANDLER
from headway.policy.retry_after import parse_retry_after
from headway.policy.robots import RobotsKind, robots_from_response
from headway.report.build import ReportBuilder
from headway.report.ledger_render import to_json as ledger_json
from headway.report.ledger_render import to_text as ledger_text
from headway.report.politeness import LedgerBuilder
from headway.settings import build_settings
from headway.settings.sources import load_toml
from headway.settings.tree import KEYS
from headway.store.cdxj import parse_cdxj_line
from headway.store.crawllog import format_entry, parse_entry
from headway.store.recovery import complete_gzip_prefix, recover_store
from headway.urls.canonical import canonicalize, canonicalize_links
from headway.urls.seeds import load_seeds

#: What one input may cost by default (wall seconds), and the largest input tried.
SECONDS = 2.0
MAX_INPUT = 64 * 1024
NOW = 1_750_000_000.0
UA = "fuzzbot/1.0 (+https://example.org/fuzzbot)"
PAGE = "https://fuzz.example/dir/page.html?q=1"


class Broken(AssertionError):
    """An output broke a bound or a property the parser's contract states."""


@dataclass(frozen=True, slots=True)
class Target:
    name: str
    run: Callable[[bytes], object]
    tokens: tuple[bytes, ...]
    allowed: tuple[type[BaseException], ...] = ()
    seconds: float = SECONDS  # wall time one input may take
    max_input: int = MAX_INPUT


def split(data: bytes, n: int) -> list[bytes]:
    parts = data.split(b"\n", n - 1)
    return parts + [b""] * (n - len(parts))


def text(data: bytes) -> str:
    """Bytes as the crawl would see them in a header or a line: UTF-8, bad bytes
    replaced (aiohttp and the line readers do the same)."""
    return data.decode("utf-8", errors="replace")


def latin1(data: bytes) -> str:
    """Bytes as an HTTP header value decoded by the client (every byte one character)."""
    return data.decode("latin-1")


def check(ok: bool, what: str) -> None:
    if not ok:
        raise Broken(what)


def _page_bounds(page: ParsedPage, max_links: int) -> None:
    check(len(page.links) <= max_links, f"{len(page.links)} links > max_links {max_links}")
    for link in page.links:
        check(link.startswith(("http://", "https://")), f"link not http(s): {link!r}")


# -- robots.txt ------------------------------------------------------------------------


def robots(data: bytes) -> object:
    ua_line, body = split(data, 2)
    rules = robots_from_response(status=200, body=body, user_agent=UA, now=NOW)
    check(rules.kind is not RobotsKind.DISALLOW_ALL, "a 200 answer read as unreachable")
    if rules.crawl_delay is not None:
        check(
            math.isfinite(rules.crawl_delay) and rules.crawl_delay >= 0,
            f"Crawl-delay {rules.crawl_delay}",
        )
    check(rules.allowed("https://fuzz.example/robots.txt"), "/robots.txt disallowed")
    rules.allowed("https://fuzz.example/" + text(ua_line))
    check(len(rules.sitemaps()) <= 16, "more sitemaps than the limit")
    return rules


ROBOTS_TOKENS = (
    b"User-agent: ",
    b"user-agent:*\n",
    b"User-agent: fuzzbot\n",
    b"Disallow: /",
    b"Allow: /",
    b"Crawl-delay: ",
    b"Sitemap: https://fuzz.example/s.xml\n",
    b"*",
    b"$",
    b"%2F",
    b"%",
    b"#",
    b"\n",
    b"\r\n",
    b"\xef\xbb\xbf",
    b"1e999",
    b"nan",
    b"-1",
    b"0.5",
    b"Content-Signal: ai-train=no\n",
)

# -- documents: HTML, sitemaps, feeds ---------------------------------------------------


def _document(data: bytes, handler_name: str) -> object:
    ctype, body = split(data, 2)
    max_links = 500
    doc = Document(
        url=PAGE,
        body=body,
        content_type=latin1(ctype) or None,
        robots_token="fuzzbot",
        max_links=max_links,
        max_bytes=1024 * 1024,
    )
    handler = {"html": HTML_HANDLER, "sitemap": SITEMAP_HANDLER, "feed": FEED_HANDLER}
    page = handler[handler_name].handle(doc)
    _page_bounds(page, max_links)
    load_handlers().select(doc.content_type, body[:2048])
    return page


HTML_TOKENS = (
    b"text/html; charset=",
    b"<a href=",
    b"<area href=",
    b"<base href=",
    b'<meta name="robots" content="nofollow">',
    b'<meta http-equiv="refresh" content="0; url=',
    b'<meta charset="',
    b'<link rel="alternate" type="application/rss+xml" href="',
    b"<noscript>",
    b"<script>",
    b"</script>",
    b"<!--",
    b"-->",
    b"<title>",
    b"rel=nofollow",
    b"javascript:",
    b"//",
    b"../",
    b"?utm_source=x&",
    b"#frag",
    b"https://user:pw@",
    b"&amp;",
    b"\xef\xbb\xbf",
    b"\xff\xfe",
    b'"',
    b">",
)

XML_TOKENS = (
    b"application/xml\n",
    b'<?xml version="1.0" encoding="',
    b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">',
    b"</urlset>",
    b"<sitemapindex>",
    b"<sitemap>",
    b"<url>",
    b"</url>",
    b"<loc>",
    b"</loc>",
    b"<lastmod>2024-05-01T12:00:00+02:00</lastmod>",
    b"<changefreq>daily</changefreq>",
    b'<rss version="2.0"><channel>',
    b"<item><link>",
    b"</link></item>",
    b'<feed xmlns="http://www.w3.org/2005/Atom">',
    b'<entry><link rel="alternate" href="',
    b"<updated>",
    b"<pubDate>Mon, 01 Jan 2024 00:00:00 GMT</pubDate>",
    b"<rdf:RDF>",
    b'<!DOCTYPE x [<!ENTITY a "b">]>',
    b"&a;",
    b"&amp;",
    b"<![CDATA[",
    b"]]>",
    b"https://fuzz.example/",
    b"\x1f\x8b\x08\x00",
    b"<html>",
)

# -- URLs and seeds ---------------------------------------------------------------------


def url_canonical(data: bytes) -> object:
    base, href = (text(p) for p in split(data, 2))
    for b in (base or None, PAGE):
        out = canonicalize(href, b)
        if out is not None:
            check(out.startswith(("http://", "https://")), f"not http(s): {out!r}")
            check(canonicalize(out) == out, f"not a fixed point: {out!r}")
            check("#" not in out, f"fragment kept: {out!r}")
            check(len(out) <= 12 * (len(href) + len(b or "")) + 64, "canonical form too long")
    links, _ = canonicalize_links(PAGE, [href, href + "#x", "/" + href])
    check(all(canonicalize(u) == u for u in links), "canonicalize_links not canonical")
    return links


URL_TOKENS = (
    b"https://",
    b"http://",
    b"HTTP://",
    b"ftp://",
    b"//",
    b"\n",
    b"xn--",
    b"[::1]",
    b"127.0.0.1",
    b":8080",
    b":443",
    b"@",
    b"user:pass@",
    b"%",
    b"%2e",
    b"%2F",
    b"%00",
    b"/./",
    b"/../",
    b"?",
    b"&",
    b"=",
    b"utm_medium=",
    b"#",
    b"\\",
    b"\t",
    b" ",
    b"\xc3\xa9",
    b"\xe2\x80\x8b",
    b"\xef\xbc\x8e",
)

_TMP = Path(tempfile.mkdtemp(prefix="headway-fuzz-"))
atexit.register(shutil.rmtree, _TMP, True)


def seeds(data: bytes) -> object:
    path = _TMP / "seeds.txt"
    path.write_bytes(data)
    result = load_seeds(path, max_length=2048)
    for u in result.urls:
        check(canonicalize(u) == u, f"seed not canonical: {u!r}")
        check(len(u) <= 2048, "seed longer than max_length")
    check(len(result.problems) <= result.unusable, "more problems than unusable lines")
    return result


SEED_TOKENS = (*URL_TOKENS, b"example.org", b"localhost", b"# c\n", b" # c", b"\r\n")

# -- HTTP header values -----------------------------------------------------------------


def retry_after(data: bytes) -> object:
    for value in (latin1(data), text(data)):
        wait = parse_retry_after(value, NOW)
        if wait is not None:
            check(0.0 <= wait <= 86400.0, f"Retry-After {wait}")
    return None


RETRY_TOKENS = (
    b"Mon, 01 Jan 2024 00:00:00 GMT",
    b"Sunday, 06-Nov-94 08:49:37 GMT",
    b"Sun Nov  6 08:49:37 1994",
    b"-0000",
    b"+9999",
    b"120",
    b"99999999999999999999",
    b" ",
    b"\xd9\xa3",
    b"\xef\xbc\x91",
    b"Feb 30",
    b"9999",
)


def content_type(data: bytes) -> object:
    header, body = split(data, 2)
    value = latin1(header)
    media_type_of(value)
    charset = detect_charset(value, body)
    check(b"".decode(charset) == "", f"detected codec {charset!r} unusable")
    decoded = decode_body(body, charset)
    check(len(decoded) <= 2 * len(body) + 1, "decoded text longer than twice its bytes")
    load_handlers().select(value, body[:2048])
    return decoded


CTYPE_TOKENS = (
    b"text/html",
    b"; charset=",
    b"charset=utf-8",
    b"charset=utf-16",
    b"charset=shift_jis",
    b"charset=iso-8859-1",
    b"charset=utf-7",
    b"charset=base64",
    b"charset=rot13",
    b'charset="',
    b"application/xml",
    b"application/rss+xml",
    b"text/plain",
    b'<meta charset="',
    b'<meta http-equiv="content-type" content="text/html; charset=',
    b"\xef\xbb\xbf",
    b"\xfe\xff",
    b"\xff\xfe",
    b"\n",
)


def content_encoding(data: bytes) -> object:
    header, raw = split(data, 2)
    limit = 256 * 1024
    decoded, truncated, error = decode_content(raw, latin1(header), limit)
    check(len(decoded) <= limit, f"decoded {len(decoded)} bytes > limit {limit}")
    if error is not None:
        check(decoded == b"" and not truncated, "an error with output")
    codings = [c for c in latin1(header).split(",") if c.strip().lower() not in ("", "identity")]
    if len(codings) > MAX_CODINGS:
        check(error is not None, f"{len(codings)} codings undone")
    return decoded


def _bomb() -> bytes:
    return gzip.compress(b"\0" * (4 * 1024 * 1024), 9)


ENCODING_TOKENS = (
    b"gzip\n",
    b"x-gzip\n",
    b"deflate\n",
    b"br\n",
    b"identity",
    b", ",
    b"gzip, gzip, gzip, gzip, gzip\n",
    b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03",
    b"\x78\x9c",
    b"\x78\x01",
    gzip.compress(b"<html>hello</html>"),
    _bomb(),
)


def robots_tag(data: bytes) -> object:
    header, content = split(data, 2)
    x_robots_tag(latin1(header), "fuzzbot")
    robots_content(text(content))
    target = refresh_url(text(content))
    if target is not None:
        check(len(target) <= len(content), "refresh URL longer than its value")
    return target


ROBOTS_TAG_TOKENS = (
    b"noindex",
    b"nofollow",
    b"none",
    b"fuzzbot:",
    b"googlebot: ",
    b", ",
    b"\n",
    b"0; url=",
    b"5;URL='",
    b"'",
    b'"',
    b" ",
    b";",
    b"0.5",
)

# -- records: WARC recovery, crawl log, CDXJ, control log --------------------------------


def _valid_warc() -> bytes:
    members = []
    for i in range(3):
        record = (
            b"WARC/1.1\r\nWARC-Type: response\r\nContent-Length: 5\r\n\r\n"
            + f"body{i}".encode()[:5]
            + b"\r\n\r\n"
        )
        members.append(gzip.compress(record))
    return b"".join(members)


_WARC = _valid_warc()


def warc_recovery(data: bytes) -> object:
    """The newest WARC file cut anywhere and followed by anything, beside a CDXJ index
    and a crawl log of fuzzed lines: recovery repairs them in place, and repairing
    again changes nothing."""
    cut = int.from_bytes(data[:2], "big") % (len(_WARC) + 1) if len(data) >= 2 else 0
    tail, cdxj, crawl_log = split(data[2:], 3)
    d = Path(tempfile.mkdtemp(dir=_TMP))
    try:
        warc = d / "h-00000.warc.gz"
        warc.write_bytes(_WARC[:cut] + tail)
        (d / "index.cdxj").write_bytes(cdxj.replace(b"\\n", b"\n"))
        (d / "crawl.log.jsonl").write_bytes(crawl_log.replace(b"\\n", b"\n"))
        recover_store(d)
        if warc.exists():
            check(complete_gzip_prefix(warc) == warc.stat().st_size, "WARC left partial")
        log_bytes = (d / "crawl.log.jsonl").read_bytes()
        check(log_bytes == b"" or log_bytes.endswith(b"\n"), "crawl log left partial")
        again = recover_store(d)
        check(
            not again.warc_bytes_cut and not again.cdxj_lines_dropped and not again.log_bytes_cut,
            f"a second recovery changed something: {again}",
        )
        return again
    finally:
        for p in d.iterdir():
            p.unlink()
        d.rmdir()


WARC_TOKENS = (
    b"\n",
    b"\\n",
    b"\x1f\x8b",
    b'org,example)/ 20240501120000 {"url":"https://example.org/","filename":"h-00000.warc.gz",'
    b'"offset":"0","length":"10"}\\n',
    b'{"time":"2024-05-01T12:00:00.000Z","url":"https://a.example/"}\\n',
    b"{",
    b"}",
)


_LOG_TEMPLATE: dict[str, object] = {
    "time": "2024-05-01T12:00:00.123Z",
    "url": "https://a.example/p",
    "status": 200,
    "outcome": "ok",
    "bytes": 10,
    "content_type": "text/html",
    "digest": "sha1:AAAA",
    "duration": 0.1,
    "depth": 1,
    "outlinks": 2,
    "truncated": None,
    "error": None,
    "via": "https://a.example/",
    "note": "robots.txt rules",
    "sent": 1714564800.2,
    "delay": 1.0,
    "crawl_delay": 2.0,
    "retry_after": 5.0,
}


def _read_lines(lines: list[str]) -> None:
    entries = []
    for line in lines:
        try:
            entries.append(parse_entry(line))
        except ValueError:
            continue
    ledger = LedgerBuilder()  # the readers of crawl logs take whatever a line held
    report = ReportBuilder()
    for entry in entries:
        format_entry(entry)
        ledger.add(entry)
        report.add(entry)
    built = ledger.build("fuzz")
    ledger_text(built)
    json.dumps(ledger_json(built))
    report.build(source="fuzz", seeds=report.root_urls(), frontier=None, controls=[])


def crawl_log_line(data: bytes) -> object:
    """The line as it is, and a good line with one key's value replaced by the rest of
    the input (JSON when it parses, else text), read by the report and the ledger."""
    lines = [text(data)]
    if data:
        keys = sorted(_LOG_TEMPLATE)
        values = dict(_LOG_TEMPLATE)
        try:
            value: object = json.loads(data[1:])
        except ValueError:
            value = text(data[1:])
        values[keys[data[0] % len(keys)]] = value
        lines += [json.dumps(values), json.dumps(_LOG_TEMPLATE)]
    _read_lines(lines)
    return None


def cdxj_line(data: bytes) -> object:
    return parse_cdxj_line(text(data))


RECORD_TOKENS = (
    b'{"time":"',
    b"2024-05-01T12:00:00.123Z",
    b'","url":"https://a.example/","status":200,"outcome":"ok","bytes":1,',
    b'"content_type":null,"digest":null,"duration":0.1,"depth":0,"outlinks":0,',
    b'"truncated":null,"error":null}',
    b'"sent":',
    b'"delay":',
    b"null",
    b"1e999",
    b"NaN",
    b"[]",
    b"{}",
    b'"',
    b",",
    b":",
    b"org,example)/ 20240501120000 ",
)


def control_record(data: bytes) -> object:
    control = control_from_json(1, data)
    if control is None:
        return None
    describe(control)
    try:
        check_args(control.kind, control.args, control.node)
    except ControlError as exc:
        check("\n" not in str(exc), f"a control error of several lines: {exc}")
    return control


CONTROL_TOKENS = (
    b'{"at":',
    b'"kind":"',
    *(k.value.encode() for k in ControlKind),
    b'","node":',
    b'"args":{',
    b'"urls":["',
    b'"domain":"',
    b'"host":"',
    b'"delay":',
    b'"budget":',
    b'"concurrency":',
    b'"origin":"cli"}',
    b"null",
    b"1e999",
    b"-1",
    b"}",
    b"[",
    b"]",
)

# -- settings ---------------------------------------------------------------------------


def toml_settings(data: bytes) -> object:
    path = _TMP / "settings.toml"
    path.write_bytes(data)
    flat = load_toml(path)
    return build_settings(flat)


TOML_TOKENS = (
    *sorted({f"[{k.section}]\n".encode() for k in KEYS}),
    *(f"{k.name} = ".encode() for k in KEYS),
    b"\n",
    b'"',
    b"'''",
    b"true",
    b"1e999",
    b"nan",
    b"inf",
    b"-1",
    b"0",
    b"99999999999999999999",
    b"[",
    b"]",
    b"[[",
    b"{",
    b"}",
    b",",
    b"1979-05-27T07:32:00Z",
)

TARGETS: dict[str, Target] = {
    t.name: t
    for t in (
        Target("robots", robots, ROBOTS_TOKENS),
        Target("html", lambda d: _document(d, "html"), HTML_TOKENS),
        Target("sitemap", lambda d: _document(d, "sitemap"), XML_TOKENS),
        Target("feed", lambda d: _document(d, "feed"), XML_TOKENS),
        Target("url", url_canonical, URL_TOKENS, seconds=0.5, max_input=16 * 1024),
        Target("seeds", seeds, SEED_TOKENS, allowed=(SeedError,)),
        Target("retry_after", retry_after, RETRY_TOKENS, seconds=0.5, max_input=4096),
        Target("content_type", content_type, CTYPE_TOKENS),
        Target("content_encoding", content_encoding, ENCODING_TOKENS),
        Target("robots_tag", robots_tag, ROBOTS_TAG_TOKENS, seconds=0.5, max_input=16 * 1024),
        Target("warc_recovery", warc_recovery, WARC_TOKENS),
        Target("crawl_log", crawl_log_line, RECORD_TOKENS, max_input=16 * 1024),
        Target("cdxj", cdxj_line, RECORD_TOKENS, seconds=0.5, max_input=16 * 1024),
        Target("control", control_record, CONTROL_TOKENS, seconds=0.5, max_input=16 * 1024),
        Target("toml", toml_settings, TOML_TOKENS, allowed=(ConfigError,)),
    )
}
