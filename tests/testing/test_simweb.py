"""The simulated web served over loopback, checked with a plain aiohttp client."""

from __future__ import annotations

import asyncio
import gzip
import logging
import re
import time
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urljoin

import aiohttp
import pytest
from selectolax.lexbor import LexborHTMLParser

from headway.testing.graph import FEATURES, SOAK_ONLY
from headway.testing.simweb import HostSpec, LoggedRequest, SimWeb, SimWebSpec, serve
from tests.testing.simclient import TIMEOUT, session

# (spam pages and sitemaps: tests/integration/test_quality.py, test_sitemaps.py and
# test_document_kind.py)
ALL = HostSpec(
    pages=12,
    features=FEATURES - {"spam", "sitemaps", "sitemap-faults", "large-sitemap", *SOAK_ONLY},
    crawl_delay=2,
    gzip=True,
)


@pytest.fixture
async def web() -> AsyncIterator[SimWeb]:
    spec = SimWebSpec(hosts=3, host_spec=ALL, overrides={2: HostSpec(robots=None)}, seed=7)
    async with SimWeb(spec) as simweb:
        yield simweb


@pytest.fixture
async def client() -> AsyncIterator[aiohttp.ClientSession]:
    async with session() as s:
        yield s


async def get(
    client: aiohttp.ClientSession, url: str, **kwargs: Any
) -> tuple[int, dict[str, str], bytes]:
    async with client.get(url, allow_redirects=False, **kwargs) as r:
        return r.status, dict(r.headers), await r.read()


def hrefs(body: bytes) -> list[tuple[str, str]]:
    """(href, rel) of every link on a page."""
    tree = LexborHTMLParser(body.decode())
    return [
        (a.attributes.get("href") or "", a.attributes.get("rel") or "") for a in tree.css("a[href]")
    ]


async def test_robots_txt(web: SimWeb, client: aiohttp.ClientSession) -> None:
    status, headers, body = await get(client, web.url("site0.sim", "/robots.txt"))
    assert status == 200 and headers["Content-Type"].startswith("text/plain")
    assert body.decode() == "User-agent: *\nDisallow: /private/\nCrawl-delay: 2\n"
    status, _, _ = await get(client, web.url("site2.sim", "/robots.txt"))
    assert status == 404


async def test_robots_unavailable() -> None:
    spec = SimWebSpec(hosts=1, host_spec=HostSpec(robots_status=503))
    async with SimWeb(spec) as simweb, session() as s:
        status, _, _ = await get(s, simweb.url("site0.sim", "/robots.txt"))
        assert status == 503
        assert simweb.expected_pages() == set()


async def test_plain_host_header_reaches_a_virtual_host(web: SimWeb) -> None:
    async with aiohttp.ClientSession(timeout=TIMEOUT) as s:
        url = f"http://127.0.0.1:{web.port}/p/3"
        status, _, body = await get(s, url, headers={"Host": f"site1.sim:{web.port}"})
        assert status == 200 and b"<title>site1.sim /p/3</title>" in body
        status, _, _ = await get(s, url, headers={"Host": "elsewhere.example"})
        assert status == 404
    assert web.log[-1].host == "elsewhere.example" and web.log[-1].status == 404


async def test_home_and_pages_link_onward(web: SimWeb, client: aiohttp.ClientSession) -> None:
    status, headers, body = await get(client, web.url("site0.sim"))
    assert status == 200 and headers["Content-Type"] == "text/html; charset=utf-8"
    assert b'<meta charset="utf-8">' in body
    links = hrefs(body)
    assert [h for h, rel in links if rel == "nofollow"] == ["/nofollow-target"]
    resolved = {urljoin(web.url("site0.sim"), h) for h, _ in links}
    assert {web.url("site0.sim", f"/p/{i}") for i in range(8)} <= resolved
    for i in (4, 11):
        _, _, page = await get(client, web.url("site0.sim", f"/p/{i}"))
        targets = [h.split("#")[0] for h, _ in hrefs(page)]
        nxt = (i + 1) % 12
        assert {f"/p/{nxt}", f"{nxt}", f"./{nxt}", web.url("site0.sim", f"/p/{nxt}")} & set(targets)


async def test_redirects(web: SimWeb, client: aiohttp.ClientSession) -> None:
    status, headers, _ = await get(client, web.url("site0.sim", "/r/4"))
    assert status == 301 and headers["Location"] == web.url("site0.sim", "/p/4")
    status, headers, _ = await get(client, web.url("site0.sim", "/r/5"))
    assert status == 301 and headers["Location"] == "/p/5"
    status, headers, _ = await get(client, web.url("site0.sim", "/loop/a"))
    assert status == 302 and headers["Location"] == "/loop/b"
    status, headers, _ = await get(client, web.url("site0.sim", "/loop/b"))
    assert status == 302 and headers["Location"] == "/loop/a"


@pytest.mark.parametrize(
    ("path", "status", "ctype"),
    [
        ("/gone", 410, "text/html"),
        ("/missing", 404, "text/html"),
        ("/boom", 500, "text/html"),
        ("/no/such/page", 404, "text/html"),
        ("/file.pdf", 200, "application/pdf"),
        ("/data.json", 200, "application/json"),
    ],
)
async def test_errors_and_non_html(
    web: SimWeb, client: aiohttp.ClientSession, path: str, status: int, ctype: str
) -> None:
    got, headers, body = await get(client, web.url("site1.sim", path))
    assert got == status and headers["Content-Type"].startswith(ctype)
    if ctype == "application/pdf":
        assert body.startswith(b"%PDF-")


async def test_gzip_only_when_accepted(web: SimWeb) -> None:
    async with session(auto_decompress=False) as s:
        url = web.url("site0.sim", "/p/2")
        _, headers, raw = await get(s, url, headers={"Accept-Encoding": "gzip"})
        assert headers["Content-Encoding"] == "gzip"
        html = gzip.decompress(raw)
        _, headers, plain = await get(s, url, headers={"Accept-Encoding": "identity"})
        assert "Content-Encoding" not in headers and plain == html
        _, headers, _ = await get(s, url, headers={"Accept-Encoding": "gzip;q=0, br"})
        assert "Content-Encoding" not in headers


async def test_trap_links_next_month_forever(web: SimWeb, client: aiohttp.ClientSession) -> None:
    url = web.url("site0.sim", "/cal/2024/01")
    for step in range(40):
        status, _, body = await get(client, url)
        assert status == 200
        targets = {urljoin(url, h).split("#")[0] for h, _ in hrefs(body)}
        year, month = 2024 + (step + 1) // 12, (step + 1) % 12 + 1
        previous = 2024 + (step - 1) // 12, (step - 1) % 12 + 1
        nxt = web.url("site0.sim", f"/cal/{year:04d}/{month:02d}")
        prev = web.url("site0.sim", "/cal/{:04d}/{:02d}".format(*previous))
        assert targets == {web.url("site0.sim"), nxt, prev}
        url = nxt
    assert url.endswith("/cal/2027/05")


async def test_huge_duplicates_tracking(web: SimWeb, client: aiohttp.ClientSession) -> None:
    status, _, body = await get(client, web.url("site0.sim", "/huge"))
    assert status == 200 and len(body) >= 2 * 1024 * 1024
    bodies = [(await get(client, web.url("site0.sim", f"/dup/{i}")))[2] for i in (1, 2, 3)]
    assert bodies[0] == bodies[1] == bodies[2]
    _, _, home = await get(client, web.url("site0.sim"))
    assert "/p/0?utm_source=x&utm_medium=y" in [h for h, _ in hrefs(home)]
    status, _, tracked = await get(client, web.url("site0.sim", "/p/0?utm_source=x&utm_medium=y"))
    assert status == 200 and tracked == (await get(client, web.url("site0.sim", "/p/0")))[2]


async def test_flaky_answers_503_once(web: SimWeb, client: aiohttp.ClientSession) -> None:
    status, headers, _ = await get(client, web.url("site1.sim", "/flaky"))
    assert status == 503 and headers["Retry-After"] == "1"
    status, _, _ = await get(client, web.url("site1.sim", "/flaky"))
    assert status == 200


async def test_pushback_and_clear(web: SimWeb, client: aiohttp.ClientSession) -> None:
    web.set_pushback("site1.sim", retry_after=3)
    status, headers, _ = await get(client, web.url("site1.sim", "/p/1"))
    assert status == 429 and headers["Retry-After"] == "3"
    status, _, _ = await get(client, web.url("site1.sim", "/robots.txt"))
    assert status == 200
    status, _, _ = await get(client, web.url("site0.sim", "/p/1"))
    assert status == 200
    web.set_pushback("site1.sim", status=503)
    status, headers, _ = await get(client, web.url("site1.sim", "/p/1"))
    assert status == 503 and "Retry-After" not in headers
    web.clear_pushback("site1.sim")
    status, _, _ = await get(client, web.url("site1.sim", "/p/1"))
    assert status == 200
    with pytest.raises(KeyError):
        web.set_pushback("nowhere.sim")


async def test_delay(web: SimWeb, client: aiohttp.ClientSession) -> None:
    web.set_delay("site0.sim", 0.3)
    began = time.monotonic()
    status, _, _ = await get(client, web.url("site0.sim", "/p/1"))
    assert status == 200 and time.monotonic() - began >= 0.3
    entry = web.log[-1]
    assert entry.end - entry.start >= 0.3
    web.set_delay("site0.sim", 0)
    began = time.monotonic()
    await get(client, web.url("site0.sim", "/p/1"))
    assert time.monotonic() - began < 0.25


async def test_timeout_hangs_until_cleared_and_stop_is_prompt() -> None:
    simweb = SimWeb(SimWebSpec(hosts=2))
    await simweb.start()
    try:
        simweb.set_timeout("site0.sim", True)
        short = aiohttp.ClientTimeout(total=0.3)
        async with session() as s:
            status, _, _ = await get(s, simweb.url("site0.sim", "/robots.txt"))
            assert status == 200
            with pytest.raises(asyncio.TimeoutError):
                await get(s, simweb.url("site0.sim", "/p/1"), timeout=short)
            assert [(r.path, r.status) for r in simweb.fetched()] == [("/p/1", 0)]
            simweb.set_timeout("site0.sim", False)
            status, _, _ = await get(s, simweb.url("site0.sim", "/p/1"), timeout=short)
            assert status == 200
            simweb.set_timeout("site1.sim", True)
            pending = asyncio.ensure_future(get(s, simweb.url("site1.sim", "/")))
            await asyncio.sleep(0.1)
            began = time.monotonic()
            await simweb.stop()
            assert time.monotonic() - began < 1.5
            status, _, _ = await asyncio.wait_for(pending, 1)  # woken and answered
            assert status == 503
            assert [r.status for r in simweb.log if r.host == "site1.sim"] == [0]
    finally:
        await simweb.stop()


async def test_log_records_requests(web: SimWeb, client: aiohttp.ClientSession) -> None:
    before = time.monotonic()
    await get(client, web.url("site2.sim", "/robots.txt"), headers={"User-Agent": "t/1"})
    await get(client, web.url("site2.sim", "/p/3?a=1"), headers={"User-Agent": "t/1"})
    await get(client, web.url("site2.sim", "/gone"), headers={"User-Agent": "t/1"})
    # site2 has no features, so /gone is just an unknown path there
    assert [(r.host, r.path, r.status, r.user_agent) for r in web.log] == [
        ("site2.sim", "/robots.txt", 404, "t/1"),
        ("site2.sim", "/p/3?a=1", 200, "t/1"),
        ("site2.sim", "/gone", 404, "t/1"),
    ]
    assert all(before <= r.start <= r.end <= time.monotonic() for r in web.log)
    assert abs(web.log[0].wall - time.time()) < 5
    assert [r.path for r in web.fetched()] == ["/p/3?a=1", "/gone"]
    assert [r.path for r in web.fetched("/p/")] == ["/p/3?a=1"]
    assert len(web.fetched(robots=True)) == 3


async def test_same_seed_same_bodies() -> None:
    spec = SimWebSpec(hosts=2, host_spec=ALL, seed=11)
    paths = ["/", "/p/0", "/p/5", "/robots.txt", "/cal/2024/03", "/dup/2", "/huge"]
    bodies: list[list[bytes]] = []
    for sp in (spec, spec, SimWebSpec(hosts=2, host_spec=ALL, seed=12)):
        async with SimWeb(sp) as simweb, session() as s:
            port = str(simweb.port).encode()
            got = [(await get(s, simweb.url(f"site{h}.sim", p)))[2] for h in (0, 1) for p in paths]
            bodies.append([b.replace(b":" + port, b":PORT") for b in got])
    assert bodies[0] == bodies[1]
    assert bodies[0] != bodies[2]


async def test_serve_runs_until_cancelled(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="headway.testing.simweb")
    task = asyncio.create_task(serve(SimWebSpec(hosts=2), "127.0.0.1", 0))
    for _ in range(100):
        if caplog.records:
            break
        await asyncio.sleep(0.02)
    seed = re.search(r"http://site0\.sim:\d+/", caplog.text)
    assert seed is not None
    async with session() as s:
        status, _, body = await get(s, seed[0])
        assert status == 200 and b"site0.sim" in body
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 3)


async def test_log_keeps_the_newest_entries() -> None:
    async with SimWeb(SimWebSpec(hosts=1), log_limit=5) as simweb, session() as s:
        for i in range(1020):
            simweb._record(  # the trimming rule, without 1020 round trips
                LoggedRequest(i, i, i, "site0.sim", f"/p/{i}", 200, "")
            )
        await get(s, simweb.url("site0.sim", "/p/1"))
        assert len(simweb.log) <= 5 + 1000
        assert simweb.log[-1].path == "/p/1" and simweb.log_dropped > 0
        assert len(simweb.log) + simweb.log_dropped == 1021
