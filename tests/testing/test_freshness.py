"""Validators, 304 answers and changing pages of the simulated web."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping

import aiohttp
import pytest

from headway.testing.features import Reply
from headway.testing.freshness import STABLE_SINCE, conditional, http_date, version
from headway.testing.simweb import HostSpec, SimWeb, SimWebSpec
from tests.testing.simclient import session

SPEC = HostSpec(pages=6, validators=True, change_every=2, change_period=10.0)


class FakeClock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
async def web() -> AsyncIterator[tuple[SimWeb, FakeClock]]:
    clock = FakeClock(1000.0)
    async with SimWeb(SimWebSpec(hosts=1, host_spec=SPEC), clock=clock) as simweb:
        yield simweb, clock


async def get(
    client: aiohttp.ClientSession, url: str, headers: dict[str, str] | None = None
) -> tuple[int, Mapping[str, str], bytes]:
    async with client.get(url, allow_redirects=False, headers=headers or {}) as r:
        return r.status, r.headers.copy(), await r.read()


def test_versions() -> None:
    assert version(SPEC, "/p/0", 19.9) == 1 and version(SPEC, "/p/0", 20.0) == 2
    assert version(SPEC, "/p/1", 1e9) == 0  # odd pages never change
    assert version(SPEC, "/", 1e9) == 0


@pytest.mark.parametrize(
    ("inm", "ims", "status"),
    [
        ('"a"', None, 304),
        ('"b", "a"', None, 304),
        ('W/"a"', None, 304),
        ("*", None, 304),
        ('"b"', http_date(2000), 200),  # If-None-Match wins over If-Modified-Since
        (None, http_date(2000), 304),
        (None, http_date(1000), 304),
        (None, http_date(999), 200),
        (None, "not a date", 200),
        (None, None, 200),
    ],
)
def test_conditional(inm: str | None, ims: str | None, status: int) -> None:
    page = Reply(200, "text/html", b"x", (("ETag", '"a"'), ("Last-Modified", http_date(1000))))
    got = conditional(page, inm, ims)
    assert got.status == status
    if status == 304:
        assert got.body == b"" and ("ETag", '"a"') in got.headers


async def test_changing_and_stable_pages_over_time(web: tuple[SimWeb, FakeClock]) -> None:
    simweb, clock = web
    async with session() as client:
        changing, stable = simweb.url("site0.sim", "/p/0"), simweb.url("site0.sim", "/p/1")
        s1, h1, b1 = await get(client, changing)
        s2, h2, b2 = await get(client, stable)
        assert (s1, s2) == (200, 200)
        assert b"content version 100" in b1 and b"content version" not in b2
        assert h1["Last-Modified"] == http_date(1000) and h2["Last-Modified"] == http_date(
            STABLE_SINCE
        )
        # same version: both answer 304 to their validators
        st, _, body = await get(client, changing, {"If-None-Match": h1["ETag"]})
        assert (st, body) == (304, b"")
        st, _, _ = await get(client, stable, {"If-Modified-Since": h2["Last-Modified"]})
        assert st == 304
        clock.now = 1010.0  # the changing page moves to version 101
        st, h3, b3 = await get(
            client,
            changing,
            {"If-None-Match": h1["ETag"], "If-Modified-Since": h1["Last-Modified"]},
        )
        assert st == 200 and b"content version 101" in b3 and h3["ETag"] != h1["ETag"]
        st, _, _ = await get(client, stable, {"If-None-Match": h2["ETag"]})
        assert st == 304
    log = [(r.path, r.status, r.if_none_match, r.if_modified_since) for r in simweb.log]
    assert log[0] == ("/p/0", 200, None, None)
    assert log[2] == ("/p/0", 304, h1["ETag"], None)
    assert log[4] == ("/p/0", 200, h1["ETag"], h1["Last-Modified"])
    assert log[5] == ("/p/1", 304, h2["ETag"], None)
