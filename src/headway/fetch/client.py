"""The HTTP client of the fetch stage.

``Fetcher`` performs one GET per ``fetch(url)`` and always returns a ``FetchResult``:
network, HTTP and protocol problems are outcomes, never exceptions. Redirects are not
followed (a 3xx comes back as ``Outcome.REDIRECT`` with its Location; the caller admits
the target, or for robots.txt follows it with ``robots_redirect_target``, one polite hop
at a time, at most ``MAX_ROBOTS_REDIRECTS`` hops). Every connection goes through
``CrawlResolver`` and its ``AddressGuard``; IP-literal URLs, which aiohttp connects to
without resolving, are checked here.

One call, one request: aiohttp's silent second attempt when a reused keep-alive
connection turns out closed is switched off, so every request that leaves is one result
the caller records. Credentials in a URL (``user:pw@``) are removed before the request:
no ``Authorization`` header is ever built from a URL.

Limits: at most ``max_body`` raw bytes are kept (the result is ``truncated="length"``
and the connection is closed unless the rest had already arrived), at most
``max_decoded`` decoded bytes are kept (``truncated="decoded-length"``), and
``total_timeout`` bounds a whole exchange (a body cut by it is ``truncated="time"``).
Decoding never holds the event loop for more than a slice (``decode_off_loop``).
A document (``fetch_document``: a sitemap, a feed) has one limit of its own,
``max_document``, for both its raw and its decoded bytes; robots.txt has ``max_robots``.
``max_connections`` bounds concurrent exchanges; time spent waiting for a slot is not
counted against the timeouts.

Connections: HTTP/1.1 keep-alive, one pool for every host. An idle connection is kept
``keepalive`` seconds (longer than the politeness gap, so the next request to the same
host reuses it and, over HTTPS, pays no new TLS handshake). Idle connections are not
counted against ``max_connections``; their number is bounded by the request rate times
``keepalive``, not by the number of hosts. TLS certificates are always verified, against
the system's authorities plus those of ``ca_file``; a new connection to a host resumes
the TLS session of its previous one (``fetch/tls.py``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from contextvars import ContextVar
from types import TracebackType
from typing import Self

import aiohttp
from aiohttp.connector import Connection
from yarl import URL

from headway.fetch.core import (
    DECODE_THREADS,
    INLINE_DECODED,
    MAX_ROBOTS_REDIRECTS,
    THREAD_DECODE_MIN,
    CoreClient,
    FetchConfig,
    FetchCore,
    FetchStats,
    HttpClient,
    Transport,
    decode_off_loop,
    tls_context,
)
from headway.fetch.exchange import Exchange
from headway.fetch.outcomes import classify_error, robots_redirect_target
from headway.fetch.resolver import CrawlResolver
from headway.fetch.result import Headers
from headway.policy.outcome import Outcome

__all__ = [
    "DECODE_THREADS",
    "INLINE_DECODED",
    "MAX_ROBOTS_REDIRECTS",
    "THREAD_DECODE_MIN",
    "CoreClient",
    "FetchConfig",
    "FetchCore",
    "FetchStats",
    "Fetcher",
    "HttpClient",
    "Transport",
    "classify_error",
    "decode_off_loop",
    "robots_redirect_target",
    "tls_context",
]

log = logging.getLogger(__name__)

READ_CHUNK = 64 * 1024
#: Longest status line or response header field (bytes); a longer one makes the response
#: ``invalid_response``. aiohttp also refuses more than 128 header fields.
MAX_HEADER_LINE = 8190


#: The exchange whose request the current task is sending (set around each request).
_EXCHANGE: ContextVar[Exchange | None] = ContextVar("headway_exchange", default=None)


class _SentRequest(aiohttp.ClientRequest):
    """Records when the request left (after any connection set-up): politeness gaps are
    measured from this moment. (A request class rather than a trace hook, which costs
    aiohttp a round of signal calls at every step of every request.)"""

    async def send(self, conn: Connection) -> aiohttp.ClientResponse:
        response = await super().send(conn)
        ex = _EXCHANGE.get()
        if ex is not None and ex.sent_at is None:
            ex.sent_at = time.time()
        return response


class _PeerResponse(aiohttp.ClientResponse):
    """Notes the peer address when the response starts (the connection may be released
    to the pool before the caller looks, when the whole body arrived at once)."""

    peer_ip: str | None = None

    async def start(self, connection: Connection) -> _PeerResponse:
        transport = connection.transport
        peer = transport.get_extra_info("peername") if transport is not None else None
        if peer:
            self.peer_ip = str(peer[0])
        await super().start(connection)
        return self


def _text(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


class Fetcher(CoreClient):
    """The aiohttp client (``HttpClient``); use as ``async with Fetcher(config) as f:
    await f.fetch(url)``."""

    def __init__(self, config: FetchConfig) -> None:
        self._core = FetchCore(config, self._transport)
        self._config = config
        self._session: aiohttp.ClientSession | None = None
        self._resolver: CrawlResolver | None = None

    async def __aenter__(self) -> Self:
        cfg = self._config
        self._resolver = self._core.new_resolver()
        connector = aiohttp.TCPConnector(
            limit=cfg.max_connections,
            limit_per_host=0,
            resolver=self._resolver,
            use_dns_cache=False,
            enable_cleanup_closed=True,
            ssl=self._core.tls,
            keepalive_timeout=cfg.keepalive,
        )
        self._session = aiohttp.ClientSession(
            connector=connector,
            request_class=_SentRequest,
            auto_decompress=False,
            cookie_jar=aiohttp.DummyCookieJar(),
            timeout=aiohttp.ClientTimeout(
                total=None,
                connect=None,
                sock_connect=cfg.connect_timeout,
                sock_read=cfg.read_timeout,
            ),
            response_class=_PeerResponse,
            max_line_size=MAX_HEADER_LINE,
            max_field_size=MAX_HEADER_LINE,
        )
        # aiohttp sends an idempotent request a second time, unseen, when a reused
        # keep-alive connection was closed by the peer; every request must be one the
        # crawl records (and the limiter counted), so a closed connection is an outcome.
        if not hasattr(self._session, "_retry_connection"):
            raise RuntimeError("this aiohttp cannot turn off its silent retry")
        self._session._retry_connection = False
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None
        self._core.close()

    def describe(self) -> str:
        """The HTTP client and its version, for the start-up log."""
        return f"aiohttp {aiohttp.__version__}"

    async def _transport(
        self, target: URL, ex: Exchange, max_body: int, extra: Headers
    ) -> tuple[Outcome | None, str | None]:
        """Send the request and read the response into ``ex`` (the body up to
        ``max_body``) within the total time-out: (None, None) when it ended well, else
        the outcome and error of how it failed. This client's ``Transport``: aiohttp."""
        if self._session is None:
            raise RuntimeError("Fetcher used outside 'async with'")
        try:
            async with asyncio.timeout(self._core.config.total_timeout):
                await self._request(target, ex, max_body, extra)
        except (aiohttp.ClientError, OSError, TimeoutError, ValueError) as exc:
            return classify_error(exc)
        finally:
            if ex.response is not None:
                ex.response.close()
        return None, None

    async def _request(self, url: URL, ex: Exchange, max_body: int, extra: Headers) -> None:
        assert self._session is not None
        token = _EXCHANGE.set(ex)
        try:
            await self._send(url, ex, max_body, extra)
        finally:
            _EXCHANGE.reset(token)

    async def _send(self, url: URL, ex: Exchange, max_body: int, extra: Headers) -> None:
        assert self._session is not None
        async with self._session.get(
            url,
            headers={**self._core.headers, **dict(extra)} if extra else self._core.headers,
            allow_redirects=False,
            proxy=self._core.config.proxy,
        ) as resp:
            ex.response = resp
            ex.status = resp.status
            ex.reason = resp.reason or ""
            ex.request_headers = tuple(resp.request_info.headers.items())
            ex.headers = tuple((_text(k), _text(v)) for k, v in resp.raw_headers)
            if resp.version:
                ex.version = f"{resp.version.major}.{resp.version.minor}"
            if isinstance(resp, _PeerResponse):
                ex.ip = resp.peer_ip
            while ex.size < max_body:
                chunk = await resp.content.read(min(READ_CHUNK, max_body - ex.size))
                if not chunk:
                    return
                ex.chunks.append(chunk)
                ex.size += len(chunk)
            # At the limit: anything further means the body was cut.
            if not resp.content.at_eof() and await resp.content.readany():
                ex.cut = "length"
                resp.close()
