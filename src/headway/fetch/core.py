"""What the fetch stage's two HTTP clients share (``client.py``: aiohttp, ``curl.py``:
libcurl): their settings (``FetchConfig``) and counters (``FetchStats``), the
``HttpClient`` protocol the node uses, the ``Transport`` each client supplies, and
``FetchCore``, which does everything around a transport: the URL checks (scheme,
credentials, IP literals against the guard), the request headers, the connection slots,
the decoding off the event loop and the ``FetchResult``. ``CoreClient`` is the part of a
client that hands the protocol's calls to its core. The limits are described in
``client.py``'s docstring."""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import ssl
import time
from collections import Counter
from collections.abc import Mapping
from concurrent.futures import Executor, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Protocol, Self

from yarl import URL

from headway.fetch.decode import decode_content
from headway.fetch.exchange import Exchange, failed_result
from headway.fetch.guard import AddressGuard
from headway.fetch.resolver import CrawlResolver
from headway.fetch.result import FetchResult, Headers, first_header
from headway.fetch.tls import client_context
from headway.policy.outcome import Outcome, outcome_for_status

log = logging.getLogger(__name__)

MAX_ROBOTS_REDIRECTS = 5
#: Encoded bodies larger than this are decoded in a worker thread (zlib and brotli
#: release the GIL), keeping the event loop responsive.
THREAD_DECODE_MIN = 64 * 1024
#: A smaller encoded body is decoded on the event loop up to this many output bytes (a
#: slice of about a millisecond); when it decodes to more (a compression bomb is a few
#: hundred bytes), it is decoded again in a worker thread, up to its limit.
INLINE_DECODED = 512 * 1024
#: Threads that decode bodies off the event loop. One: a decode is CPU-bound, and each
#: further thread takes CPU time from the event loop on a busy machine (several bombs
#: decoded at once made its lag pass half a second on two cores); decodes wait their turn.
DECODE_THREADS = 1


@dataclass(frozen=True, slots=True)
class FetchConfig:
    """Settings of the fetch stage (see the module docstring for the limits)."""

    user_agent: str
    connect_timeout: float = 10.0
    read_timeout: float = 20.0
    total_timeout: float = 30.0
    max_body: int = 256 * 1024
    max_decoded: int = 8 * 1024 * 1024
    max_robots: int = 500 * 1024
    max_document: int = 50 * 1024 * 1024
    max_connections: int = 256
    allow_loopback: bool = False
    allow_private: bool = False
    resolve: Mapping[str, str] = field(default_factory=dict)
    dns_ttl: float = 300.0
    proxy: str | None = None
    accept: str = "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5"
    accept_language: str | None = None
    hosts: Mapping[str, str] = field(default_factory=dict)  # from load_hosts_file
    ca_file: Path | None = None  # extra certificate authorities (PEM)
    keepalive: float = 15.0  # seconds an idle connection is kept for reuse
    client: str = "aiohttp"  # the HTTP client: "aiohttp" or "curl" (``fetch/clients.py``)


@dataclass(frozen=True, slots=True)
class FetchStats:
    """Snapshot of a ``Fetcher``: exchanges started, in flight, raw body bytes read,
    and results that carry an error, counted by outcome value."""

    requests: int
    in_flight: int
    bytes_received: int
    errors_by_outcome: dict[str, int]


def _ip_literal(host: str | None) -> str | None:
    if not host:
        return None
    try:
        return str(ipaddress.ip_address(host.strip("[]")))
    except ValueError:
        return None


def tls_context(ca_file: Path | None) -> ssl.SSLContext:
    """Client TLS context of the fetch stage (``fetch/tls.py``: verification on, the
    system's authorities plus ``ca_file``'s, sessions resumed). A missing or unreadable
    file is a ``ConfigError`` naming ``fetch.ca_file``."""
    return client_context(ca_file)


async def decode_off_loop(
    raw: bytes, encoding: str | None, max_decoded: int, executor: Executor | None = None
) -> tuple[bytes, bool, str | None]:
    """``decode_content`` without holding the event loop for long: the work is bounded
    by its output, so only what decodes to at most ``INLINE_DECODED`` bytes is decoded
    on the loop; the rest (large bodies, bombs) in a thread of ``executor`` (None: the
    loop's default executor)."""
    if not encoding:
        return decode_content(raw, encoding, max_decoded)  # nothing to undo: a cut at most
    if len(raw) <= THREAD_DECODE_MIN:
        probe = min(max_decoded, INLINE_DECODED)
        body, cut, error = decode_content(raw, encoding, probe)
        if not cut or probe == max_decoded:
            return body, cut, error
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(executor, decode_content, raw, encoding, max_decoded)


class HttpClient(Protocol):
    """What the fetch stage uses of an HTTP client; ``Fetcher`` (aiohttp) and
    ``CurlFetcher`` (libcurl, ``fetch/curl.py``) each implement it. Use as
    ``async with client: await client.fetch(url)``."""

    async def __aenter__(self) -> Self: ...

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...

    def describe(self) -> str:
        """The HTTP client and its version, for the start-up log."""
        ...

    def statistics(self) -> FetchStats: ...

    async def fetch(self, url: str, extra_headers: Headers = ()) -> FetchResult: ...

    async def fetch_document(self, url: str, extra_headers: Headers = ()) -> FetchResult: ...

    async def fetch_robots(self, url: str) -> FetchResult: ...


class Transport(Protocol):
    """One exchange's wire part, a client's own: send the request for ``target`` and
    read the response into ``ex`` (the body up to ``max_body``) within the total
    time-out; (None, None) when it ended well, else the outcome and error of how it
    failed."""

    async def __call__(
        self, target: URL, ex: Exchange, max_body: int, extra: Headers
    ) -> tuple[Outcome | None, str | None]: ...


class FetchCore:
    """What both clients share around their ``Transport``: the URL checks (scheme,
    credentials, IP literals against the guard), the request headers, the connection
    slots, the counters, the decoding and the ``FetchResult``; and the crawler's
    resolver and TLS context, for the transport to use."""

    def __init__(self, config: FetchConfig, transport: Transport) -> None:
        self.config = config
        self._transport = transport
        self.guard = AddressGuard(
            allow_loopback=config.allow_loopback, allow_private=config.allow_private
        )
        self._slots = asyncio.Semaphore(max(1, config.max_connections))
        self._decoder = ThreadPoolExecutor(DECODE_THREADS, thread_name_prefix="headway-decode")
        self._requests = 0
        self._in_flight = 0
        self._bytes = 0
        self._errors: Counter[str] = Counter()
        headers = {
            "User-Agent": config.user_agent,
            "Accept": config.accept,
            "Accept-Encoding": "gzip, deflate, br",
        }
        if config.accept_language:
            headers["Accept-Language"] = config.accept_language
        self.headers = headers
        self.tls = client_context(config.ca_file)

    def new_resolver(self) -> CrawlResolver:
        """The crawler's resolver (overrides, DNS cache, the address guard; the proxy's
        name exempt from the guard)."""
        cfg = self.config
        proxy_host = URL(cfg.proxy).host if cfg.proxy else None
        return CrawlResolver(
            overrides=cfg.resolve,
            guard=self.guard,
            dns_ttl=cfg.dns_ttl,
            hosts=cfg.hosts,
            exempt_hosts=(proxy_host,) if proxy_host else (),
        )

    def close(self) -> None:
        """Stop the decoding thread (a client's ``__aexit__``)."""
        self._decoder.shutdown(wait=False, cancel_futures=True)

    def statistics(self) -> FetchStats:
        return FetchStats(
            requests=self._requests,
            in_flight=self._in_flight,
            bytes_received=self._bytes,
            errors_by_outcome=dict(self._errors),
        )

    async def fetch(self, url: str, extra_headers: Headers = ()) -> FetchResult:
        """GET ``url`` once, redirects not followed; ``extra_headers`` are sent besides
        the client's own (e.g. the validators of a conditional revisit)."""
        cfg = self.config
        return await self._fetch(url, cfg.max_body, cfg.max_decoded, extra_headers)

    async def fetch_document(self, url: str, extra_headers: Headers = ()) -> FetchResult:
        """``fetch`` for a document (a sitemap, a feed): raw and decoded bodies are each
        kept up to ``max_document`` bytes instead of the page limits."""
        cap = self.config.max_document
        return await self._fetch(url, cap, cap, extra_headers)

    async def fetch_robots(self, url: str) -> FetchResult:
        """GET one robots.txt URL (one hop: a redirect is returned, see
        ``robots_redirect_target``) with the robots.txt size cap."""
        cap = self.config.max_robots
        return await self._fetch(url, cap, cap)

    async def _fetch(
        self, url: str, max_body: int, max_decoded: int, extra: Headers = ()
    ) -> FetchResult:
        async with self._slots:
            self._requests += 1
            self._in_flight += 1
            try:
                result = await self._exchange(url, max_body, max_decoded, extra)
            finally:
                self._in_flight -= 1
        self._bytes += len(result.raw_body)
        if result.error is not None:
            self._errors[result.outcome.value] += 1
        return result

    def _planned_headers(self, url: URL, extra: Headers) -> Headers:
        host = url.raw_host or ""
        if ":" in host:
            host = f"[{host}]"
        if url.explicit_port:
            host = f"{host}:{url.port}"
        return (("Host", host), *self.headers.items(), *extra)

    def _prepare(
        self, url: str, started_at: float, t0: float, extra: Headers
    ) -> tuple[URL, str, Exchange] | FetchResult:
        """The target of ``url`` (credentials removed) and its exchange, or the result
        of a URL that is not fetched (not http(s), or an IP literal the guard refuses)."""
        try:
            target = URL(url)
        except ValueError as exc:
            return failed_result(
                url, started_at, t0, Outcome.INVALID_RESPONSE, f"invalid URL: {exc}"
            )
        if target.scheme not in ("http", "https") or not target.raw_host:
            return failed_result(
                url, started_at, t0, Outcome.INVALID_RESPONSE, "not an http(s) URL"
            )
        if target.raw_user is not None or target.raw_password is not None:
            # canonical URLs carry no credentials; one that does is never used with them
            target = target.with_user(None)
            url = str(target)
        ex = Exchange(self._planned_headers(target, extra))
        literal = _ip_literal(target.raw_host)
        if literal is not None and (reason := self.guard.refusal(literal)) is not None:
            ex.ip = literal
            refused = f"{literal} refused: {reason}"
            return failed_result(url, started_at, t0, Outcome.BLOCKED_ADDRESS, refused, ex)
        return target, url, ex

    async def _exchange(
        self, url: str, max_body: int, max_decoded: int, extra: Headers = ()
    ) -> FetchResult:
        started_at = time.time()
        t0 = time.monotonic()
        prepared = self._prepare(url, started_at, t0, extra)
        if isinstance(prepared, FetchResult):
            return prepared
        target, url, ex = prepared
        outcome, error = await self._transport(target, ex, max_body, extra)
        if outcome is None:
            return await self._result(url, started_at, t0, ex, max_decoded)
        assert error is not None
        if ex.status is None:
            return failed_result(url, started_at, t0, outcome, error, ex)
        # Headers arrived, the body did not finish: keep what was read.
        ex.cut = "time" if outcome is Outcome.TIMEOUT else "disconnect"
        return await self._result(url, started_at, t0, ex, max_decoded, error, outcome)

    async def _result(
        self,
        url: str,
        started_at: float,
        t0: float,
        ex: Exchange,
        max_decoded: int,
        error: str | None = None,
        outcome: Outcome | None = None,
    ) -> FetchResult:
        assert ex.status is not None
        cut = ex.cut
        raw = b"".join(ex.chunks)
        encoding = first_header(ex.headers, "Content-Encoding")
        body, decoded_cut, decode_error = await decode_off_loop(
            raw, encoding, max_decoded, self._decoder
        )
        if decoded_cut:
            cut = "decoded-length"
        location = first_header(ex.headers, "Location")
        if outcome is None:
            outcome = outcome_for_status(ex.status, has_location=bool(location))
        if decode_error is not None and error is None:
            outcome, error = Outcome.INVALID_RESPONSE, decode_error
        return FetchResult(
            url=url,
            started_at=started_at,
            duration=time.monotonic() - t0,
            outcome=outcome,
            status=ex.status,
            reason=ex.reason,
            http_version=ex.version,
            request_headers=ex.request_headers,
            response_headers=ex.headers,
            raw_body=raw,
            body=body,
            truncated=cut,
            ip=ex.ip,
            sent_at=ex.sent_at,
            error=error,
        )


class CoreClient:
    """The calls of ``HttpClient`` that a client hands to its ``FetchCore`` as they are
    (``self._core``, set by the client)."""

    _core: FetchCore

    def statistics(self) -> FetchStats:
        return self._core.statistics()

    async def fetch(self, url: str, extra_headers: Headers = ()) -> FetchResult:
        """``FetchCore.fetch``: GET ``url`` once, redirects not followed."""
        return await self._core.fetch(url, extra_headers)

    async def fetch_document(self, url: str, extra_headers: Headers = ()) -> FetchResult:
        """``FetchCore.fetch_document``: a sitemap or a feed, with its own limit."""
        return await self._core.fetch_document(url, extra_headers)

    async def fetch_robots(self, url: str) -> FetchResult:
        """``FetchCore.fetch_robots``: one robots.txt URL, one hop."""
        return await self._core.fetch_robots(url)
