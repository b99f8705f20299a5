"""The hostile web: one aiohttp server on loopback whose virtual hosts each serve one attack.

Contract:
- Every host is ``NAME.hostile``; a crawler reaches them with the overrides of
  ``resolve_rules()`` (``*.hostile`` to the listening address, and the ``blocked*`` hosts
  to addresses the address guard must refuse, so they are never reached).
- Hosts, by name (``PORT`` is the server's port):
  - ``control{i}``: a plain site of ``control_pages`` pages (``/`` links to ``/p/1`` ..
    ``/p/{n-1}``, each of which links back); robots.txt is 404.
  - ``costly{i}``: ``/`` is a ``costly_gzip``-byte gzip body that decodes to
    ``costly_decoded`` bytes of ``<a href>`` links (all to one off-site URL). With
    ``costly_fanout`` n, every page first links to n pages of its own host (page ``k``,
    ``/`` being 0, to ``/c/{k*n+1}`` .. ``/c/{k*n+n}``), each as costly: the host never
    runs out of costly pages.
  - ``creds``: links and a page redirect carrying ``user:secret@``, and a robots.txt that
    redirects to a URL with credentials; the server notes every request that carries an
    ``Authorization`` header or the secret anywhere in its headers (``credential_leaks``).
  - ``robotsloop``: robots.txt redirects to itself, for ever.
  - ``robotschain``: robots.txt redirects through ``/r/1`` .. ``/r/10`` to a real file.
  - ``reset``: a site of a few pages whose server closes a reused keep-alive connection
    under its second request, without answering (the client must not silently resend).
  - ``blocked4`` and ``blocked6``: seeds whose names resolve to ``169.254.169.254`` and to
    its 6to4 form ``2002:a9fe:a9fe::1``.
- ``log`` records every request that reached a handler (host without port, raw path,
  start and end on ``time.monotonic()``, and how late the handler started after the
  request reached the socket, see ``headway.testing.stamp``), in arrival order.
"""

from __future__ import annotations

import asyncio
import gzip
import time
from dataclasses import dataclass, field

from aiohttp import web

from headway.testing.stamp import StampedListener, late_by, stamped_listener

__all__ = ["SECRET", "HostileRequest", "HostileSpec", "HostileWeb"]

SUFFIX = "hostile"
SECRET = "s3cr3t-pw"
_HTML = "text/html; charset=utf-8"


@dataclass(frozen=True, slots=True)
class HostileSpec:
    control_hosts: int = 2
    control_pages: int = 21
    costly_hosts: int = 0
    costly_decoded: int = 8_000_000
    costly_fanout: int = 0  # links of each costly page to more costly pages of its host
    attacks: bool = True  # creds, robotsloop, robotschain, reset, blocked4, blocked6


@dataclass(frozen=True, slots=True)
class HostileRequest:
    start: float  # time.monotonic() when the handler started
    end: float  # time.monotonic() when the answer was ready
    host: str
    path: str
    #: seconds the handler started after the request reached the socket (None: unknown)
    late: float | None = None

    @property
    def arrival(self) -> float:
        """When the request reached the server's socket (``time.monotonic()``)."""
        return self.start - (self.late or 0.0)


@dataclass(slots=True)
class _State:
    log: list[HostileRequest] = field(default_factory=list)
    credential_leaks: list[str] = field(default_factory=list)
    served: set[object] = field(default_factory=set)  # connections that answered before


def costly_body(decoded: int) -> bytes:
    """About 20 KB of gzip that decodes to ``decoded`` bytes of links."""
    unit = b'<a href="http://o1.offsite.invalid/p/1">l</a>\n'
    head = b"<!doctype html><html><head><title>costly</title></head><body>\n"
    body = (head + unit * (decoded // len(unit) + 1))[:decoded]
    return gzip.compress(body, 9)


class HostileWeb:
    """Attack hosts on one loopback server, with a request log."""

    def __init__(self, spec: HostileSpec) -> None:
        self.spec = spec
        self.state = _State()
        self._runner: web.ServerRunner | None = None
        self._port: int | None = None
        self._listener: StampedListener | None = None
        self._costly = costly_body(spec.costly_decoded) if spec.costly_hosts else b""

    @property
    def log(self) -> list[HostileRequest]:
        return self.state.log

    @property
    def credential_leaks(self) -> list[str]:
        return self.state.credential_leaks

    @property
    def port(self) -> int:
        if self._port is None:
            raise RuntimeError("HostileWeb not started")
        return self._port

    def url(self, host: str, path: str = "/") -> str:
        return f"http://{host}.{SUFFIX}:{self.port}{path}"

    def control_hosts(self) -> list[str]:
        return [f"control{i}" for i in range(self.spec.control_hosts)]

    def costly_hosts(self) -> list[str]:
        return [f"costly{i}" for i in range(self.spec.costly_hosts)]

    def attack_hosts(self) -> list[str]:
        if not self.spec.attacks:
            return []
        return ["creds", "robotsloop", "robotschain", "reset", "blocked4", "blocked6"]

    def seeds(self) -> list[str]:
        names = self.control_hosts() + self.costly_hosts() + self.attack_hosts()
        return [self.url(name) for name in names]

    @staticmethod
    def resolve_rules() -> list[str]:
        return [
            f"*.{SUFFIX}=127.0.0.1",
            f"blocked4.{SUFFIX}=169.254.169.254",
            f"blocked6.{SUFFIX}=2002:a9fe:a9fe::1",
        ]

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> None:
        server = web.Server(self._handle, access_log=None)
        runner = web.ServerRunner(server, handle_signals=False, shutdown_timeout=1.0)
        await runner.setup()
        listener = stamped_listener(host, port)
        self._listener = listener
        site = web.SockSite(runner, listener)
        await site.start()
        self._runner = runner
        self._port = int(runner.addresses[0][1])

    async def stop(self) -> None:
        runner, self._runner = self._runner, None
        if runner is not None:
            await runner.cleanup()

    # -- answers ---------------------------------------------------------------------

    async def _handle(self, request: web.BaseRequest) -> web.StreamResponse:
        start = time.monotonic()
        late = late_by(self._listener, request.transport, time.time())
        host = request.headers.get("Host", "").split(":", 1)[0].lower()
        name = host.removesuffix(f".{SUFFIX}")
        for key, value in request.headers.items():
            if key.lower() == "authorization" or SECRET in value:
                self.state.credential_leaks.append(f"{host} {request.path_qs} {key}")
        try:
            return await self._answer(request, name)
        finally:
            entry = HostileRequest(start, time.monotonic(), host, request.path_qs, late)
            self.state.log.append(entry)
            self.state.served.add(request.protocol)

    async def _answer(self, request: web.BaseRequest, name: str) -> web.StreamResponse:
        path = request.path
        if name.startswith("control"):
            return self._control(path)
        if name.startswith("costly"):
            return self._costly_page(path)
        if name == "creds":
            return self._creds(path)
        if name == "robotsloop":
            if path == "/robots.txt":
                return web.Response(status=301, headers={"Location": "/robots.txt"})
            return _page("loop home", [])
        if name == "robotschain":
            return self._chain(path)
        if name == "reset":
            if request.protocol in self.state.served:
                assert request.transport is not None
                request.transport.abort()  # a keep-alive connection closed under a request
                await asyncio.sleep(0)
            return self._control(path, pages=4)
        return web.Response(status=404, text="unknown host")

    def _control(self, path: str, pages: int | None = None) -> web.Response:
        n = self.spec.control_pages if pages is None else pages
        if path == "/":
            return _page("home", [f"/p/{k}" for k in range(1, n)])
        if path.startswith("/p/") and path[3:].isdigit() and 0 < int(path[3:]) < n:
            return _page(f"page {path[3:]}", ["/"])
        return web.Response(status=404, text="not found")

    def _costly_page(self, path: str) -> web.Response:
        fanout = self.spec.costly_fanout
        k = 0 if path == "/" else _number(path.removeprefix("/c/")) if fanout else None
        if k is None:
            return web.Response(status=404, text="no")
        body = self._costly
        if fanout:  # a gzip member of its own links, before the shared bulk
            links = "".join(f'<a href="/c/{k * fanout + j}">c</a>\n' for j in range(1, fanout + 1))
            body = gzip.compress(links.encode(), 1) + body
        return web.Response(body=body, headers={"Content-Type": _HTML, "Content-Encoding": "gzip"})

    def _creds(self, path: str) -> web.Response:
        own = f"creds.{SUFFIX}:{self.port}"
        if path == "/robots.txt":
            target = f"http://robot:{SECRET}@{own}/robots-real.txt"
            return web.Response(status=302, headers={"Location": target})
        if path == "/robots-real.txt":
            return web.Response(text="User-agent: *\nDisallow: /nothing\n")
        if path == "/":
            links = [
                f"http://user:{SECRET}@{own}/private",
                f"//other:{SECRET}@{own}/other",
                "/redir",
            ]
            return _page("creds", links)
        if path == "/redir":
            return web.Response(
                status=302, headers={"Location": f"http://user:{SECRET}@{own}/after"}
            )
        if path in ("/private", "/other", "/after"):
            return _page(path, [])
        return web.Response(status=404, text="not found")

    def _chain(self, path: str) -> web.Response:
        if path == "/robots.txt":
            return web.Response(status=302, headers={"Location": "/r/1"})
        if path.startswith("/r/") and path[3:].isdigit():
            k = int(path[3:])
            if k < 10:
                return web.Response(status=302, headers={"Location": f"/r/{k + 1}"})
            return web.Response(text="User-agent: *\nDisallow:\n")
        return _page("chain home", [])


def _number(text: str) -> int | None:
    return int(text) if text.isdigit() and len(text) < 16 else None


def _page(title: str, links: list[str]) -> web.Response:
    anchors = "".join(f'<a href="{u}">{u}</a>\n' for u in links)
    html = f"<!doctype html><html><head><title>{title}</title></head><body>{anchors}</body></html>"
    return web.Response(text=html, content_type="text/html")
