"""The console's web application: the page, its JSON API and its safety rules.

Routes: ``GET /`` (the page), ``GET /static/<file>`` (its CSS and script),
``GET /api/state`` (the crawl, its nodes, history, hosts, seeds, problems and the
latest controls), ``GET /api/hosts?q=&sort=&limit=`` (a host search, at most
``MAX_LIMIT`` rows), ``POST /api/control`` (record a control in the crawl's control log).

Safety (each rule has a test that fails without it):

- The console binds 127.0.0.1 unless told otherwise. Bound to a loopback address it
  answers only requests whose ``Host`` is a loopback name (a web page elsewhere cannot
  reach it through DNS rebinding).
- On any other address controls need the console's token: made when the console starts
  (``make_token``), printed once, stored 0600 in the crawl directory. The page learns it
  from the address's fragment (``#token=...``, never sent to a server); a page opened
  without it is read-only, and the API refuses its controls (403).
- A control is a POST with a JSON body, an ``Origin`` equal to the console's own
  address, and (when needed) the token in ``X-Headway-Token``: anything else is refused
  (403) before the body is read.
- Every answer carries a Content-Security-Policy allowing only the console's own files
  (nothing fetched from elsewhere, no framing); API answers are not cached.
- No store password reaches the page or the API (the sources mask store URLs).
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
import os
import secrets
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import orjson
from aiohttp import web

from headway.console.sources import ControlDesk, Source
from headway.errors import ConfigError, ControlError, HeadwayError
from headway.frontier.storeurl import mask_store_url
from headway.runtime.snapshot import SORTS

log = logging.getLogger(__name__)

#: Most rows a host search returns.
MAX_LIMIT = 500
#: The token file in the crawl directory.
TOKEN_FILE = "console.token"
TOKEN_HEADER = "X-Headway-Token"
#: Largest control request body (an add-seeds of many URLs).
MAX_BODY = 2 * 1024 * 1024
STATIC = {
    "console.css": "text/css",
    "console.js": "text/javascript",
}
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
LOOPBACK_NAMES = frozenset({"localhost", "localhost.", "ip6-localhost"})


def is_loopback(host: str) -> bool:
    """True for a loopback address or name (what needs no token)."""
    name = host.strip("[]").lower()
    if name in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def make_token() -> str:
    """A new console token."""
    return secrets.token_urlsafe(24)


def store_token(token: str, directory: Path) -> Path:
    """Store ``token`` in ``directory`` readable by its owner only (0600)."""
    path = directory / TOKEN_FILE
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, (token + "\n").encode())
    finally:
        os.close(fd)
    return path


@dataclass(frozen=True, slots=True)
class Guard:
    """The safety rules of one console (see the module docstring)."""

    loopback: bool  # bound to a loopback address: Host must be loopback
    token: str | None  # controls need this token (None: no token needed)

    def check_host(self, request: web.Request) -> str | None:
        if not self.loopback:
            return None
        name = request.url.host or ""
        return None if is_loopback(name) else f"unexpected Host {name!r}"

    def check_control(self, request: web.Request) -> str | None:
        """Why a control request is refused (None: allowed)."""
        origin = request.headers.get("Origin")
        own = f"{request.scheme}://{request.host}"
        if origin is None or origin.rstrip("/") != own:
            return "control refused: the request does not come from this console's page"
        site = request.headers.get("Sec-Fetch-Site")
        if site is not None and site != "same-origin":
            return "control refused: the request does not come from this console's page"
        if self.token is not None:
            given = request.headers.get(TOKEN_HEADER, "")
            if not hmac.compare_digest(given.encode(), self.token.encode()):
                return (
                    "control refused: this console needs its token (open the address "
                    "printed when it started, with #token=...)"
                )
        # the media type exactly (aiohttp leaves parameters out): ``application/jsonp``
        # or ``application/json-seq`` is not it
        if request.content_type != "application/json":
            return "control refused: the body must be JSON"
        return None


def _json(data: Any, status: int = 200) -> web.Response:
    return web.Response(
        body=orjson.dumps(data),
        status=status,
        content_type="application/json",
        headers={"Cache-Control": "no-store"},
    )


def _asset(name: str) -> bytes:
    return resources.files("headway.console").joinpath("static", name).read_bytes()


def make_app(source: Source, desk: ControlDesk, guard: Guard) -> web.Application:
    """The console's application over ``source`` with controls through ``desk``."""
    page = _asset("index.html")
    assets = {name: _asset(name) for name in STATIC}

    @web.middleware
    async def safety(
        request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        why = guard.check_host(request)
        if why is not None:
            response: web.StreamResponse = _json({"error": why}, 403)
        else:
            try:
                response = await handler(request)
            except web.HTTPException as exc:
                response = _json({"error": exc.reason}, exc.status)
        response.headers["Content-Security-Policy"] = CSP
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["X-Frame-Options"] = "DENY"
        response.headers["Referrer-Policy"] = "no-referrer"
        return response

    async def index(request: web.Request) -> web.Response:
        return web.Response(body=page, content_type="text/html", charset="utf-8")

    async def static(request: web.Request) -> web.Response:
        name = request.match_info["name"]
        if name not in assets:
            raise web.HTTPNotFound(reason="no such file")
        return web.Response(body=assets[name], content_type=STATIC[name], charset="utf-8")

    async def state(request: web.Request) -> web.Response:
        view = await source.state()
        view["controls"] = {
            "enabled": desk.enabled,
            "token_required": guard.token is not None,
            "recent": await desk.recent(),
        }
        return _json(view)

    async def hosts(request: web.Request) -> web.Response:
        q = request.query.get("q", "")[:200]
        sort = request.query.get("sort", "pages")
        if sort not in SORTS:
            return _json({"error": f"sort must be one of {', '.join(SORTS)}"}, 400)
        try:
            limit = int(request.query.get("limit", "50"))
        except ValueError:
            return _json({"error": "limit must be a whole number"}, 400)
        limit = max(1, min(MAX_LIMIT, limit))
        rows = await source.hosts(q, sort, limit)
        return _json({"q": q, "sort": sort, "limit": limit, "hosts": rows})

    async def control(request: web.Request) -> web.Response:
        why = guard.check_control(request)
        if why is not None:
            log.warning("%s (from %s)", why, request.remote)
            return _json({"error": why}, 403)
        if not desk.enabled:
            return _json({"error": "this console cannot record controls"}, 409)
        try:
            body = orjson.loads(await request.read())
        except orjson.JSONDecodeError:
            return _json({"error": "the body is not JSON"}, 400)
        if not isinstance(body, dict):
            return _json({"error": "the body must be a JSON object"}, 400)
        kind = str(body.get("kind", ""))
        args = body.get("args") or {}
        node = body.get("node") or None
        if not isinstance(args, dict) or not (node is None or isinstance(node, str)):
            return _json({"error": "args must be an object and node a string"}, 400)
        try:
            recorded = await desk.append(kind, args, node, f"console {request.remote}")
        except ControlError as exc:
            return _json({"error": str(exc)}, 400)
        except HeadwayError as exc:
            return _json({"error": mask_store_url(str(exc))}, 503)
        log.info("control recorded from the console: %s", recorded.to_json())
        return _json({"ok": True, "control": recorded.to_json()})

    app = web.Application(middlewares=[safety], client_max_size=MAX_BODY)
    app.router.add_get("/", index)
    app.router.add_get("/static/{name}", static)
    app.router.add_get("/api/state", state)
    app.router.add_get("/api/hosts", hosts)
    app.router.add_post("/api/control", control)
    return app


#: Addresses that mean "every interface" to a listening socket.
WILDCARD_HOSTS = frozenset({"0.0.0.0", "::", ""})


class ConsoleServer:
    """A console listening on ``host:port`` (``start``/``stop``)."""

    def __init__(
        self,
        source: Source,
        desk: ControlDesk,
        *,
        host: str = "127.0.0.1",
        port: int = 8787,
        token_dir: Path | None = None,
        port_name: str = "console.console_port",
    ) -> None:
        self.port_name = port_name
        self.host = host
        self.port = port
        loopback = is_loopback(host)
        self.token = None if loopback else make_token()
        self.token_file = token_dir / TOKEN_FILE if token_dir and self.token else None
        self.app = make_app(source, desk, Guard(loopback, self.token))
        self._runner: web.AppRunner | None = None

    def store_token(self) -> None:
        """Write the token into the crawl directory (once that directory exists)."""
        if self.token is not None and self.token_file is not None:
            try:
                store_token(self.token, self.token_file.parent)
            except OSError as exc:
                log.warning("the console token could not be stored: %s", exc.strerror or exc)

    @property
    def url(self) -> str:
        """The address to open in a browser. A console listening on every interface
        (``0.0.0.0``, ``::``) is reached by this machine's name: the wildcard address
        itself is nothing a browser can open."""
        host = socket.gethostname() if self.host in WILDCARD_HOSTS else self.host
        shown = f"[{host}]" if ":" in host else host
        return f"http://{shown}:{self.port}/"

    async def start(self) -> None:
        """Listen; ``ConfigError`` (one line) when the address cannot be used."""
        runner = web.AppRunner(self.app, access_log=None, handle_signals=False)
        await runner.setup()
        site = web.TCPSite(runner, self.host, self.port)
        try:
            await site.start()
        except OSError as exc:
            await runner.cleanup()
            raise ConfigError(
                self.port_name,
                f"cannot listen on {self.host}:{self.port}: {exc.strerror or exc}",
            ) from None
        if self.port == 0 and runner.addresses:
            self.port = int(runner.addresses[0][1])
        self._runner = runner

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
