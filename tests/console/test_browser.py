"""The console as an operator uses it: a real headless chromium opens the page of a
crawl of the simulated web, reads its figures, presses Pause, Resume and Stop; the
server's own request log says whether fetching stopped and started again. Once for a
crawl on one node (``headway crawl --console-port``), once for a shared crawl of two
nodes on Redis (``headway console --store``, with a password in the store URL)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from headway.control.applier import STOPPED_BY_CONTROL
from headway.frontier.redis.connect import connect, parse_store_url
from headway.frontier.redis.counts import read_counts
from headway.frontier.redis.keys import CrawlKeys
from headway.testing.simweb import HostSpec, SimWeb, SimWebSpec
from tests.console.cdp import Browser, BrowserUnavailable, Page
from tests.integration.helpers import UA, ThreadedSimWeb, page_requests
from tests.support.argv import headway_argv
from tests.support.redisproc import RedisServer, free_port

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

SECRET = "hunter2secret"
#: --host-budget of the one-node crawl: reached within seconds (links are admitted
#: faster than pages are fetched)
BUDGET = 200
#: Seconds the server's log is watched for requests while the crawl is paused.
QUIET = 3.0


def _spec(links: int = 6) -> SimWebSpec:
    # enough pages that the crawl is still running when the test is done with it
    return SimWebSpec(hosts=4, host_spec=HostSpec(pages=400, links_per_page=links), seed=11)


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    try:
        b = await Browser().start()
    except BrowserUnavailable as exc:
        pytest.skip(f"the browser test needs chromium: {exc}")
    try:
        yield b
    finally:
        await b.close()


async def _api(port: int, path: str = "/api/state") -> Any:
    async with (
        aiohttp.ClientSession() as session,
        session.get(f"http://127.0.0.1:{port}{path}") as answer,
    ):
        return json.loads(await answer.text())


async def _wait_api(port: int, ok: Any, what: str, timeout: float = 40.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    state: dict[str, Any] = {}
    while time.monotonic() < deadline:
        try:
            state = await _api(port)
        except aiohttp.ClientError:
            state = {}
        if state and ok(state):
            return state
        await asyncio.sleep(0.3)
    raise AssertionError(f"the console never showed {what}: {json.dumps(state)[:800]}")


async def _number(page: Page, selector: str) -> int:
    return int((await page.text(selector)).replace(",", "").split()[0])


async def _next_refresh(page: Page) -> None:
    before = await page.evaluate("document.body.dataset.updated")
    await page.wait_for(f"document.body.dataset.updated !== {json.dumps(before)}", 10)


async def _pause_and_check_quiet(page: Page, web: SimWeb) -> int:
    """Press Pause, see the page say so, and no request reach the server for QUIET s;
    the number of page requests the server saw."""
    await page.press("#btn-pause")
    await page.wait_for("document.getElementById('state').textContent === 'paused'", 20)
    seen = len(web.log)
    await asyncio.sleep(QUIET)
    assert len(web.log) == seen, "requests reached the server while the crawl was paused"
    await _next_refresh(page)
    return len(page_requests(web.log))


async def _resume_and_check_fetching(page: Page, web: SimWeb) -> None:
    seen = len(web.log)
    await page.press("#btn-resume")
    deadline = time.monotonic() + 15
    while len(web.log) == seen:
        assert time.monotonic() < deadline, "no request reached the server after Resume"
        await asyncio.sleep(0.1)
    await page.wait_for("document.getElementById('state').textContent === 'running'", 20)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


async def test_one_node_console_in_a_browser(browser: Browser, tmp_path: Path) -> None:
    seeds = tmp_path / "seeds.txt"
    port = free_port()
    with ThreadedSimWeb(_spec(links=40)) as web:  # hosts reach BUDGET in a few pages
        seeds.write_text("\n".join(web.seeds()) + "\n")
        out = tmp_path / "crawl"
        argv = headway_argv(
            out,
            *("--delay", "0.25", "--console-port", str(port), "--host-budget", str(BUDGET)),
            user_agent=UA,
            seeds=seeds,
        )
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            await _wait_api(
                port, lambda s: s["state"] == "running" and s["now"]["pages"] >= 5, "pages"
            )
            page = await browser.new_page(1280, 900)
            await page.goto(f"http://127.0.0.1:{port}/")
            await page.wait_for("document.getElementById('state').textContent === 'running'")
            assert await page.evaluate("document.querySelectorAll('#nodes tr[data-node]').length")
            assert await page.evaluate("document.querySelectorAll('#hosts tbody tr').length") == 4

            # a host out of its budget is named with the flag
            await page.wait_for(
                "document.getElementById('host-problems').textContent"
                f".includes('reached --host-budget {BUDGET}')",
                10,
            )

            requested = await _pause_and_check_quiet(page, web)
            # the figures shown are the crawl's own (console.json in its directory) and
            # agree with the server: every page request it saw is a fetch of the node
            own = json.loads((out / "console.json").read_text())["stats"]
            assert await _number(page, "#now-pages") == own["frontier"]["done"]
            assert await _number(page, "#fr-queued") == own["frontier"]["queued"]
            assert await _number(page, "#now-errors") == own["errors"] == 0
            assert await _number(page, "#nodes tr[data-node] td:nth-child(4)") == requested
            assert own["fetches"] == requested
            assert await page.evaluate("document.getElementById('btn-pause').disabled") is False

            await _resume_and_check_fetching(page, web)
            log = await page.evaluate(
                "[...document.querySelectorAll('#controls tbody tr td:nth-child(3)')]"
                ".map(td => td.textContent)"
            )
            assert log[:2] == ["resume", "pause"]  # the control log, newest first

            await page.press("#btn-stop")  # its confirm() is accepted
            assert proc.wait(30) == 0
            final = json.loads((out / "console.json").read_text())
            assert (final["running"], final["stopped_by"]) == (False, STOPPED_BY_CONTROL)
            assert not [m for m in browser.console_messages if m.startswith("exception")]
        finally:
            _stop(proc)
            assert proc.stderr is not None
            err = proc.stderr.read().decode(errors="replace")
            proc.stderr.close()
        assert f"console on http://127.0.0.1:{port}/" in err
        # the finished crawl's directory, shown by headway console DIR
        port2 = free_port()
        shown = subprocess.Popen(
            [sys.executable, "-m", "headway.cli", "console", str(out), "--port", str(port2)],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        try:
            state = await _wait_api(port2, lambda s: bool(s["nodes"]), "the crawl directory")
            assert state["state"] == f"stopped ({STOPPED_BY_CONTROL})"
            assert state["now"]["pages"] == final["stats"]["frontier"]["done"]
            found = await _api(port2, "/api/hosts?q=sim&sort=host")
            hosts = sorted(f"{h}:{web.port}" for h in web.hosts)
            assert [h["host"] for h in found["hosts"]] == hosts  # from the frontier file
            assert all(h["admitted"] >= BUDGET for h in found["hosts"])
        finally:
            _stop(shown)
            assert shown.stdout is not None
            shown.stdout.close()


async def test_two_nodes_on_redis_in_a_browser(
    browser: Browser, redis_server: RedisServer, tmp_path: Path
) -> None:
    store = f"redis://:{SECRET}@127.0.0.1:{redis_server.port}/0"
    crawl = f"console-{int(time.time() * 1000)}"
    port = free_port()
    seeds = tmp_path / "seeds.txt"
    procs: dict[str, subprocess.Popen[bytes]] = {}
    with ThreadedSimWeb(_spec()) as web:
        seeds.write_text("\n".join(web.seeds()) + "\n")
        flags = ("--delay", "0.2", "--shards", "8")
        try:
            for name, seed_file in (("a", seeds), ("b", None)):
                argv = headway_argv(
                    tmp_path / name,
                    *flags,
                    user_agent=UA,
                    seeds=seed_file,
                    store=store,
                    crawl_id=crawl,
                )
                procs[name] = subprocess.Popen(
                    argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
                )
            console = [sys.executable, "-m", "headway.cli", "console", "--store", store]
            console += ["--crawl-id", crawl, "--port", str(port)]
            procs["console"] = subprocess.Popen(
                console, stdout=subprocess.PIPE, stderr=subprocess.PIPE
            )
            state = await _wait_api(
                port,
                lambda s: (
                    sum(n["running"] and bool(n["shards_held"]) for n in s["nodes"]) == 2
                    and s["now"]["pages"] >= 5
                ),
                "two running nodes holding shards",
            )
            assert ":***@" in state["where"]
            page = await browser.new_page(1280, 900)
            await page.goto(f"http://127.0.0.1:{port}/")
            await page.wait_for(
                "document.querySelectorAll('#nodes tr[data-node]').length === 2"
                " && document.getElementById('state').textContent === 'running'",
                20,
            )
            rows = await page.evaluate(
                "[...document.querySelectorAll('#nodes tr[data-node]')].map(r => ["
                "r.dataset.node, r.children[1].textContent, r.children[7].textContent])"
            )
            node_ids = {
                json.loads((tmp_path / n / "headway.json").read_text())["node_id"]
                for n in ("a", "b")
            }
            assert {r[0] for r in rows} == node_ids  # a row per node
            assert all(r[1] == "running" and int(r[2]) > 0 for r in rows)  # shards held

            requested = await _pause_and_check_quiet(page, web)
            fetches = await page.evaluate(
                "[...document.querySelectorAll('#nodes tr[data-node] td:nth-child(4)')]"
                ".map(td => Number(td.textContent.replace(/,/g, '')))"
            )
            assert sum(fetches) == requested  # the server saw each node's fetches
            client: Any = connect(parse_store_url(store))
            try:
                counts = read_counts(client, CrawlKeys(crawl), 8)
            finally:
                client.close()
            assert await _number(page, "#fr-queued") == counts.queued
            assert await _number(page, "#now-pages") == counts.fetched

            await _resume_and_check_fetching(page, web)
            html = await page.evaluate("document.documentElement.outerHTML")
            answers = [
                html,
                json.dumps(await _api(port)),
                json.dumps(await _api(port, "/api/hosts?q=sim")),
            ]
            await page.press("#btn-stop")
            assert procs["a"].wait(30) == 0 and procs["b"].wait(30) == 0
        finally:
            for proc in procs.values():
                _stop(proc)
        outputs = []
        for proc in procs.values():
            for stream in (proc.stdout, proc.stderr):
                if stream is not None:
                    outputs.append(stream.read().decode(errors="replace"))
                    stream.close()
        for text in answers + outputs:
            assert SECRET not in text


async def test_a_page_without_the_token_is_read_only(browser: Browser, tmp_path: Path) -> None:
    # a console that needs a token (as off loopback), served on loopback for the test
    from headway.console.app import Guard, make_app
    from headway.console.sources import ControlDesk, DirSource
    from headway.control import CrawlRef, open_control_log
    from headway.threads import ThreadWorker
    from tests.console.test_app import _crawl_dir

    crawl = _crawl_dir(tmp_path / "c")
    worker = ThreadWorker("console-test")
    desk = ControlDesk(CrawlRef(directory=crawl), worker)
    token = "the-console-token-0123456789"
    app = make_app(DirSource(crawl, worker), desk, Guard(loopback=False, token=token))
    from aiohttp.test_utils import TestServer

    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    try:
        page = await browser.new_page(1280, 900)
        await page.goto(f"http://127.0.0.1:{server.port}/")
        await page.wait_for("document.body.dataset.updated", 15)
        assert await page.evaluate("document.getElementById('btn-pause').disabled") is True
        assert "Read-only" in await page.text("#controls-note")
        # the API refuses what a page without the token would send
        status = await page.evaluate(
            "fetch('/api/control', {method: 'POST', headers: {'Content-Type': "
            "'application/json'}, body: JSON.stringify({kind: 'pause'})}).then(r => r.status)"
        )
        assert status == 403
        # opened with the printed address: the token comes from the fragment
        page = await browser.new_page(1280, 900)  # a new tab, as a person pastes it
        await page.goto(f"http://127.0.0.1:{server.port}/#token={token}")
        await page.wait_for("!document.getElementById('btn-pause').disabled", 15)
        assert await page.evaluate("location.hash") == ""  # not left in the address bar
        await page.press("#btn-pause")
        await page.wait_for("document.querySelectorAll('#controls tbody tr').length === 1", 15)
        log = open_control_log(CrawlRef(directory=crawl), read_only=True)
        try:
            assert [str(c.kind) for c in log.read_after(0)] == ["pause"]
        finally:
            log.close()
    finally:
        await server.close()
        await worker.call(desk.close)
        worker.shutdown()
