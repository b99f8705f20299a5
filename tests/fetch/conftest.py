"""A small aiohttp server on 127.0.0.1 for the fetch tests, and a Fetcher pointed at it
through a made-up host name (``site-a.test``) by a resolve override. Every test of this
package runs once with each HTTP client (``http_client``: aiohttp, and libcurl where
pycurl is installed); ``make_config`` names the client of the running test."""

from __future__ import annotations

import asyncio
import functools
import gzip
import json
import zlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import brotlicffi
import pytest
from aiohttp import web

from headway.fetch.client import FetchConfig, Fetcher
from headway.fetch.clients import open_fetcher
from tests.support.httpclients import CLIENT, http_client

__all__ = ["http_client"]  # every test of the package runs with each client

HTML = b"<!doctype html><html><head><title>A</title></head><body>" + b"<p>hello</p>" * 200
BIG = 2 * 1024 * 1024
BOMB_SIZE = 32 * 1024 * 1024
USER_AGENT = "headway-test/0.1 (+https://example.test/bot)"


@dataclass
class Server:
    port: int
    log: list[str] = field(default_factory=list)
    peer_ports: list[int] = field(default_factory=list)

    def url(self, path: str, host: str = "site-a.test") -> str:
        return f"http://{host}:{self.port}{path}"


def _raw_deflate(data: bytes) -> bytes:
    c = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    return c.compress(data) + c.flush()


@functools.cache
def gzip_bomb() -> bytes:
    return gzip.compress(b"\0" * BOMB_SIZE, 9)


def _app(log: list[str], peer_ports: list[int]) -> web.Application:
    bomb = gzip_bomb()

    served: set[object] = set()  # connections (server protocols) that answered before

    @web.middleware
    async def record(request: web.Request, handler):  # type: ignore[no-untyped-def]
        log.append(request.path_qs)
        assert request.transport is not None
        peer_ports.append(request.transport.get_extra_info("peername")[1])
        try:
            return await handler(request)
        finally:
            served.add(request.protocol)

    async def drop_reused(request: web.Request) -> web.Response:
        # a keep-alive connection the server closes under a second request
        if request.protocol in served:
            assert request.transport is not None
            request.transport.abort()
        return web.Response(text="fresh connection")

    async def huge_header(request: web.Request) -> web.Response:
        return web.Response(text="x", headers={"X-Huge": "a" * 9000})

    async def many_headers(request: web.Request) -> web.Response:
        return web.Response(text="x", headers={f"X-H{i}": "v" for i in range(200)})

    async def redirect_with_credentials(request: web.Request) -> web.Response:
        host = request.headers["Host"]
        return web.Response(
            status=302, headers={"Location": f"http://user:secret@{host}/echo#frag"}
        )

    async def page(request: web.Request) -> web.Response:
        return web.Response(body=HTML, content_type="text/html")

    def encoded(body: bytes, coding: str) -> web.Response:
        return web.Response(
            body=body, headers={"Content-Encoding": coding, "Content-Type": "text/html"}
        )

    async def gz(request: web.Request) -> web.Response:
        return encoded(gzip.compress(HTML), "gzip")

    async def deflate(request: web.Request) -> web.Response:
        return encoded(zlib.compress(HTML), "deflate")

    async def raw_deflate(request: web.Request) -> web.Response:
        return encoded(_raw_deflate(HTML), "deflate")

    async def br(request: web.Request) -> web.Response:
        return encoded(brotlicffi.compress(HTML), "br")

    async def bad_gzip(request: web.Request) -> web.Response:
        return encoded(b"this is not gzip at all", "gzip")

    async def bomb_handler(request: web.Request) -> web.Response:
        return encoded(bomb, "gzip")

    async def big(request: web.Request) -> web.Response:
        return web.Response(body=b"x" * BIG, content_type="text/html")

    async def big_chunked(request: web.Request) -> web.StreamResponse:
        resp = web.StreamResponse(headers={"Content-Type": "text/html"})
        resp.enable_chunked_encoding()
        await resp.prepare(request)
        for _ in range(BIG // 65536):
            await resp.write(b"y" * 65536)
        await resp.write_eof()
        return resp

    async def redirect(request: web.Request) -> web.Response:
        return web.Response(status=302, headers={"Location": "/page?from=redirect"})

    async def chain(request: web.Request) -> web.Response:
        n = int(request.match_info["n"])
        if n == 0:
            return web.Response(text="User-agent: *\nDisallow: /private\n")
        return web.Response(status=301, headers={"Location": f"/chain/{n - 1}/robots.txt"})

    async def sleep(request: web.Request) -> web.Response:
        await asyncio.sleep(3)
        return web.Response(text="late")

    async def slow_body(request: web.Request) -> web.StreamResponse:
        resp = web.StreamResponse(headers={"Content-Type": "text/html"})
        await resp.prepare(request)
        await resp.write(b"<html>first part")
        await asyncio.sleep(3)
        return resp

    async def echo(request: web.Request) -> web.Response:
        return web.json_response(dict(request.headers))

    async def status(request: web.Request) -> web.Response:
        code = int(request.match_info["code"])
        return web.Response(
            status=code, text=str(code), headers={"Set-Cookie": "a=1", "X-Dup": "1"}
        )

    async def dup_headers(request: web.Request) -> web.Response:
        resp = web.Response(text="dup")
        resp.headers.add("X-Dup", "one")
        resp.headers.add("X-Dup", "two")
        return resp

    app = web.Application(middlewares=[record])
    app.router.add_get("/page", page)
    app.router.add_get("/gzip", gz)
    app.router.add_get("/deflate", deflate)
    app.router.add_get("/raw-deflate", raw_deflate)
    app.router.add_get("/br", br)
    app.router.add_get("/bad-gzip", bad_gzip)
    app.router.add_get("/bomb", bomb_handler)
    app.router.add_get("/big", big)
    app.router.add_get("/big-chunked", big_chunked)
    app.router.add_get("/redirect", redirect)
    app.router.add_get("/chain/{n}/robots.txt", chain)
    app.router.add_get("/sleep", sleep)
    app.router.add_get("/slow-body", slow_body)
    app.router.add_get("/echo", echo)
    app.router.add_get("/status/{code}", status)
    app.router.add_get("/dup", dup_headers)
    app.router.add_get("/drop-reused", drop_reused)
    app.router.add_get("/huge-header", huge_header)
    app.router.add_get("/many-headers", many_headers)
    app.router.add_get("/creds-redirect/robots.txt", redirect_with_credentials)
    return app


@pytest.fixture
async def server() -> AsyncIterator[Server]:
    log: list[str] = []
    peer_ports: list[int] = []
    runner = web.AppRunner(_app(log, peer_ports), shutdown_timeout=0.2, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    yield Server(port=port, log=log, peer_ports=peer_ports)
    await runner.cleanup()


def make_config(**overrides: object) -> FetchConfig:
    settings: dict[str, object] = {
        "user_agent": USER_AGENT,
        "resolve": {"site-a.test": "127.0.0.1"},
        "allow_loopback": True,
        "connect_timeout": 2.0,
        "read_timeout": 2.0,
        "total_timeout": 3.0,
        "client": CLIENT[0],
    }
    settings.update(overrides)
    return FetchConfig(**settings)  # type: ignore[arg-type]


@pytest.fixture
async def fetcher() -> AsyncIterator[Fetcher]:
    async with open_fetcher(make_config()) as f:
        yield f


def echo_headers(body: bytes) -> dict[str, str]:
    return {k.lower(): v for k, v in json.loads(body).items()}
