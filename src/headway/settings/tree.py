"""The one settings tree: every default lives here, documented once, and the list of
its keys (``KEYS``), from which flags, environment variables and docs/settings.md are made.

Every key is unique across sections, so the flag is ``--<key with dashes>``, the
environment variable ``HEADWAY_<KEY upper>`` and the TOML entry ``<key> = ...`` inside
``[<section>]``. How values are read and validated is in ``sources.py``.
"""

from __future__ import annotations

import dataclasses
import os
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

KIB = 1024
MIB = 1024 * KIB


def _opt(
    default: Any,
    help: str,
    *,
    min: float | None = None,
    max: float | None = None,
    above: float | None = None,
    choices: tuple[str, ...] | None = None,
) -> Any:
    """A setting's default and documentation; ``min``/``max`` are inclusive bounds,
    ``above`` an exclusive lower bound (the value must be greater)."""
    meta = {"help": help, "min": min, "max": max, "above": above, "choices": choices}
    if isinstance(default, list | tuple):
        return field(default_factory=lambda: tuple(default), metadata=meta)
    return field(default=default, metadata=meta)


def default_parsers() -> int:
    """Parser processes by default: cores - 1, at least 1."""
    return max(1, (os.cpu_count() or 2) - 1)


@dataclass(frozen=True, slots=True)
class CrawlSettings:
    out: Path = _opt(Path("crawl"), "crawl directory: frontier, WARC files, index, logs")
    max_pages: int = _opt(0, "stop after this many fetches (0: no limit)", min=0)
    max_duration: float = _opt(0.0, "stop after this many seconds (0: no limit)", min=0)
    max_bytes: int = _opt(0, "stop after this many body bytes received (0: no limit)", min=0)
    seed_scheme: str = _opt("https", "scheme for bare-domain seeds", choices=("http", "https"))
    unanswered_wait: float = _opt(
        50.0,
        "a crawl no host of which ever answered ends after this many seconds once only "
        "unanswered hosts are queued (0: never; a host that answered before keeps its "
        "robots.txt retries)",
        min=0,
        max=86400,
    )


@dataclass(frozen=True, slots=True)
class IdentitySettings:
    user_agent: str = _opt(
        "", "User-Agent header; must name the crawler and carry a contact URL or e-mail"
    )


@dataclass(frozen=True, slots=True)
class ScopeSettings:
    scope: str = _opt(
        "seed-domains",
        "which links are followed: the seeds' registered domains, their hosts, the URLs under "
        "each seed's path prefix (its URL up to the last /), or any",
        choices=("seed-domains", "seed-hosts", "prefix", "open"),
    )
    extra_hops: int = _opt(
        0,
        "pages up to this many links outside the scope are fetched (their links outside "
        "it are not followed further)",
        min=0,
        max=100,
    )
    include_surt: tuple[str, ...] = _opt(
        (),
        "SURT prefix whose URLs are in scope too (org,example)/docs or http://(org,example,); "
        "repeatable)",
    )
    exclude_surt: tuple[str, ...] = _opt((), "SURT prefix whose URLs are refused (repeatable)")
    include: tuple[str, ...] = _opt((), "regex a URL must match (repeatable; any one)")
    exclude: tuple[str, ...] = _opt((), "regex that rejects a URL (repeatable)")
    optout_file: Path | None = _opt(None, "file of domains never to fetch (one a line)")
    max_depth: int = _opt(50, "maximum link depth from a seed", min=0, max=10_000)
    max_url_length: int = _opt(2083, "longer URLs are not admitted", min=16, max=100_000)
    max_links: int = _opt(
        5000, "links taken from one page (the first ones in the document)", min=1, max=1_000_000
    )
    recent_urls: int = _opt(
        50_000,
        "URLs remembered at admission so repeated links skip the frontier "
        "(memory: about 150 bytes each)",
        min=0,
        max=10_000_000,
    )
    sitemap_guess: bool = _opt(
        False,
        "also read /sitemap.xml of every host whose robots.txt names no sitemap "
        "(sitemaps robots.txt names are always read)",
    )
    trap_check: bool = _opt(
        True,
        "refuse URLs that look like traps (repeated path segments, very deep paths, "
        "calendar pages far from this year)",
    )


@dataclass(frozen=True, slots=True)
class CanonSettings:
    strip_params: tuple[str, ...] = _opt(
        (), "extra query parameters to strip (utm_*, gclid, fbclid... always are)"
    )
    sort_query: bool = _opt(True, "sort query parameters when canonicalizing")


@dataclass(frozen=True, slots=True)
class PolitenessSettings:
    delay: float = _opt(1.0, "minimum seconds between request starts to one host", min=0, max=3600)
    max_per_host: int = _opt(1, "ceiling of concurrent requests to one host", min=1, max=64)
    host_limit: tuple[str, ...] = _opt(
        (), "per-host ceiling override HOST=N or *.SUFFIX=N (repeatable)"
    )
    crawl_delay_max: float = _opt(
        30.0,
        "a host whose robots.txt Crawl-delay exceeds this is parked: crawled only at its own "
        "slower pace, never faster, and reported as parked",
        min=0,
        max=86400,
    )
    backoff_max: float = _opt(300.0, "cap of the per-host pushback backoff (s)", min=1, max=86400)
    park_seconds: float = _opt(600.0, "cool-down of a host whose health collapsed (s)", min=1)
    robots_ttl: float = _opt(86400.0, "how long a robots.txt stays cached (s)", min=60)
    robots_retry_base: float = _opt(
        60.0,
        "first wait after robots.txt was unreachable or 5xx; doubles per failure (s)",
        min=0.01,
        max=86400,
    )
    robots_give_up: int = _opt(
        4, "after this many failed robots.txt fetches in a row the host's URLs fail", min=1, max=100
    )


@dataclass(frozen=True, slots=True)
class FetchSettings:
    concurrency: int = _opt(64, "global bound on requests in flight", min=1, max=10_000)
    connect_timeout: float = _opt(10.0, "connect timeout (s)", min=0.1, max=600)
    read_timeout: float = _opt(20.0, "timeout between reads (s)", min=0.1, max=600)
    total_timeout: float = _opt(30.0, "timeout for one whole fetch (s)", min=0.1, max=3600)
    max_body: int = _opt(256 * KIB, "bytes of body kept; longer bodies are truncated", min=1024)
    max_decoded: int = _opt(8 * MIB, "cap on decompressed body size", min=1024)
    max_parsed: int = _opt(
        1 * MIB, "decoded bytes of a page that are parsed (the WARC keeps the whole body)", min=1024
    )
    max_document_bytes: int = _opt(
        50 * MIB,
        "bytes of a sitemap or feed kept, raw and decoded (instead of --max-body and "
        "--max-decoded); the default is the sitemap protocol's 50 MB per file; a longer "
        "one is refused as truncated",
        min=1024,
    )
    non_html: str = _opt(
        "store", "non-HTML responses: store in WARC or skip", choices=("store", "skip")
    )
    allow_loopback: bool = _opt(False, "allow fetching loopback addresses (tests, local sites)")
    allow_private: bool = _opt(False, "allow fetching private and link-local addresses")
    resolve: tuple[str, ...] = _opt((), "HOST=ADDR or *.SUFFIX=ADDR name override (repeatable)")
    hosts_file: Path | None = _opt(None, "hosts-format file of name overrides")
    dns_ttl: float = _opt(300.0, "DNS cache lifetime (s)", min=0)
    proxy: str | None = _opt(None, "HTTP(S) proxy URL for every request")
    proxy_concurrency: int = _opt(0, "requests in flight through the proxy (0: concurrency)", min=0)
    ca_file: Path | None = _opt(
        None,
        "PEM file of certificate authorities to trust in addition to the system ones "
        "(certificates are always verified)",
    )
    quota_status: int = _opt(
        0, "status that means quota exhausted: pause everything (0: off)", min=0, max=999
    )
    http_client: str = _opt(
        "aiohttp",
        "HTTP client of the fetch stage: aiohttp, or curl (libcurl; needs the curl extra, "
        "see README, The HTTP client)",
        choices=("aiohttp", "curl"),
    )


@dataclass(frozen=True, slots=True)
class FrontierSettings:
    store: str = _opt(
        "",
        "frontier backend: empty for the embedded SQLite file in the crawl directory, or "
        "redis://HOST:PORT/DB, rediss://... (TLS), redis+cluster://H1:P1,H2:P2",
    )
    host_budget: int = _opt(10_000, "max URLs one host may hold or have fetched", min=1)
    max_queued: int = _opt(
        10_000_000, "max queued URLs in the frontier; lowest priority shed", min=100
    )
    bloom_capacity: int = _opt(
        10_000_000,
        "most URLs the seen filter is sized for (its memory: 1.8 bytes per URL of its "
        "sizing); the embedded store's filter starts at 65,536 and grows 16-fold to this; "
        "a shared (Redis) crawl sizes its seen buckets for it when it is created",
        min=1000,
    )
    memory_target_mib: int = _opt(
        0,
        "while the node's RSS is over this, admission sheds the deepest new links "
        "(reason 'memory'); 0: off",
        min=0,
    )
    frontier_cache_mib: int = _opt(
        16,
        "SQLite page cache of the frontier; with the Bloom filter it bounds the "
        "frontier's memory whatever the crawl's size; under about 6 bytes per seen URL "
        "admission slows down (the node warns once)",
        min=1,
        max=65536,
    )
    lease_margin: float = _opt(30.0, "lease = total timeout + this margin (s)", min=1)
    priority: str = _opt(
        "quality",
        "frontier order: 'quality' (depth, near-duplicate source, host quality, in-links; "
        "see docs/priority.md) or 'depth' (shallowest first)",
        choices=("quality", "depth"),
    )
    host_order: str = _opt(
        "importance",
        "which ready host goes next when more are ready than can be served: "
        "'importance' (linked from more hosts, fewer pages taken; see docs/priority.md) "
        "or 'ready' (ready longest first)",
        choices=("importance", "ready"),
    )
    quality_gap: float = _opt(
        0.0,
        "under --priority quality, a host of quality below 0.5 waits up to this many "
        "extra seconds between requests (0: off; see docs/priority.md)",
        min=0,
        max=86400,
    )


@dataclass(frozen=True, slots=True)
class RetrySettings:
    retry_budget: int = _opt(3, "retries per URL for retryable failures", min=0, max=100)
    retry_base: float = _opt(2.0, "base of the exponential retry backoff (s)", min=0.01)
    retry_cap: float = _opt(600.0, "cap of one retry delay (s)", min=0.01)


@dataclass(frozen=True, slots=True)
class RuntimeSettings:
    parsers: int = _opt(0, "parser processes (0: cores - 1, at least 1)", min=0, max=256)
    parse_queue: int = _opt(
        256, "pages waiting for or in parse (rate x tolerable seconds)", min=1, max=1_000_000
    )
    store_queue: int = _opt(512, "pages waiting for the WARC writer", min=1, max=1_000_000)
    parse_queue_mib: int = _opt(
        64, "MiB of page bodies waiting for a parser (bounds parse-queue by bytes)", min=1
    )
    store_queue_mib: int = _opt(
        64, "MiB of pages and links waiting in the store and settle stages (each)", min=1
    )
    settle_batch: int = _opt(200, "frontier updates per transaction", min=1, max=100_000)
    metrics_port: int = _opt(0, "serve Prometheus metrics on this port (0: off)", min=0, max=65535)
    metrics_interval: float = _opt(10.0, "seconds between metrics.jsonl lines", min=0.1)
    parse_timeout: float = _opt(
        60.0,
        "a batch of pages not parsed within this is recorded as parse errors and the "
        "parser processes are replaced (s)",
        min=0.1,
        max=3600,
    )


@dataclass(frozen=True, slots=True)
class StoreSettings:
    warc_max_size: int = _opt(1_000_000_000, "rotate WARC files past this size", min=16 * KIB)
    warc_prefix: str = _opt("headway", "WARC file name prefix")
    dedup_from: tuple[str, ...] = _opt(
        (),
        "an earlier crawl's directory or CDXJ index (repeatable): payloads archived there "
        "are written as revisit records referring to the earlier capture",
    )
    warc_gzip_level: int = _opt(
        6,
        "gzip level of WARC records, zlib's scale mapped onto ISA-L's (1-2: fastest, "
        "about 15% larger; 3-8: about zlib 1 in size; 9: about zlib 6)",
        min=1,
        max=9,
    )
    store_sync: str = _opt(
        "interval",
        "fsync WARC, index and crawl log after every batch (survives power loss, "
        "slower) or at most once a second (survives the process being killed)",
        choices=("batch", "interval"),
    )


@dataclass(frozen=True, slots=True)
class TextSettings:
    text: bool = _opt(
        False,
        "write each HTML page's text, with its language, as WARC conversion records in "
        "text/text-*.warc.gz (docs/outputs.md; needs the headway[text] extra)",
    )
    text_mode: str = _opt(
        "main",
        "main: the main content (resiliparse); all: all visible text; accurate: main "
        "content by trafilatura (better on articles, ten times dearer; headway[accurate])",
        choices=("main", "all", "accurate"),
    )
    text_use: str = _opt(
        "ai-train",
        "the use the text output is for: no text is written for a page whose AI-use "
        "signals reserve it (robots.txt Content-Signal, TDMRep, noai); any: write all",
        choices=("ai-train", "ai-input", "search", "any"),
    )
    outlinks: bool = _opt(
        False,
        "write each HTML page's links (anchor text, rel), canonical, hreflang and meta "
        "robots as WARC metadata records (JSON) in outlinks/outlinks-*.warc.gz",
    )
    parquet_index: bool = _opt(
        False,
        "write a Parquet index of the WARC records in index/ (Common Crawl's column "
        "names; DuckDB reads index/*.parquet as one table; needs headway[text])",
    )


@dataclass(frozen=True, slots=True)
class DistributedSettings:
    crawl_id: str | None = _opt(
        None, "name of the shared crawl in a redis store (needed with a redis --store)"
    )
    shards: int = _opt(
        64, "shards of a new shared crawl (fixed when the crawl is created)", min=1, max=16_384
    )
    shard_ttl: float = _opt(
        10.0, "seconds a dead node keeps its shards (heartbeat every third of it)", min=0.3
    )
    store_outage_limit: float = _opt(
        600.0, "seconds a node waits for an unreachable store before it stops", min=1
    )


@dataclass(frozen=True, slots=True)
class RecrawlSettings:
    recrawl: bool = _opt(
        False,
        "keep crawling: a page that answered 200 or 304 is fetched again after its revisit "
        "interval, with conditional GET; the crawl then runs until a limit or Ctrl-C",
    )
    revisit_min: float = _opt(
        86_400.0, "shortest revisit interval, seconds (any positive number)", above=0
    )
    revisit_max: float = _opt(
        2_592_000.0, "longest revisit interval, seconds (at least revisit-min)", above=0
    )
    recrawl_share: float = _opt(
        0.5,
        "share of page fetches that go to due revisits while new URLs wait too (either "
        "kind takes what the other leaves)",
        min=0,
        max=1,
    )


@dataclass(frozen=True, slots=True)
class ConsoleSettings:
    console_port: int = _opt(
        0, "serve the operator's console on this port while crawling (0: off)", min=0, max=65535
    )
    console_host: str = _opt(
        "127.0.0.1",
        "address the console listens on; any other than loopback makes controls need the "
        "console's token",
    )


@dataclass(frozen=True, slots=True)
class OutputSettings:
    quiet: bool = _opt(False, "no progress line, only the summary")
    log_format: str = _opt("text", "log format on stderr", choices=("text", "json"))


@dataclass(frozen=True, slots=True)
class Settings:
    crawl: CrawlSettings = field(default_factory=CrawlSettings)
    identity: IdentitySettings = field(default_factory=IdentitySettings)
    scope: ScopeSettings = field(default_factory=ScopeSettings)
    canon: CanonSettings = field(default_factory=CanonSettings)
    politeness: PolitenessSettings = field(default_factory=PolitenessSettings)
    fetch: FetchSettings = field(default_factory=FetchSettings)
    frontier: FrontierSettings = field(default_factory=FrontierSettings)
    retry: RetrySettings = field(default_factory=RetrySettings)
    runtime: RuntimeSettings = field(default_factory=RuntimeSettings)
    store: StoreSettings = field(default_factory=StoreSettings)
    text: TextSettings = field(default_factory=TextSettings)
    distributed: DistributedSettings = field(default_factory=DistributedSettings)
    recrawl: RecrawlSettings = field(default_factory=RecrawlSettings)
    console: ConsoleSettings = field(default_factory=ConsoleSettings)
    output: OutputSettings = field(default_factory=OutputSettings)

    @property
    def parsers(self) -> int:
        return self.runtime.parsers or default_parsers()


@dataclass(frozen=True, slots=True)
class Key:
    """One setting: where it lives and how it is checked."""

    section: str
    name: str
    kind: str  # "str", "int", "float", "bool", "path", "list", "optstr", "optpath"
    default: Any
    help: str
    min: float | None
    max: float | None
    choices: tuple[str, ...] | None
    above: float | None = None  # exclusive lower bound

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    @property
    def env(self) -> str:
        return "HEADWAY_" + self.name.upper()


_KIND_OF = {
    "str": "str",
    "int": "int",
    "float": "float",
    "bool": "bool",
    "Path": "path",
    "tuple[str, ...]": "list",
    "str | None": "optstr",
    "Path | None": "optpath",
}


def _keys() -> list[Key]:
    keys = []
    for sec in dataclasses.fields(Settings):
        cls = typing.get_type_hints(Settings)[sec.name]
        hints = {f.name: str(f.type) for f in dataclasses.fields(cls)}
        instance = cls()
        for f in dataclasses.fields(cls):
            kind = _KIND_OF[hints[f.name]]
            keys.append(
                Key(
                    sec.name,
                    f.name,
                    kind,
                    getattr(instance, f.name),
                    f.metadata["help"],
                    f.metadata["min"],
                    f.metadata["max"],
                    f.metadata["choices"],
                    f.metadata["above"],
                )
            )
    return keys


KEYS: tuple[Key, ...] = tuple(_keys())
KEYS_BY_NAME: dict[str, Key] = {k.name: k for k in KEYS}
assert len(KEYS_BY_NAME) == len(KEYS), "setting names must be unique across sections"
