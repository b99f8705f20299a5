"""The simulated web: one aiohttp server on loopback serving many virtual hosts.

Contract:
- Host ``i`` is ``site{i}.{suffix}``, chosen by the request's Host header (the port in it
  is ignored); a crawler reaches it by resolving ``*.{suffix}`` to the listening address,
  so its URLs carry the server's port: ``http://site3.sim:PORT/p/7``.
- Every answer is a deterministic function of the ``SimWebSpec`` and the port (see
  ``graph`` for the link graph and ``features`` for the bodies); only the fault controls
  (``set_pushback``, ``set_delay``, ``set_timeout``) and the first answer of ``/flaky``
  depend on what happened before.
- ``log`` records every request (robots.txt, failures and unknown hosts included) when
  its answer is ready; a request hung by ``set_timeout`` is logged when it starts
  hanging, with status 0 (no answer). ``path`` is the raw path with its query string.
  ``late`` is how long after its bytes reached the server's socket the handler started
  (kernel receive time, see ``stamp``), so that checks can use ``arrival``: when the
  request reached the site, whatever delayed this server.
  The log keeps the newest ``log_limit`` entries (``log_dropped`` counts the rest).
- A host with ``HostSpec.validators`` serves ETag/Last-Modified, pages that change over
  time by the server's ``clock`` and 304 answers to matching validators (see
  ``freshness``); the log records the validators each request sent.
- ``stop()`` returns promptly: every delayed or hung request is woken and answered.
- With an ``ssl_context`` it serves HTTPS (URLs are then ``https://``); ``connections``
  counts the connections accepted (over TLS: one handshake each) and
  ``resumed_handshakes`` those whose TLS handshake resumed an earlier session, so tests
  can check that a crawler keeps connections alive instead of opening one per request,
  and resumes sessions when a connection had to be opened again; ``full_handshakes``
  the others. With ``idle_timeout`` the server closes a connection idle that long (as
  real servers do after 5-75 s; aiohttp's default is an hour), so a crawler that comes
  back later opens a new one.
- A request whose Host is ``STATS_HOST`` answers the counters as JSON (for a benchmark
  that runs the server in another process); it is not logged.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import ssl
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from types import TracebackType
from urllib.parse import urlsplit

from aiohttp import web

from headway.testing.features import Renderer, Reply
from headway.testing.freshness import conditional, with_validators
from headway.testing.graph import Feature, HostSpec, SimWebSpec, expected_urls
from headway.testing.stamp import StampedListener, late_by, stamped_listener

__all__ = ["HostSpec", "LoggedRequest", "SimWeb", "SimWebSpec", "serve"]

logger = logging.getLogger(__name__)

HANG_SECONDS = 60.0
#: Host name whose requests answer the server's counters (JSON) instead of a page.
STATS_HOST = "stats.simweb.invalid"


class _CountingServer(web.Server):
    """aiohttp's low-level server, counting the connections it accepts (and, over TLS,
    those whose handshake resumed a session)."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.accepted = 0
        self.resumed = 0
        self.full = 0

    def connection_made(self, handler: object, transport: asyncio.Transport) -> None:
        self.accepted += 1
        tls = transport.get_extra_info("ssl_object")  # the handshake is over by now
        if tls is not None and tls.session_reused:
            self.resumed += 1
        elif tls is not None:
            self.full += 1
        super().connection_made(handler, transport)  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class LoggedRequest:
    """One request as the server saw it (times from this process's clocks)."""

    start: float  # time.monotonic() when the handler started
    end: float  # time.monotonic() when the answer was ready
    wall: float  # time.time() at start
    host: str  # host name without port, lower case
    path: str  # raw path including the query string
    status: int  # 0: hung, never answered
    user_agent: str
    if_none_match: str | None = None  # validators the request sent
    if_modified_since: str | None = None
    #: seconds the handler started after the request's bytes reached the socket (None:
    #: not measured on this platform)
    late: float | None = None

    @property
    def arrival(self) -> float:
        """When the request reached the server's socket (``time.monotonic()``): ``start``
        less the measured lateness (``start`` when unmeasured)."""
        return self.start - (self.late or 0.0)


@dataclass(frozen=True, slots=True)
class _Pushback:
    status: int
    retry_after: float | None


def _accepts_gzip(header: str) -> bool:
    for item in header.split(","):
        coding, _, params = item.strip().partition(";")
        if coding.strip().lower() not in ("gzip", "x-gzip", "*"):
            continue
        q = params.strip().lower()
        if q.startswith("q="):
            try:
                return float(q[2:]) > 0
            except ValueError:
                return False
        return True
    return False


class SimWeb:
    """Many virtual hosts on one loopback server, with faults and a request log."""

    def __init__(
        self,
        spec: SimWebSpec,
        *,
        log_limit: int = 1_000_000,
        clock: Callable[[], float] = time.time,
        idle_timeout: float | None = None,
    ) -> None:
        if idle_timeout is not None and not idle_timeout > 0:
            raise ValueError(f"idle_timeout must be > 0 seconds; got {idle_timeout}")
        self.spec = spec
        self.idle_timeout = idle_timeout  # None: aiohttp's default keep-alive
        self.clock = clock  # the time content versions are taken at
        self.hosts: list[str] = [spec.host_name(i) for i in range(spec.hosts)]
        self.log: list[LoggedRequest] = []
        self.log_dropped = 0
        self._log_limit = log_limit
        self._index = {name: i for i, name in enumerate(self.hosts)}
        self._port: int | None = None
        self._runner: web.ServerRunner | None = None
        self._renderer: Renderer | None = None
        self._stopping = asyncio.Event()
        self._pushback: dict[int, _Pushback] = {}
        self._delay: dict[int, float] = {}
        self._hang: dict[int, bool] = {}  # host -> robots.txt hangs too
        self._flaky_done: set[int] = set()
        self._server: _CountingServer | None = None
        self._listener: StampedListener | None = None
        self._scheme = "http"
        self.requests = 0

    @property
    def connections(self) -> int:
        """Connections accepted so far (TLS: one handshake each)."""
        return self._server.accepted if self._server is not None else 0

    @property
    def resumed_handshakes(self) -> int:
        """TLS connections accepted so far whose handshake resumed a session (an
        abbreviated handshake); the others were full handshakes."""
        return self._server.resumed if self._server is not None else 0

    @property
    def full_handshakes(self) -> int:
        """TLS connections accepted so far whose handshake was a full one."""
        return self._server.full if self._server is not None else 0

    # -- lifecycle -------------------------------------------------------------------

    async def start(
        self, host: str = "127.0.0.1", port: int = 0, *, ssl_context: ssl.SSLContext | None = None
    ) -> None:
        """Listen on ``host:port`` (port 0 picks a free one; see ``port``); over TLS when
        ``ssl_context`` is given."""
        if self._runner is not None:
            raise RuntimeError("SimWeb already started")
        self._stopping = asyncio.Event()
        self._scheme = "https" if ssl_context is not None else "http"
        extra = {} if self.idle_timeout is None else {"keepalive_timeout": self.idle_timeout}
        server = _CountingServer(self._handle, access_log=None, **extra)
        self._server = server
        runner = web.ServerRunner(server, handle_signals=False, shutdown_timeout=2.0)
        await runner.setup()
        try:
            listener = stamped_listener(host, port)
        except BaseException:
            await runner.cleanup()
            raise
        site = web.SockSite(runner, listener, ssl_context=ssl_context)
        try:
            await site.start()
        except BaseException:
            listener.close()
            await runner.cleanup()
            raise
        self._listener = listener
        self._runner = runner
        self._port = int(runner.addresses[0][1])
        self._renderer = Renderer(self.spec, [self.url(h, "") for h in self.hosts])

    async def stop(self) -> None:
        """Wake every waiting request, answer it, and close the server."""
        self._stopping.set()
        runner, self._runner = self._runner, None
        if runner is not None:
            await runner.cleanup()

    async def __aenter__(self) -> SimWeb:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    # -- addresses ---------------------------------------------------------------------

    @property
    def port(self) -> int:
        if self._port is None:
            raise RuntimeError("SimWeb not started")
        return self._port

    def url(self, host: str, path: str = "/") -> str:
        """``http://host:PORT/path`` (``https`` over TLS; the port left out when it is
        the scheme's default, as canonical URLs do)."""
        default = 443 if self._scheme == "https" else 80
        port = "" if self.port == default else f":{self.port}"
        return f"{self._scheme}://{host}{port}{path}"

    def seeds(self) -> list[str]:
        """The home page URL of every host."""
        return [self.url(h) for h in self.hosts]

    def expected_pages(
        self,
        user_agent_token: str = "*",
        *,
        seeds: Iterable[str] | None = None,
        in_scope: Callable[[str], bool] | None = None,
    ) -> set[str]:
        """Canonical URLs a correct crawler starting from ``seeds`` (default: every
        home page) fetches with 200 text/html: pages reachable by followed links and
        redirects, minus robots-disallowed ones, traps, errors, non-HTML, redirect hops
        and nofollow-only pages; ``in_scope(url)`` restricts where the crawler may go.
        Duplicate-content pages are included. ``/flaky`` counts (after its retry)."""
        starts: list[tuple[int, str]] = []
        for seed in self.seeds() if seeds is None else seeds:
            parts = urlsplit(seed)
            index = self._index.get((parts.hostname or "").lower())
            if index is not None:
                starts.append((index, parts.path or "/"))
        return expected_urls(
            self.spec, lambda h, p: self.url(self.hosts[h], p), starts, user_agent_token, in_scope
        )

    def fetched(self, path_prefix: str = "", *, robots: bool = False) -> list[LoggedRequest]:
        """Logged requests whose path starts with ``path_prefix``; robots.txt requests
        only when ``robots`` is true."""
        return [
            r
            for r in self.log
            if r.path.startswith(path_prefix)
            and (robots or r.path.partition("?")[0] != "/robots.txt")
        ]

    # -- fault controls (usable while running) -----------------------------------------

    def _host(self, host: str) -> int:
        name = host.lower().rpartition(":")[0] if ":" in host else host.lower()
        if name not in self._index:
            raise KeyError(f"not a simulated host: {host!r}")
        return self._index[name]

    def set_pushback(
        self, host: str, *, status: int = 429, retry_after: float | None = None
    ) -> None:
        """From now on every non-robots request to ``host`` answers ``status`` (with
        ``Retry-After`` in seconds, formatted ``%g``, when given)."""
        self._pushback[self._host(host)] = _Pushback(status, retry_after)

    def clear_pushback(self, host: str) -> None:
        self._pushback.pop(self._host(host), None)

    def set_delay(self, host: str, seconds: float) -> None:
        """Wait ``seconds`` before answering each request to ``host`` (replaces
        ``HostSpec.delay``)."""
        self._delay[self._host(host)] = seconds

    def set_timeout(self, host: str, hang: bool, *, robots: bool = False) -> None:
        """While ``hang``, requests to ``host`` (robots.txt only when ``robots``) get no
        answer for 60 s, or until ``stop()``."""
        if hang:
            self._hang[self._host(host)] = robots
        else:
            self._hang.pop(self._host(host), None)

    # -- serving ---------------------------------------------------------------------

    async def _sleep(self, seconds: float) -> None:
        if seconds <= 0 or self._stopping.is_set():
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stopping.wait(), seconds)

    def _record(self, entry: LoggedRequest) -> None:
        if self._log_limit <= 0:
            self.log_dropped += 1
            return
        self.log.append(entry)
        excess = len(self.log) - self._log_limit
        if excess > max(1000, self._log_limit // 10):
            del self.log[:excess]
            self.log_dropped += excess

    async def _handle(self, request: web.BaseRequest) -> web.StreamResponse:
        start, wall = time.monotonic(), time.time()
        late = late_by(self._listener, request.transport, wall)
        name = request.headers.get("Host", "").lower()
        name = name.rpartition(":")[0] if ":" in name else name
        if name == STATS_HOST:
            stats = {
                "connections": self.connections,
                "resumed": self.resumed_handshakes,
                "full": self.full_handshakes,
                "requests": self.requests,
            }
            return web.Response(body=json.dumps(stats).encode(), content_type="application/json")
        self.requests += 1
        raw_path = request.raw_path
        agent = request.headers.get("User-Agent", "")
        index = self._index.get(name)
        if index is None or self._renderer is None:
            reply = Reply(404, "text/plain", b"unknown host\n")
        else:
            reply, logged = await self._answer(index, request, start, wall, agent, late)
            if logged:
                return self._response(reply)
        response = self._response(reply)
        self._record(
            LoggedRequest(
                start,
                time.monotonic(),
                wall,
                name,
                raw_path,
                reply.status,
                agent,
                request.headers.get("If-None-Match"),
                request.headers.get("If-Modified-Since"),
                late,
            )
        )
        return response

    @staticmethod
    def _response(reply: Reply) -> web.Response:
        response = web.Response(status=reply.status, body=reply.body)
        response.headers["Content-Type"] = reply.content_type
        for key, value in reply.headers:
            response.headers[key] = value
        return response

    async def _answer(
        self,
        index: int,
        request: web.BaseRequest,
        start: float,
        wall: float,
        agent: str,
        late: float | None,
    ) -> tuple[Reply, bool]:
        """The reply, and whether the request is already logged (it hung)."""
        assert self._renderer is not None
        path = request.path
        is_robots = path == "/robots.txt"
        if index in self._hang and (self._hang[index] or not is_robots):
            name = self.hosts[index]
            self._record(
                LoggedRequest(start, start, wall, name, request.raw_path, 0, agent, late=late)
            )
            await self._sleep(HANG_SECONDS)
            return Reply(503, "text/plain", b"gave up waiting\n"), True
        await self._sleep(self._delay.get(index, self.spec.spec_for(index).delay))
        pushback = None if is_robots else self._pushback.get(index)
        if pushback is not None:
            headers: tuple[tuple[str, str], ...] = ()
            if pushback.retry_after is not None:
                headers = (("Retry-After", f"{pushback.retry_after:g}"),)
            return Reply(pushback.status, "text/plain", b"slow down\n", headers), False
        spec = self.spec.spec_for(index)
        flaky = path == "/flaky" and Feature.RETRY_AFTER in spec.features
        if flaky and index not in self._flaky_done:
            self._flaky_done.add(index)
            return Reply(503, "text/plain", b"try again\n", (("Retry-After", "1"),)), False
        gzipped = _accepts_gzip(request.headers.get("Accept-Encoding", ""))
        reply = self._renderer.respond(index, path, gzipped=gzipped)
        if spec.validators:
            reply = with_validators(reply, spec, path, self.clock())
            inm = request.headers.get("If-None-Match")
            reply = conditional(reply, inm, request.headers.get("If-Modified-Since"))
        return reply, False


async def serve(
    spec: SimWebSpec,
    host: str,
    port: int,
    ssl_context: ssl.SSLContext | None = None,
    idle_timeout: float | None = None,
) -> None:
    """Serve ``spec`` on ``host:port`` until cancelled (the log is not kept)."""
    simweb = SimWeb(spec, log_limit=0, idle_timeout=idle_timeout)
    await simweb.start(host, port, ssl_context=ssl_context)
    logger.info(
        "simulated web: %d hosts on %s:%d; crawl with --resolve '*.%s=%s' --allow-loopback "
        "and seeds like %s",
        spec.hosts,
        host,
        simweb.port,
        spec.suffix,
        host,
        simweb.seeds()[0] if simweb.hosts else "-",
    )
    try:
        await asyncio.Event().wait()
    finally:
        await simweb.stop()
