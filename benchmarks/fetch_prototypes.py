"""Prototype HTTP/1.1 clients, for measuring what the fetch stage's client costs per
fetch (``bench_fetch_tls.py --clients``) and in the crawl (``fetch_ab/sitecustomize.py``).
Benchmarks only: none of them is part of the crawler. The bare clients below have none
of the crawler's bounds (header limits, decoded-size caps, the address guard, time-outs
per phase, send-time politeness); each does what a fetch of a bench page needs and no
more, so its figure is a lower bound for a client of its kind. ``lean_exchange`` (at the
end) goes further: it replaces ``Fetcher._exchange`` and keeps the crawler's resolver
and address guard, total time-out, slots, decoding and ``FetchResult``, but not every
bound (its docstring says which are missing). The libcurl exchange that stood beside it
became the crawler's libcurl client (``headway.fetch.curl``, ``--http-client curl``).

Every client fetches ``GET url`` over a keep-alive pool, sends the headers the crawler
sends, verifies TLS against ``ca_file`` with host names checked, keeps at most
``max_body`` bytes of the body (a longer body is cut and its connection closed, as the
crawler cuts it), decodes a ``Content-Encoding`` with the crawler's ``decode_content``,
and returns ``(status, bytes kept)``.

- ``AiohttpClient``: aiohttp alone (one ``ClientSession``, names resolved by a static
  table), as the crawler's ``Fetcher`` uses it without the crawler's wrapping.
- ``ProtocolClient``: an ``asyncio.Protocol`` per connection and httptools' C parser
  (llhttp), over the event loop's own TLS transport and the crawler's TLS context
  (``fetch/tls.py``: sessions resumed); what a lean pure-asyncio client costs.
- ``CurlClient``: libcurl's multi interface (pycurl) driven by the event loop
  (``add_reader``/``add_writer`` on libcurl's sockets, ``call_later`` for its timer):
  connection set-up, TLS (libcurl's own OpenSSL, sessions shared between transfers)
  and HTTP parsing all in C.

pycurl and httptools are installed on demand (``pip install pycurl httptools``); they
are never dependencies of headway.
"""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from headway.fetch.decode import decode_content
from headway.fetch.result import first_header
from headway.fetch.tls import client_context

MAX_DECODED = 8 * 1024 * 1024


def ensure_installed(*modules: str) -> None:
    """Install the prototypes' libraries into this interpreter when missing."""
    missing = []
    for name in modules:
        try:
            __import__(name)
        except ImportError:
            missing.append(name)
    if missing:
        print(f"installing {' '.join(missing)} for the prototypes", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", *missing], check=True)


def request_headers(user_agent: str) -> list[tuple[str, str]]:
    """The headers the crawler's ``Fetcher`` sends besides ``Host`` (its defaults)."""
    from headway.fetch.client import FetchConfig

    accept = FetchConfig(user_agent=user_agent).accept
    encodings = "gzip, deflate, br"
    return [("User-Agent", user_agent), ("Accept", accept), ("Accept-Encoding", encodings)]


def _decoded_size(raw: bytes, encoding: str | None) -> int:
    if not encoding:
        return len(raw)
    body, _cut, _error = decode_content(raw, encoding, MAX_DECODED)
    return len(body)


class AiohttpClient:
    """aiohttp alone: one session, the crawler's TLS context, no wrapping."""

    def __init__(self, ca_file: Path, address: str, user_agent: str, max_body: int) -> None:
        import aiohttp
        from aiohttp.abc import AbstractResolver

        class Static(AbstractResolver):
            async def resolve(self, host: str, port: int = 0, family: int = 0) -> Any:
                return [
                    {"hostname": host, "host": address, "port": port,
                     "family": socket.AF_INET, "proto": 0, "flags": 0}
                ]  # fmt: skip

            async def close(self) -> None:
                return None

        connector = aiohttp.TCPConnector(
            resolver=Static(), use_dns_cache=False, ssl=client_context(ca_file),
            limit=256, keepalive_timeout=15,
        )  # fmt: skip
        self._session = aiohttp.ClientSession(
            connector=connector, auto_decompress=False, cookie_jar=aiohttp.DummyCookieJar()
        )
        self._headers = dict(request_headers(user_agent))
        self._max_body = max_body

    async def fetch(self, url: str) -> tuple[int, int]:
        async with self._session.get(url, headers=self._headers, allow_redirects=False) as r:
            chunks: list[bytes] = []
            size = 0
            while size < self._max_body:
                chunk = await r.content.read(min(65536, self._max_body - size))
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
            if size >= self._max_body and not r.content.at_eof():
                r.close()
            return r.status, _decoded_size(b"".join(chunks), r.headers.get("Content-Encoding"))

    async def close(self) -> None:
        await self._session.close()


class ProtocolClient:
    """An ``asyncio.Protocol`` per connection, httptools' parser, a keep-alive pool."""

    def __init__(self, ca_file: Path, address: str, user_agent: str, max_body: int) -> None:
        self._tls = client_context(ca_file)
        self._address = address
        self._max_body = max_body
        self._pool = _Pool(keepalive=15.0)
        self._head = "".join(f"{k}: {v}\r\n" for k, v in request_headers(user_agent)) + "\r\n"

    async def fetch(self, url: str) -> tuple[int, int]:
        parts = urlsplit(url)
        host, port = parts.hostname or "", parts.port or (443 if parts.scheme == "https" else 80)
        key = (parts.scheme, host, port)
        conn = self._pool.take(key) or await _open(key, self._address, self._tls)
        target = parts.path or "/"
        if parts.query:
            target += "?" + parts.query
        request = f"GET {target} HTTP/1.1\r\nHost: {parts.netloc}\r\n{self._head}"
        conn.reset(self._max_body)
        await conn.exchange(request.encode("latin-1"))
        self._pool.give(key, conn)
        encoding = first_header(conn.headers, "content-encoding")
        return conn.status or 0, _decoded_size(b"".join(conn.chunks), encoding)

    async def close(self) -> None:
        self._pool.close()


class _Transfer:
    """What a libcurl transfer has received so far."""

    __slots__ = (
        "chunks", "cut", "headers", "ip", "max_body", "reason", "size", "status", "version",
    )  # fmt: skip

    def __init__(self, max_body: int) -> None:
        self.chunks: list[bytes] = []
        self.size = 0
        self.max_body = max_body
        self.cut: str | None = None
        self.headers: list[tuple[str, str]] = []
        self.status: int | None = None
        self.reason = ""
        self.version = "1.1"
        self.ip: str | None = None

    def write(self, data: bytes) -> int | None:
        room = self.max_body - self.size
        if len(data) > room:
            self.chunks.append(data[:room])
            self.size += room
            self.cut = "length"
            return 0  # libcurl aborts the transfer (and closes its connection)
        self.chunks.append(data)
        self.size += len(data)
        return None

    def header(self, line: bytes) -> None:
        text = line.decode("latin-1").rstrip("\r\n")
        if text.startswith("HTTP/"):  # a status line: a new response (after a 1xx)
            version, _, rest = text.partition(" ")
            code, _, self.reason = rest.partition(" ")
            self.version = version[5:] or "1.1"
            self.status = int(code) if code.isdigit() else None
            self.headers = []
            return
        name, sep, value = text.partition(":")
        if sep:
            self.headers.append((name, value.strip()))


class CurlClient:
    """libcurl's multi interface on the event loop (see the module docstring)."""

    def __init__(
        self,
        ca_file: Path,
        address: str,
        user_agent: str,
        max_body: int,
        hosts: list[str],
        connect_timeout: float = 10,
        total_timeout: float = 30,
    ) -> None:
        import pycurl

        from headway.fetch.curl import CurlLoop

        self._pycurl = pycurl
        self._loop = asyncio.get_running_loop()
        self._max_body = max_body
        self._curl = CurlLoop(self._loop, self._finish)
        self._share = pycurl.CurlShare()
        self._share.setopt(pycurl.SH_SHARE, pycurl.LOCK_DATA_SSL_SESSION)
        self._share.setopt(pycurl.SH_SHARE, pycurl.LOCK_DATA_DNS)
        self._pending: dict[Any, tuple[asyncio.Future[_Transfer], _Transfer]] = {}
        self._free: list[Any] = []
        self._headers = [f"{k}: {v}" for k, v in request_headers(user_agent)]
        self._base = [
            (pycurl.CAINFO, str(ca_file)),
            (pycurl.SSL_VERIFYPEER, 1),
            (pycurl.SSL_VERIFYHOST, 2),
            (pycurl.SHARE, self._share),
            (pycurl.NOSIGNAL, 1),
            (pycurl.FOLLOWLOCATION, 0),
            (pycurl.CONNECTTIMEOUT_MS, int(connect_timeout * 1000)),
            (pycurl.TIMEOUT_MS, int(total_timeout * 1000)),
        ]
        if hosts:
            self._base.append((pycurl.RESOLVE, [f"{h}:{address}" for h in hosts]))

    def _handle(self) -> Any:
        if self._free:
            return self._free.pop()
        c = self._pycurl.Curl()
        for option, value in self._base:
            c.setopt(option, value)
        return c

    async def fetch(self, url: str) -> tuple[int, int]:
        transfer = await self.transfer(url, self._max_body, self._headers)
        encoding = first_header(transfer.headers, "content-encoding")
        return transfer.status or 0, _decoded_size(b"".join(transfer.chunks), encoding)

    async def transfer(
        self, url: str, max_body: int, headers: list[str], resolve: list[str] | None = None
    ) -> _Transfer:
        """One GET; raises ``OSError`` (errno and text of libcurl) when it failed
        before a response, else returns what arrived (``cut`` set when cut)."""
        pycurl = self._pycurl
        c = self._handle()
        transfer = _Transfer(max_body)
        c.setopt(pycurl.URL, url)
        c.setopt(pycurl.HTTPHEADER, headers)
        if resolve:
            c.setopt(pycurl.RESOLVE, resolve)
        c.setopt(pycurl.WRITEFUNCTION, transfer.write)
        c.setopt(pycurl.HEADERFUNCTION, transfer.header)
        done: asyncio.Future[_Transfer] = self._loop.create_future()
        self._pending[c] = (done, transfer)
        self._curl.multi.add_handle(c)
        return await done

    def _finish(self, c: Any, error: tuple[int, str] | None) -> None:
        done, transfer = self._pending.pop(c)
        transfer.ip = c.getinfo(self._pycurl.PRIMARY_IP) or None
        self._free.append(c)
        if error is not None and not (error[0] == self._pycurl.E_WRITE_ERROR and transfer.cut):
            if transfer.status is None:
                done.set_exception(OSError(error[0], f"libcurl: {error[1]}"))
                return
            transfer.cut = "time" if error[0] == self._pycurl.E_OPERATION_TIMEDOUT else "disconnect"
        done.set_result(transfer)

    async def close(self) -> None:
        for c in self._free:
            c.close()
        self._curl.close()


# -- the lean path in the crawl (``bench_lean_fetch.py``) ------------------------------------


class _LeanConnection(asyncio.Protocol):
    """One HTTP/1.1 connection of the lean path: a request at a time, llhttp parsing,
    the body kept up to a limit (the rest not read: the connection is then closed)."""

    def __init__(self) -> None:
        import httptools

        self._parser = httptools.HttpResponseParser(self)
        self._parse_errors = (httptools.HttpParserError,)
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.idle_since = 0.0
        self._waiter: asyncio.Future[None] | None = None
        self.reset(0)

    def reset(self, max_body: int) -> None:
        self.max_body = max_body
        self.reason = ""
        self.headers: list[tuple[str, str]] = []
        self.chunks: list[bytes] = []
        self.size = 0
        self.cut: str | None = None
        self.status: int | None = None
        self.reusable = True

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        try:
            self._parser.feed_data(data)
        except self._parse_errors as exc:
            self._done(ValueError(f"invalid HTTP response: {exc}"))

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self._done(exc or ConnectionResetError("connection closed by the server"))

    def on_status(self, reason: bytes) -> None:
        self.reason += reason.decode("latin-1")

    def on_header(self, name: bytes, value: bytes) -> None:
        self.headers.append((name.decode("latin-1"), value.decode("latin-1")))

    def on_headers_complete(self) -> None:
        self.status = self._parser.get_status_code()

    def on_body(self, body: bytes) -> None:
        room = self.max_body - self.size
        if len(body) > room:
            if room:
                self.chunks.append(body[:room])
                self.size += room
            self.cut = "length"
            self.reusable = False
            self._done(None)
            return
        self.chunks.append(body)
        self.size += len(body)

    def on_message_complete(self) -> None:
        if not self._parser.should_keep_alive():
            self.reusable = False
        self._done(None)

    def exchange(self, request: bytes) -> asyncio.Future[None]:
        assert self.transport is not None
        self._waiter = asyncio.get_running_loop().create_future()
        self.transport.write(request)
        return self._waiter

    def http_version(self) -> str:
        return self._parser.get_http_version()

    def close(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.close()

    def _done(self, exc: BaseException | None) -> None:
        waiter, self._waiter = self._waiter, None
        if exc is not None or not self.reusable:
            self.close()
        if waiter is not None and not waiter.done():
            if exc is None:
                waiter.set_result(None)
            else:
                waiter.set_exception(exc)


Key = tuple[str, str, int]  # scheme, host, port


class _Pool:
    """Idle connections per (scheme, host, port), each kept ``keepalive`` seconds."""

    def __init__(self, keepalive: float) -> None:
        self._idle: defaultdict[Key, list[_LeanConnection]] = defaultdict(list)
        self._keepalive = keepalive

    def take(self, key: Key) -> _LeanConnection | None:
        idle, now = self._idle[key], time.monotonic()
        while idle:
            conn = idle.pop()
            if not conn.closed and now - conn.idle_since < self._keepalive:
                return conn
            conn.close()
        return None

    def give(self, key: Key, conn: _LeanConnection) -> None:
        if not conn.closed:
            conn.idle_since = time.monotonic()
            self._idle[key].append(conn)

    def close(self) -> None:
        for idle in self._idle.values():
            for conn in idle:
                conn.close()


async def _open(key: Key, address: str, tls: Any) -> _LeanConnection:
    """A new connection for ``key`` to ``address`` (TLS for https, named the host)."""
    scheme, host, port = key
    _, conn = await asyncio.get_running_loop().create_connection(
        _LeanConnection, address, port,
        ssl=tls if scheme == "https" else None,
        server_hostname=host if scheme == "https" else None,
    )  # fmt: skip
    return conn


def _failed(
    url: str, started_at: float, t0: float, outcome: Any, error: str, request: Any,
    sent_at: float | None = None,
) -> Any:  # fmt: skip
    """The ``FetchResult`` of an exchange that got no response."""
    from headway.fetch.result import FetchResult

    return FetchResult(
        url=url, started_at=started_at, duration=time.monotonic() - t0, outcome=outcome,
        request_headers=request, sent_at=sent_at, error=error,
    )  # fmt: skip


async def _answered(
    fetcher: Any, url: str, started_at: float, t0: float, *, status: int | None, reason: str,
    version: str, headers: list[tuple[str, str]], request: Any, chunks: list[bytes],
    cut: str | None, ip: str | None, sent_at: float | None, max_decoded: int,
    outcome: Any = None, error: str | None = None,
) -> Any:  # fmt: skip
    """The ``FetchResult`` of an exchange that got a response, as the crawler's client
    makes it: the body decoded off the event loop, the outcome from the status."""
    from headway.fetch.client import decode_off_loop
    from headway.fetch.result import FetchResult
    from headway.policy.outcome import Outcome, outcome_for_status

    raw = b"".join(chunks)
    encoding = first_header(headers, "content-encoding")
    body, decoded_cut, decode_error = await decode_off_loop(
        raw, encoding, max_decoded, fetcher._decoder
    )
    if outcome is None:
        has_location = bool(first_header(headers, "location"))
        outcome = outcome_for_status(status or 0, has_location=has_location)
    if decode_error is not None and error is None:
        outcome, error = Outcome.INVALID_RESPONSE, decode_error
    return FetchResult(
        url=url, started_at=started_at, duration=time.monotonic() - t0, outcome=outcome,
        status=status, reason=reason, http_version=version, request_headers=request,
        response_headers=tuple(headers), raw_body=raw, body=body,
        truncated="decoded-length" if decoded_cut else cut, ip=ip, sent_at=sent_at,
        error=error,
    )  # fmt: skip


def install_lean_fetch() -> None:
    """Replace ``Fetcher._exchange`` by the lean path (``lean_exchange``), for an A/B
    crawl through ``benchmarks/fetch_ab/sitecustomize.py`` only."""
    from headway.fetch import client as fc

    fc.Fetcher._exchange = lean_exchange()  # type: ignore[method-assign]


def lean_fetcher_class(curl: bool = False) -> type:
    """``Fetcher`` with the lean path, beside the crawler's own in one process; with
    ``curl``, the crawler's libcurl client (``headway.fetch.curl``, which the libcurl
    prototype that stood here became)."""
    from headway.fetch.client import Fetcher

    if curl:
        from headway.fetch.curl import CurlFetcher

        return CurlFetcher
    return type("LeanFetcher", (Fetcher,), {"_exchange": lean_exchange()})


def lean_exchange() -> Any:
    """``Fetcher._exchange`` on the lean path: connections resolved through the crawler's
    resolver (its address guard included), the crawler's TLS context, the request
    written by hand, the response parsed by llhttp; the total time-out, the body cut and
    the decoding as in the crawler. Not kept: the header size limits, the read time-out,
    the proxy."""
    import aiohttp
    from yarl import URL

    from headway.fetch.outcomes import classify_error
    from headway.policy.outcome import Outcome

    async def exchange(
        self: Any, url: str, max_body: int, max_decoded: int, extra: Any = ()
    ) -> Any:
        started_at = time.time()
        t0 = time.monotonic()
        target = URL(url)
        headers = self._planned_headers(target, extra)
        path = target.raw_path_qs or "/"
        request = f"GET {path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers)
        pool = self.__dict__.setdefault("_lean_pool", _Pool(self._config.keepalive))
        key = (target.scheme, target.raw_host or "", target.port or 0)
        conn: _LeanConnection | None = None
        sent_at = None
        outcome, error = None, None
        try:
            async with asyncio.timeout(self._config.total_timeout):
                conn = pool.take(key)
                if conn is None:
                    (address, *_) = await self._resolver.resolve(key[1], key[2])
                    conn = await _open(key, address["host"], self._tls)
                conn.reset(max_body)
                waiter = conn.exchange((request + "\r\n").encode("latin-1"))
                sent_at = time.time()
                await waiter
        except (OSError, TimeoutError, ValueError, aiohttp.ClientError) as exc:
            outcome, error = classify_error(exc)
            if conn is not None:
                conn.close()
            if conn is None or conn.status is None:
                return _failed(url, started_at, t0, outcome, error, headers, sent_at)
            conn.cut = "time" if outcome is Outcome.TIMEOUT else "disconnect"
        assert conn is not None and conn.status is not None
        pool.give(key, conn)
        peer = conn.transport.get_extra_info("peername") if conn.transport else None
        return await _answered(
            self, url, started_at, t0, status=conn.status, reason=conn.reason,
            version=conn.http_version(), headers=conn.headers, request=headers,
            chunks=conn.chunks, cut=conn.cut, ip=str(peer[0]) if peer else None,
            sent_at=sent_at, max_decoded=max_decoded, outcome=outcome, error=error,
        )  # fmt: skip

    return exchange
