"""HTTPS: the simulated web over TLS with a certificate made here, trusted through
``ca_file``; verification on by default; one TLS handshake per host, not per page. Each
test runs with each HTTP client (``http_client``; libcurl's where pycurl is installed)."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path

import pytest

from headway.errors import ConfigError
from headway.fetch.client import FetchConfig
from headway.fetch.clients import open_fetcher
from headway.policy.outcome import Outcome
from headway.runtime.node import Node
from headway.testing.simweb import HostSpec, SimWeb, SimWebSpec
from headway.testing.tls import SimPki, make_test_pki, server_context
from tests.integration.helpers import UA, crawl_settings
from tests.support.httpclients import CLIENT, http_client

__all__ = ["http_client"]  # every test runs with each client

SUFFIX = "sim.test"
RESOLVE = {f"*.{SUFFIX}": "127.0.0.1"}


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> SimPki:
    return make_test_pki(tmp_path_factory.mktemp("pki"), SUFFIX)


def tls_web(pki: SimPki, hosts: int, pages: int) -> SimWeb:
    spec = SimWebSpec(
        hosts=hosts, host_spec=HostSpec(pages=pages, links_per_page=3), suffix=SUFFIX, seed=3
    )
    return SimWeb(spec)


def config(ca_file: Path | None) -> FetchConfig:
    return FetchConfig(
        user_agent=UA, allow_loopback=True, resolve=RESOLVE, ca_file=ca_file, client=CLIENT[0]
    )


async def test_certificates_are_verified_and_ca_file_is_trusted(pki: SimPki) -> None:
    web = tls_web(pki, 1, 2)
    await web.start(ssl_context=server_context(pki.cert_file, pki.key_file))
    try:
        url = web.seeds()[0]
        assert url.startswith("https://")
        async with open_fetcher(config(None)) as fetcher:  # verification is on by default
            refused = await fetcher.fetch(url)
        assert refused.outcome is Outcome.TLS_ERROR
        assert refused.error is not None and "certificate verify failed" in refused.error
        async with open_fetcher(config(pki.ca_file)) as fetcher:
            ok = await fetcher.fetch(url)
        assert ok.outcome is Outcome.OK and ok.status == 200
        assert b"<a href=" in ok.body
    finally:
        await web.stop()


async def test_a_new_connection_resumes_the_tls_session_of_the_last_one(pki: SimPki) -> None:
    """When a host's connection was closed (here: the keep-alive is shorter than the
    pause between requests), the next connection resumes the TLS session: the server
    sees one full handshake per host and abbreviated ones after it. The certificate is
    still required: a fetcher without the CA is refused even after sessions exist."""
    hosts, pages = 3, 3
    web = tls_web(pki, hosts, pages)
    await web.start(ssl_context=server_context(pki.cert_file, pki.key_file))
    try:
        urls = [web.url(h, f"/p/{p}") for p in range(pages) for h in web.hosts]
        cfg = dataclasses.replace(config(pki.ca_file), keepalive=0.05)
        async with open_fetcher(cfg) as fetcher:
            for url in urls:
                res = await fetcher.fetch(url)
                assert res.outcome is Outcome.OK, res.error
                await asyncio.sleep(0.2)  # the idle connection is closed meanwhile
        assert web.connections == len(urls)  # no connection outlived the keep-alive
        assert web.resumed_handshakes == len(urls) - hosts  # one full handshake per host
        async with open_fetcher(config(None)) as fetcher:
            refused = await fetcher.fetch(urls[0])
        assert refused.outcome is Outcome.TLS_ERROR
    finally:
        await web.stop()


async def test_sessions_are_resumed_on_sixty_hosts_in_turn(pki: SimPki) -> None:
    """One session kept per host, however many hosts a crawl goes round: 60 hosts
    fetched in turn, twice, a new connection each time, and the second round resumes
    every session (libcurl keeps about 25 hosts' sessions in one place: with one, this
    resumed 24 of 60)."""
    hosts = 60
    web = tls_web(pki, hosts, 2)
    await web.start(ssl_context=server_context(pki.cert_file, pki.key_file))
    try:
        cfg = dataclasses.replace(config(pki.ca_file), keepalive=0.05)
        async with open_fetcher(cfg) as fetcher:
            for page in range(2):
                for host in web.hosts:
                    res = await fetcher.fetch(web.url(host, f"/p/{page}"))
                    assert res.outcome is Outcome.OK, res.error
                await asyncio.sleep(0.2)  # connections outlive neither keep-alive
        assert web.connections == 2 * hosts
        assert web.resumed_handshakes == hosts
    finally:
        await web.stop()


async def test_a_kept_connection_the_server_closed_is_not_used(pki: SimPki) -> None:
    """The server closes connections idle 0.1 s (a TLS close_notify, then FIN); the
    fetcher keeps them longer. A request never goes out on such a connection: every
    fetch is answered, each request reaches the server once, on a new connection."""
    hosts, pages = 2, 3
    web = SimWeb(
        SimWebSpec(hosts=hosts, host_spec=HostSpec(pages=pages), suffix=SUFFIX, seed=3),
        idle_timeout=0.1,
    )
    await web.start(ssl_context=server_context(pki.cert_file, pki.key_file))
    try:
        urls = [web.url(h, f"/p/{p}") for p in range(pages) for h in web.hosts]
        async with open_fetcher(config(pki.ca_file)) as fetcher:  # keep-alive 15 s
            for url in urls:
                res = await fetcher.fetch(url)
                assert res.outcome is Outcome.OK, res.error
                await asyncio.sleep(0.3)  # the server closes the idle connection
        assert len(web.log) == len(urls)
        assert web.connections == len(urls)
    finally:
        await web.stop()


def test_unreadable_ca_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"fetch\.ca_file"):
        open_fetcher(config(tmp_path / "missing.pem"))
    bad = tmp_path / "bad.pem"
    bad.write_text("not a certificate\n")
    with pytest.raises(ConfigError, match=r"fetch\.ca_file"):
        open_fetcher(config(bad))


@pytest.mark.slow
@pytest.mark.parametrize(("hosts", "pages", "concurrency"), [(3, 6, 64), (40, 2, 8)])
async def test_connections_stay_alive_across_the_gap(
    pki: SimPki, tmp_path: Path, hosts: int, pages: int, concurrency: int
) -> None:
    """Every request to a host after the first reuses its connection across the
    politeness gap: the server sees about one connection (one TLS handshake) per host,
    also when there are more hosts than fetch slots."""
    web = tls_web(pki, hosts, pages)
    await web.start(ssl_context=server_context(pki.cert_file, pki.key_file))
    try:
        settings = crawl_settings(
            tmp_path / "c",
            delay=0.3,
            resolve=[f"*.{SUFFIX}=127.0.0.1"],
            ca_file=str(pki.ca_file),
            concurrency=concurrency,
            http_client=CLIENT[0],
        )
        summary = await Node(settings, web.seeds()).run()
    finally:
        await web.stop()
    assert summary.stopped_by == "finished"
    assert summary.outcomes.get("ok", 0) == hosts * (pages + 1)  # home page + pages
    requests = len(web.log)
    assert requests == summary.requests >= hosts * (pages + 2)  # robots.txt too
    # one connection per host (a spare one each at most), not one per request, and a
    # full TLS handshake once per host at most (another connection resumes the session)
    assert web.connections <= 2 * hosts, (web.connections, requests)
    assert web.connections - web.resumed_handshakes <= hosts, web.resumed_handshakes
