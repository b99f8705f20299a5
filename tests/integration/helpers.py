"""Shared pieces of the integration crawls: settings for crawling the simulated web, a
simulated web served from a background thread (for crawls run as subprocesses), and the
politeness check made from the server's own request log."""

from __future__ import annotations

import asyncio
import itertools
import json
import threading
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from headway.settings import Settings, build_settings
from headway.testing.argv import headway_argv
from headway.testing.simweb import LoggedRequest, SimWeb, SimWebSpec

UA = "testbot/1.0 (+https://example.org/testbot)"
TOKEN = "testbot"

#: Request starts are logged by the server, after loopback transit; two requests sent
#: exactly ``delay`` apart can arrive a little closer. This is the transit allowance.
TRANSIT_SLACK = 0.03


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


def politeness_violations(
    log: Iterable[LoggedRequest], delay_for: dict[str, float], default_delay: float
) -> list[str]:
    """Per host (robots.txt included): requests overlapping, or starts closer than the
    host's delay (minus the transit allowance)."""
    by_host: dict[str, list[LoggedRequest]] = defaultdict(list)
    for r in log:
        by_host[r.host].append(r)
    problems = []
    for host, reqs in by_host.items():
        reqs.sort(key=lambda r: r.start)
        delay = delay_for.get(host, default_delay)
        for a, b in itertools.pairwise(reqs):
            if b.start < a.end - 0.001:
                problems.append(f"{host}: {b.path} started before {a.path} ended")
            if b.start - a.start < delay - TRANSIT_SLACK:
                problems.append(
                    f"{host}: {a.path} -> {b.path} gap {b.start - a.start:.3f}s < {delay}s"
                )
    return problems


def read_crawl_log(out: Path) -> list[dict[str, Any]]:
    path = out / "crawl.log.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
