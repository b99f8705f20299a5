"""Fetcher against a local server: decoding, limits, redirects, failures as outcomes;
every test runs with each HTTP client (``conftest.http_client``)."""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import AsyncIterator

import pytest

from headway.fetch.client import Fetcher, robots_redirect_target
from headway.fetch.clients import open_fetcher
from headway.policy.outcome import Outcome
from tests.fetch.conftest import BIG, HTML, USER_AGENT, Server, echo_headers, make_config


async def test_200_html(server: Server, fetcher: Fetcher) -> None:
    before = time.time()
    r = await fetcher.fetch(server.url("/page"))
    assert r.outcome is Outcome.OK
    assert r.status == 200 and r.reason == "OK"
    assert r.body == HTML and r.raw_body is r.body
    assert r.truncated is None and r.error is None
    assert r.ip == "127.0.0.1"
    assert r.http_version == "1.1" and r.method == "GET"
    assert r.header("content-type") == "text/html"
    assert before <= r.started_at <= time.time() and 0 <= r.duration < 2
    assert server.log == ["/page"]


async def test_request_headers_as_sent(server: Server, fetcher: Fetcher) -> None:
    r = await fetcher.fetch(server.url("/echo"))
    seen = echo_headers(r.body)
    assert seen["user-agent"] == USER_AGENT
    assert seen["accept-encoding"] == "gzip, deflate, br"
    assert seen["host"] == f"site-a.test:{server.port}"
    assert "accept-language" not in seen and "cookie" not in seen
    sent = {k.lower(): v for k, v in r.request_headers}
    assert sent["host"] == seen["host"]
    assert sent["user-agent"] == USER_AGENT
    assert sent["accept"] == seen["accept"]


async def test_accept_language_sent_when_set(server: Server) -> None:
    async with open_fetcher(make_config(accept_language="fr, en;q=0.5")) as f:
        r = await f.fetch(server.url("/echo"))
    assert echo_headers(r.body)["accept-language"] == "fr, en;q=0.5"


async def test_response_headers_raw_with_duplicates(server: Server, fetcher: Fetcher) -> None:
    r = await fetcher.fetch(server.url("/dup"))
    assert [v for k, v in r.response_headers if k == "X-Dup"] == ["one", "two"]
    assert r.header("x-dup") == "one"


@pytest.mark.parametrize("path", ["/gzip", "/deflate", "/br"])
async def test_encoded_bodies_decoded_raw_kept(server: Server, fetcher: Fetcher, path: str) -> None:
    r = await fetcher.fetch(server.url(path))
    assert r.outcome is Outcome.OK and r.error is None
    assert r.header("Content-Encoding") == path[1:]
    assert r.body == HTML
    assert r.raw_body != HTML and len(r.raw_body) < len(HTML)
    assert r.truncated is None


async def test_raw_deflate_decoded(server: Server, fetcher: Fetcher) -> None:
    r = await fetcher.fetch(server.url("/raw-deflate"))
    assert r.body == HTML


async def test_corrupt_encoding_is_invalid_response(server: Server, fetcher: Fetcher) -> None:
    r = await fetcher.fetch(server.url("/bad-gzip"))
    assert r.outcome is Outcome.INVALID_RESPONSE
    assert r.status == 200 and r.error and "gzip" in r.error
    assert r.raw_body == b"this is not gzip at all" and r.body == b""


@pytest.mark.parametrize("path", ["/big", "/big-chunked"])
async def test_body_cut_at_max_body(server: Server, path: str) -> None:
    async with open_fetcher(make_config(max_body=100_000)) as f:
        r = await f.fetch(server.url(path))
        assert r.outcome is Outcome.OK
        assert len(r.raw_body) == 100_000 and r.truncated == "length"
        assert f.statistics().bytes_received == 100_000
        # The cut connection is not reused: the next fetch still works.
        again = await f.fetch(server.url("/page"))
    assert again.body == HTML


async def test_connections_reused_except_after_a_cut(server: Server) -> None:
    async with open_fetcher(make_config(max_body=len(HTML))) as f:
        results = [await f.fetch(server.url(p)) for p in ("/page", "/page", "/big", "/page")]
    assert [r.truncated for r in results] == [None, None, "length", None]
    a, b, c, d = server.peer_ports
    assert a == b == c  # keep-alive
    assert d != c  # the connection cut at max_body was closed, not pooled


async def test_body_exactly_at_limit_is_not_truncated(server: Server) -> None:
    async with open_fetcher(make_config(max_body=len(HTML))) as f:
        r = await f.fetch(server.url("/page"))
    assert r.body == HTML and r.truncated is None


async def test_a_document_has_its_own_size_limit_raw_and_decoded(server: Server) -> None:
    config = make_config(max_body=100_000, max_decoded=8_000_000, max_document=3_000_000)
    async with open_fetcher(config) as f:
        page = await f.fetch(server.url("/big"))
        doc = await f.fetch_document(server.url("/big"))
        # the document limit also caps what a Content-Encoding inflates to
        bomb = await f.fetch_document(server.url("/bomb"))
        small = open_fetcher(make_config(max_body=4_000_000, max_document=1_500_000))
        async with small as g:
            cut = await g.fetch_document(server.url("/big"))
    assert len(page.raw_body) == 100_000 and page.truncated == "length"
    assert len(doc.raw_body) == len(doc.body) == BIG and doc.truncated is None
    assert len(bomb.body) == 3_000_000 and bomb.truncated == "decoded-length"
    assert len(cut.raw_body) == 1_500_000 and cut.truncated == "length"


async def test_decompression_bomb_capped(server: Server) -> None:
    async with open_fetcher(make_config(max_decoded=1_000_000)) as f:
        r = await f.fetch(server.url("/bomb"))
    assert r.outcome is Outcome.OK
    assert len(r.body) == 1_000_000 and r.truncated == "decoded-length"
    assert len(r.raw_body) < 256 * 1024


async def test_redirect_not_followed(server: Server, fetcher: Fetcher) -> None:
    r = await fetcher.fetch(server.url("/redirect"))
    assert r.outcome is Outcome.REDIRECT and r.status == 302
    assert r.header("Location") == "/page?from=redirect"
    assert server.log == ["/redirect"]


@pytest.mark.parametrize(
    ("code", "outcome"),
    [(404, Outcome.CLIENT_ERROR), (429, Outcome.THROTTLED), (503, Outcome.UNAVAILABLE)],
)
async def test_status_outcomes(
    server: Server, fetcher: Fetcher, code: int, outcome: Outcome
) -> None:
    r = await fetcher.fetch(server.url(f"/status/{code}"))
    assert r.outcome is outcome and r.status == code and r.error is None


async def test_robots_fetch_is_one_hop(server: Server, fetcher: Fetcher) -> None:
    """A robots.txt redirect comes back to the caller, which paces each hop."""
    url = server.url("/chain/5/robots.txt")
    r = await fetcher.fetch_robots(url)
    assert r.outcome is Outcome.REDIRECT and r.status == 301
    assert robots_redirect_target(url, r) == server.url("/chain/4/robots.txt")
    assert len(server.log) == 1
    last = await fetcher.fetch_robots(server.url("/chain/0/robots.txt"))
    assert last.outcome is Outcome.OK and robots_redirect_target(url, last) is None


async def test_robots_redirect_target_drops_credentials(server: Server, fetcher: Fetcher) -> None:
    url = server.url("/creds-redirect/robots.txt")
    r = await fetcher.fetch_robots(url)
    assert robots_redirect_target(url, r) == server.url("/echo")


async def test_credentials_in_url_never_sent(server: Server, fetcher: Fetcher) -> None:
    r = await fetcher.fetch(server.url("/echo").replace("://", "://user:secret@"))
    assert r.outcome is Outcome.OK
    seen = echo_headers(r.body)
    assert "authorization" not in seen
    assert "secret" not in r.url and "secret" not in repr(r.request_headers)


async def test_no_silent_second_request_on_a_reset_connection(
    server: Server, fetcher: Fetcher
) -> None:
    """The server closes a reused keep-alive connection under the second request: that
    is one failed result, and the server saw exactly one request for it."""
    first = await fetcher.fetch(server.url("/page"))
    assert first.outcome is Outcome.OK
    second = await fetcher.fetch(server.url("/drop-reused"))
    assert second.outcome is Outcome.CONNECTION_ERROR, second
    assert server.log == ["/page", "/drop-reused"]
    assert fetcher.statistics().requests == 2


async def test_robots_body_capped(server: Server) -> None:
    async with open_fetcher(make_config(max_robots=1000)) as f:
        r = await f.fetch_robots(server.url("/big"))
    assert len(r.raw_body) == 1000 and r.truncated == "length"


async def test_total_timeout(server: Server) -> None:
    async with open_fetcher(make_config(total_timeout=0.5)) as f:
        t0 = time.monotonic()
        r = await f.fetch(server.url("/sleep"))
        elapsed = time.monotonic() - t0
        assert f.statistics().errors_by_outcome == {"timeout": 1}
    assert r.outcome is Outcome.TIMEOUT and r.status is None and r.error
    assert 0.4 <= elapsed < 1.5 and 0.4 <= r.duration < 1.5


async def test_read_timeout_mid_body_keeps_partial_body(server: Server) -> None:
    async with open_fetcher(make_config(read_timeout=0.3)) as f:
        r = await f.fetch(server.url("/slow-body"))
    assert r.outcome is Outcome.TIMEOUT and r.status == 200
    assert r.raw_body == b"<html>first part" and r.truncated == "time"
    assert r.duration < 2.0  # the read time-out (0.3 s) ended it, not the total (3 s)


async def test_read_timeout_before_the_response(server: Server) -> None:
    """A server that takes the request and says nothing: the read time-out ends it."""
    async with open_fetcher(make_config(read_timeout=0.3)) as f:
        r = await f.fetch(server.url("/sleep"))
    assert r.outcome is Outcome.TIMEOUT and r.status is None and r.sent_at is not None
    assert r.duration < 2.0  # the read time-out (0.3 s), not the total (3 s)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_connection_refused(fetcher: Fetcher) -> None:
    r = await fetcher.fetch(f"http://site-a.test:{_closed_port()}/")
    assert r.outcome is Outcome.CONNECTION_ERROR and r.status is None and r.error


async def test_unknown_host_is_dns_error(fetcher: Fetcher) -> None:
    r = await fetcher.fetch("http://no-such-host.invalid/")
    assert r.outcome is Outcome.DNS_ERROR and r.error and r.status is None


async def test_loopback_refused_by_guard(server: Server) -> None:
    async with open_fetcher(make_config(allow_loopback=False)) as f:
        named = await f.fetch(server.url("/page"))
        literal = await f.fetch(f"http://127.0.0.1:{server.port}/page")
        mapped = await f.fetch(f"http://[::ffff:127.0.0.1]:{server.port}/page")
        stats = f.statistics()
    for r in (named, literal, mapped):
        assert r.outcome is Outcome.BLOCKED_ADDRESS and r.error and "loopback" in r.error
    assert server.log == []
    assert stats.errors_by_outcome == {"blocked_address": 3} and stats.in_flight == 0


async def test_wildcard_override(server: Server) -> None:
    config = make_config(resolve={"*.sim.test": "127.0.0.1"})
    async with open_fetcher(config) as f:
        deep = await f.fetch(server.url("/page", host="www.a.sim.test"))
        bare = await f.fetch(server.url("/page", host="sim.test"))
    assert deep.outcome is Outcome.OK and deep.body == HTML
    assert bare.outcome is Outcome.DNS_ERROR


@pytest.fixture
async def garbage_port() -> AsyncIterator[int]:
    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(1024)
        writer.write(b"\x00\xff\x13garbage that is not HTTP\r\n\r\n")
        await writer.drain()
        writer.close()

    srv = await asyncio.start_server(answer, "127.0.0.1", 0)
    yield int(srv.sockets[0].getsockname()[1])
    srv.close()
    await srv.wait_closed()


async def test_garbage_instead_of_http(fetcher: Fetcher, garbage_port: int) -> None:
    r = await fetcher.fetch(f"http://site-a.test:{garbage_port}/")
    assert r.outcome is Outcome.INVALID_RESPONSE
    assert r.status is None and r.error


async def test_not_http_url(fetcher: Fetcher) -> None:
    r = await fetcher.fetch("ftp://site-a.test/file")
    assert r.outcome is Outcome.INVALID_RESPONSE and r.error


async def test_statistics_count_requests(server: Server, fetcher: Fetcher) -> None:
    await asyncio.gather(*(fetcher.fetch(server.url("/page")) for _ in range(5)))
    stats = fetcher.statistics()
    assert stats.requests == 5 and stats.in_flight == 0
    assert stats.bytes_received == 5 * len(HTML) and stats.errors_by_outcome == {}


async def test_sent_at_marks_when_the_request_left(server: Server, fetcher: Fetcher) -> None:
    first = await fetcher.fetch(server.url("/page"))
    again = await fetcher.fetch(server.url("/page"))  # a reused connection
    for res in (first, again):
        assert res.sent_at is not None
        assert res.started_at <= res.sent_at <= res.started_at + res.duration + 0.001
    refused = await fetcher.fetch("http://127.0.0.1:1/")  # never connected: never sent
    assert refused.sent_at is None


@pytest.mark.parametrize("path", ["/huge-header", "/many-headers"])
async def test_oversized_response_headers_are_invalid(
    server: Server, fetcher: Fetcher, path: str
) -> None:
    r = await fetcher.fetch(server.url(path))
    assert r.outcome is Outcome.INVALID_RESPONSE and r.status is None, r
