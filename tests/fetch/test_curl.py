"""What the libcurl client must do besides what every client does (``test_client.py``
runs with both): no proxy from the environment, the address guard on every socket
libcurl opens, a clear error when pycurl is missing. The tests that only concern libcurl
are skipped in the aiohttp round of ``http_client``."""

from __future__ import annotations

import importlib.util
import socket
import warnings
from collections import namedtuple
from pathlib import Path

import pytest
from aiohttp import web

from headway.errors import ConfigError
from headway.fetch import curl
from headway.fetch.client import FetchConfig
from headway.fetch.clients import open_fetcher
from headway.policy.outcome import Outcome
from headway.settings import build_settings
from tests.fetch.conftest import HTML, USER_AGENT, Server, make_config

#: What pycurl hands the open-socket callback.
Address = namedtuple("Address", "family socktype protocol addr")


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_a_proxy_in_the_environment_is_not_used(
    server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only ``fetch.proxy`` routes requests: the environment's proxy variables (which
    libcurl reads unless told not to) point at a closed port and change nothing."""
    dead = f"http://127.0.0.1:{_closed_port()}"
    for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy"):
        monkeypatch.setenv(name, dead)
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.delenv("NO_PROXY", raising=False)
    async with open_fetcher(make_config()) as f:
        r = await f.fetch(server.url("/page"))
    assert r.outcome is Outcome.OK and r.body == HTML, r.error
    assert server.log == ["/page"]


async def test_every_socket_libcurl_opens_passes_the_guard(http_client: str) -> None:
    """libcurl connects only to the address the crawler's resolver allowed; should it
    ever be about to connect elsewhere, the guard refuses the socket."""
    if http_client != "curl":
        pytest.skip("libcurl's open-socket callback")
    async with open_fetcher(make_config(allow_loopback=False)) as f:
        assert isinstance(f, curl.CurlFetcher)
        inet = (socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        assert f._open_socket(0, Address(*inet, ("127.0.0.1", 80))) is None
        assert f._open_socket(0, Address(*inet, ("169.254.169.254", 80))) is None
        allowed = f._open_socket(0, Address(*inet, ("93.184.216.34", 80)))
        assert isinstance(allowed, curl.HandedSocket) and allowed.fileno() >= 0


async def test_the_proxy_is_the_one_address_exempt(http_client: str) -> None:
    """Through a proxy, the socket libcurl opens is the proxy's (exempt, as it is for
    the crawler's own client)."""
    if http_client != "curl":
        pytest.skip("libcurl's open-socket callback")
    config = make_config(allow_loopback=False, proxy="http://127.0.0.1:3128")
    async with open_fetcher(config) as f:
        inet = (socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        proxy = f._open_socket(0, Address(*inet, ("127.0.0.1", 3128)))
        assert isinstance(proxy, curl.HandedSocket) and proxy.fileno() >= 0


def test_curl_without_pycurl_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(curl, "pycurl", None)
    with pytest.raises(ConfigError, match=r"fetch\.http_client.*needs pycurl"):
        open_fetcher(FetchConfig(user_agent=USER_AGENT, client="curl"))


def test_curl_without_pycurl_is_refused_with_the_settings(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Before any crawl directory is made: the settings say how to install it."""
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "pycurl" else real(name, *a)
    )
    layer = {"user_agent": USER_AGENT, "out": str(tmp_path / "c"), "http_client": "curl"}
    with pytest.raises(ConfigError, match=r"fetch\.http_client.*pip install '\.\[curl\]'"):
        build_settings(layer)
    assert not (tmp_path / "c").exists()
    build_settings({**layer, "http_client": "aiohttp"})


def test_an_unknown_client_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match=r"fetch\.http_client"):
        open_fetcher(FetchConfig(user_agent=USER_AGENT, client="wget"))


def test_the_client_names_itself_for_the_log(http_client: str) -> None:
    described = open_fetcher(make_config()).describe()
    assert described.startswith("PycURL/" if http_client == "curl" else "aiohttp "), described


def test_session_shares_hold_each_host_in_one_share_of_bounded_size() -> None:
    """Each host is given one share, a share at most ``per_share`` hosts; past
    ``max_hosts`` the least recently used host gives up its place."""
    pytest.importorskip("pycurl")
    from headway.fetch.curlloop import SessionShares

    shares = SessionShares(max_hosts=7, per_share=3)
    try:
        first = [shares.share_for(f"h{i}:443") for i in range(6)]
        assert len(shares) == 2
        assert first[0] is first[1] is first[2] and first[3] is first[4] is first[5]
        assert first[0] is not first[3]
        assert shares.share_for("h0:443") is first[0]  # kept: now the most recently used
        seventh = shares.share_for("h6:443")  # a third share: the two are full
        assert len(shares) == 3 and seventh not in first
        # over max_hosts: h1 (least recently used) gives up its place in the first share
        eighth = shares.share_for("h7:443")
        assert eighth is first[1] and len(shares) == 3
        assert shares.share_for("h0:443") is first[0]
        # h1 comes back as a new host: h2 gives up its place, h1 takes it
        assert shares.share_for("h1:443") is first[0]
    finally:
        shares.close()
    assert len(shares) == 0


async def test_the_sockets_handed_to_libcurl_are_closed_without_a_warning(
    server: Server, http_client: str
) -> None:
    """pycurl keeps a duplicate of the socket the open-socket callback returns; the
    original is closed, not left to the garbage collector's ``ResourceWarning``."""
    if http_client != "curl":
        pytest.skip("libcurl's open-socket callback")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        async with open_fetcher(make_config()) as f:
            for path in ("/page", "/page"):
                r = await f.fetch(server.url(path))
                assert r.outcome is Outcome.OK, r.error
    unclosed = [w for w in caught if issubclass(w.category, ResourceWarning)]
    assert unclosed == [], [str(w.message) for w in unclosed]


async def _serve(host: str, port: int, name: str, log: list[str]) -> web.AppRunner:
    """A server on ``host:port`` that logs each request under ``name``."""

    async def answer(request: web.Request) -> web.Response:
        log.append(f"{name} {request.path}")
        return web.Response(body=HTML, content_type="text/html")

    app = web.Application()
    app.router.add_get("/{tail:.*}", answer)
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.2)
    await runner.setup()
    await web.TCPSite(runner, host, port).start()
    return runner


async def test_the_request_goes_to_the_address_the_guard_allowed(http_client: str) -> None:
    """The client connects to the address the crawler's resolver chose (and the guard
    checked), never to one it resolves itself: ``localhost`` resolves to 127.0.0.1
    everywhere, a decoy listens there, and the crawler's resolver says 127.0.0.2,
    where the real server listens on the same port. Only the real server is asked."""
    log: list[str] = []
    real = await _serve("127.0.0.2", 0, "allowed", log)
    port = int(real.addresses[0][1])
    try:
        decoy = await _serve("127.0.0.1", port, "decoy", log)
    except OSError:
        await real.cleanup()
        pytest.skip(f"127.0.0.1:{port} is taken")
    try:
        config = make_config(resolve={"localhost": "127.0.0.2"})
        async with open_fetcher(config) as f:
            for path in ("/one", "/two"):
                r = await f.fetch(f"http://localhost:{port}{path}")
                assert r.outcome is Outcome.OK and r.body == HTML, r.error
        assert log == ["allowed /one", "allowed /two"]
    finally:
        await decoy.cleanup()
        await real.cleanup()


def test_the_libcurl_client_is_a_sibling_of_the_aiohttp_one() -> None:
    # both implement HttpClient around one FetchCore; neither inherits the other's wire
    from headway.fetch.client import Fetcher

    assert Fetcher not in curl.CurlFetcher.__mro__
    assert curl.CurlFetcher not in Fetcher.__mro__
