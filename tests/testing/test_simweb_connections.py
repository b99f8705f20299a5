"""The simulated web's connection options: an idle time-out after which the server
closes a kept-alive connection, and a TLS server that refuses session resumption; both
counted by the server itself."""

from __future__ import annotations

import asyncio
from pathlib import Path

import aiohttp
import pytest

from headway.fetch.tls import client_context
from headway.testing.simweb import HostSpec, SimWeb, SimWebSpec
from headway.testing.tls import SimPki, make_test_pki, server_context
from tests.testing.simclient import TIMEOUT, LoopbackResolver

SPEC = SimWebSpec(hosts=2, host_spec=HostSpec(pages=3), suffix="sim.test")


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> SimPki:
    return make_test_pki(tmp_path_factory.mktemp("pki"), "sim.test")


async def _get_all(web: SimWeb, paths: list[str | float], **connector: object) -> None:
    """GET each path of ``paths`` in turn on one client session (a float: sleep that
    long first)."""
    conn = aiohttp.TCPConnector(resolver=LoopbackResolver(), **connector)  # type: ignore[arg-type]
    async with aiohttp.ClientSession(connector=conn, timeout=TIMEOUT) as client:
        for item in paths:
            if isinstance(item, float):
                await asyncio.sleep(item)
                continue
            async with client.get(web.url(web.hosts[0], item)) as resp:
                assert resp.status == 200
                await resp.read()


@pytest.mark.parametrize(("idle", "connections"), [(None, 1), (0.3, 2)])
async def test_a_connection_idle_past_the_timeout_is_closed(
    idle: float | None, connections: int
) -> None:
    async with SimWeb(SPEC, idle_timeout=idle) as web:
        # two requests back to back share a connection; after a pause longer than the
        # idle time-out the client needs a new one
        await _get_all(web, ["/", "/p/0", 0.9, "/p/1"], keepalive_timeout=30)
        assert web.connections == connections
        assert web.requests == 3


def test_the_idle_timeout_must_be_positive() -> None:
    with pytest.raises(ValueError, match="idle_timeout"):
        SimWeb(SPEC, idle_timeout=0)


@pytest.mark.parametrize(("resumption", "full", "resumed"), [(True, 1, 3), (False, 4, 0)])
async def test_session_resumption_is_accepted_or_refused_as_configured(
    pki: SimPki, resumption: bool, full: int, resumed: int
) -> None:
    web = SimWeb(SPEC)
    ctx = server_context(pki.cert_file, pki.key_file, resumption=resumption)
    await web.start(ssl_context=ctx)
    try:
        client = client_context(Path(pki.ca_file))
        # a new connection for every request, each offering the last session it got
        await _get_all(web, ["/", "/p/0", "/p/1", "/p/2"], ssl=client, force_close=True)
        assert web.connections == 4
        assert (web.full_handshakes, web.resumed_handshakes) == (full, resumed)
        # the client saw the same handshakes as the server counted
        assert (client.full_handshakes, client.resumed_handshakes) == (full, resumed)
    finally:
        await web.stop()
