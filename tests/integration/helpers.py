"""Shared pieces of the integration crawls: settings for crawling the simulated web, a
simulated web served from a background thread (for crawls run as subprocesses), and the
politeness check made from the server's own request log."""

from __future__ import annotations

import asyncio
import itertools
import json
import sqlite3
import threading
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar
from urllib.parse import urlsplit

import pytest

from headway.fetch.client import FetchConfig, HttpClient
from headway.fetch.clients import fetcher_class
from headway.fetch.result import FetchResult, Headers
from headway.runtime import node as node_module
from headway.settings import Settings, build_settings
from headway.testing.simweb import LoggedRequest, SimWeb, SimWebSpec
from tests.support.argv import headway_argv

UA = "testbot/1.0 (+https://example.org/testbot)"
TOKEN = "testbot"

#: What the gap between two requests' arrivals at the server's socket (``arrival``: the
#: handler's start less the lateness the server measured) may fall short of the delay:
#: the two clocks the server reads side by side. The crawler sends a request no sooner
#: than the delay after it sent the one before, and loopback delivers it at once, so the
#: arrival gap is the crawler's gap; this stays well under a tenth of any delay tested.
ARRIVAL_SLACK = 0.002
#: The allowance when a server could not measure its lateness (``late`` None: no kernel
#: receive times on this platform): handler starts, which a busy process delays.
TRANSIT_SLACK = 0.03


class Stamped(Protocol):
    """A request in a test server's log (``LoggedRequest``, ``HostileRequest``)."""

    @property
    def start(self) -> float: ...

    @property
    def end(self) -> float: ...

    @property
    def late(self) -> float | None: ...

    @property
    def arrival(self) -> float: ...


def short_gap(a: Stamped, b: Stamped, delay: float) -> float | None:
    """The gap between the arrivals of ``a`` and then ``b`` (one host) when it falls short
    of ``delay`` by more than the allowance (``ARRIVAL_SLACK``, or ``TRANSIT_SLACK``
    when a lateness is unmeasured); None when it keeps the delay. A handler the server
    started late no longer shortens the gap after it, nor lengthens the one before."""
    gap = b.arrival - a.arrival
    slack = ARRIVAL_SLACK if a.late is not None and b.late is not None else TRANSIT_SLACK
    return gap if gap < delay - slack else None


def crawl_settings(out: Path, **overrides: Any) -> Settings:
    layer: dict[str, Any] = {
        "user_agent": UA,
        "out": str(out),
        "resolve": ["*.sim=127.0.0.1"],
        "allow_loopback": True,
        "quiet": True,
        "parsers": 1,
        "delay": 0.05,
        "metrics_interval": 0.5,
    }
    layer.update(overrides)
    return build_settings(layer)


def crawl_argv(seeds: Path, out: Path, *extra: str) -> list[str]:
    return headway_argv(out, *extra, user_agent=UA, seeds=seeds)


class Served(Protocol):
    async def start(self) -> None: ...

    async def stop(self) -> None: ...


W = TypeVar("W", bound=Served)


class ServedInThread(Generic[W]):
    """A web server (``start``/``stop``) on its own event loop in a daemon thread."""

    def __init__(self, web: W) -> None:
        self.web = web
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_until_complete(self.web.start())
        self._ready.set()
        self._loop.run_forever()

    def __enter__(self) -> W:
        self._thread.start()
        if not self._ready.wait(30):
            raise RuntimeError("the test web server did not start")
        return self.web

    def __exit__(self, *exc: object) -> None:
        fut = asyncio.run_coroutine_threadsafe(self.web.stop(), self._loop)
        fut.result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)


class ThreadedSimWeb(ServedInThread[SimWeb]):
    """A SimWeb on its own event loop in a daemon thread."""

    def __init__(self, spec: SimWebSpec) -> None:
        super().__init__(SimWeb(spec))


def page_requests(log: Iterable[LoggedRequest]) -> list[LoggedRequest]:
    return [r for r in log if r.path != "/robots.txt"]


def fetched_urls(web: SimWeb, log: Iterable[LoggedRequest]) -> list[str]:
    return [web.url(r.host, r.path) for r in page_requests(log)]


#: Sends: (host, path) -> the crawler's send times (wall clock) of its requests, in order.
Sends = dict[tuple[str, str], list[float]]


def record_sends(monkeypatch: pytest.MonkeyPatch) -> Sends:
    """Record when each request of the crawls run in this test left the crawler (the
    ``sent_at`` its fetcher reports: request headers written), for
    ``politeness_violations``; requests never sent (refused, no connection) are left out."""
    sends: Sends = defaultdict(list)

    def note(url: str, res: FetchResult) -> FetchResult:
        if res.sent_at is not None:
            parts = urlsplit(url)
            path = parts.path + (f"?{parts.query}" if parts.query else "")
            sends[((parts.hostname or "").lower(), path or "/")].append(res.sent_at)
        return res

    class Recording:  # a mixin over either client
        async def fetch(self, url: str, extra_headers: Headers = ()) -> FetchResult:
            return note(url, await super().fetch(url, extra_headers))

        async def fetch_robots(self, url: str) -> FetchResult:
            return note(url, await super().fetch_robots(url))

    with_fetcher_mixin(monkeypatch, Recording)
    return sends


def with_fetcher_mixin(monkeypatch: pytest.MonkeyPatch, mixin: type) -> None:
    """Make the crawls of this test fetch with ``mixin`` (a class that overrides
    ``HttpClient`` methods and calls ``super()``) over whichever client their settings
    choose (``fetch.http_client``)."""

    def opened(config: FetchConfig) -> HttpClient:
        client = fetcher_class(config.client)
        assert isinstance(client, type)
        mixed = type(f"{mixin.__name__}{client.__name__}", (mixin, client), {})
        fetcher: HttpClient = mixed(config)
        return fetcher

    monkeypatch.setattr(node_module, "open_fetcher", opened)


def politeness_violations(
    log: Iterable[LoggedRequest],
    delay_for: dict[str, float],
    default_delay: float,
    sends: Sends | None = None,
) -> list[str]:
    """Per host (robots.txt included), from the server's log: a request that reached the
    server before the one before it was answered, or two requests that reached it closer
    than the host's delay (``short_gap``: arrivals, so a server that started a handler
    late, being busy, neither excuses nor causes a violation). With ``sends``
    (``record_sends``), the crawler's own send times closer than the delay are
    violations too."""
    by_host: dict[str, list[LoggedRequest]] = defaultdict(list)
    for r in log:
        by_host[r.host].append(r)
    problems = []
    if sends is not None and by_host and not sends:
        problems.append("no send time was recorded: record_sends is not in place")
    for host, reqs in by_host.items():
        reqs.sort(key=lambda r: r.arrival)
        delay = delay_for.get(host, default_delay)
        sent = _send_times(host, reqs, sends)
        for (a, sa), (b, sb) in itertools.pairwise(zip(reqs, sent, strict=True)):
            if b.arrival < a.end - 0.001:
                problems.append(f"{host}: {b.path} arrived before {a.path} was answered")
            gap = short_gap(a, b, delay)
            if gap is not None:
                late = f"handlers late {a.late or 0:.3f}s, {b.late or 0:.3f}s"
                problems.append(f"{host}: {a.path} -> {b.path} gap {gap:.3f}s < {delay}s ({late})")
            if sa is not None and sb is not None and sb - sa < delay - 0.001:
                problems.append(f"{host}: {a.path} -> {b.path} sent {sb - sa:.3f}s apart")
    return problems


def _send_times(host: str, reqs: list[LoggedRequest], sends: Sends | None) -> list[float | None]:
    """The crawler's send time of each of ``reqs`` (one host, in the server's order): the
    n-th request of a path to the n-th send of it; None when unknown."""
    if sends is None:
        return [None] * len(reqs)
    seen: dict[str, int] = defaultdict(int)
    out: list[float | None] = []
    for r in reqs:
        times = sends.get((host, r.path), [])
        i = seen[r.path]
        seen[r.path] += 1
        out.append(times[i] if i < len(times) else None)
    return out


def read_crawl_log(out: Path) -> list[dict[str, Any]]:
    path = out / "crawl.log.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def frontier_rows(out: Path) -> dict[str, tuple[int, float, str | None, int]]:
    """url -> (state, not_before, validators, fetches) of a crawl directory's SQLite
    frontier file, read without disturbing a node."""
    con = sqlite3.connect(f"file:{out / 'frontier.sqlite3'}?mode=ro", uri=True)
    try:
        rows = con.execute("SELECT url, state, not_before, validators, fetches FROM urls")
        return {r[0]: (r[1], r[2], r[3], r[4]) for r in rows}
    finally:
        con.close()
