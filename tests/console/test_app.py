"""The console's safety rules, each against the real application on loopback: a control
needs the console's own Origin, the token on an address other than loopback, a loopback
Host; a store password never reaches an answer or a log."""

from __future__ import annotations

import json
import logging
import stat
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer

from headway.console.app import TOKEN_FILE, ConsoleServer, Guard, make_app, store_token
from headway.console.sources import ControlDesk, DirSource, SharedSource, Source
from headway.control import CrawlRef, open_control_log
from headway.frontier.redis import RedisFrontier
from headway.frontier.sqlite import SqliteFrontier
from headway.frontier.store import UrlEntry
from headway.threads import ThreadWorker
from tests.support.redisproc import RedisServer

SECRET = "hunter2secret"


def _crawl_dir(root: Path) -> Path:
    """A crawl directory with an embedded frontier holding one queued URL."""
    root.mkdir()
    (root / "headway.json").write_text('{"format": 1}')
    frontier = SqliteFrontier(root / "frontier.sqlite3", node_id="n1")
    frontier.add([UrlEntry("http://a.test/", "a.test", 0, 0, 1)], now=0)
    frontier.close()
    return root


@pytest.fixture
async def worker() -> AsyncIterator[ThreadWorker]:
    w = ThreadWorker("console-test")
    yield w
    w.shutdown()


async def _client(source: Source, desk: ControlDesk, guard: Guard) -> TestClient[Any, Any]:
    client: TestClient[Any, Any] = TestClient(TestServer(make_app(source, desk, guard)))
    await client.start_server()
    return client


def _post(client: TestClient[Any, Any], headers: dict[str, str], kind: str = "pause") -> Any:
    base = {"Content-Type": "application/json"}
    return client.post("/api/control", data=json.dumps({"kind": kind}), headers=base | headers)


def _controls(directory: Path) -> list[str]:
    log = open_control_log(CrawlRef(directory=directory), read_only=True)
    try:
        return [str(c.kind) for c in log.read_after(0)]
    finally:
        log.close()


async def test_a_control_needs_the_consoles_own_origin(
    tmp_path: Path, worker: ThreadWorker
) -> None:
    crawl = _crawl_dir(tmp_path / "c")
    desk = ControlDesk(CrawlRef(directory=crawl), worker)
    client = await _client(DirSource(crawl, worker), desk, Guard(loopback=True, token=None))
    try:
        own = f"http://{client.host}:{client.port}"
        for headers in (
            {},  # no Origin: not from a page (a form elsewhere, a script)
            {"Origin": "http://evil.example"},
            {"Origin": f"http://{client.host}:{client.port + 1}"},
            {"Origin": own, "Sec-Fetch-Site": "cross-site"},
        ):
            answer = await _post(client, headers)
            assert answer.status == 403, headers
            assert "does not come from this console" in (await answer.json())["error"]
        assert _controls(crawl) == []  # nothing recorded
        answer = await _post(client, {"Origin": own})
        assert answer.status == 200, await answer.text()
        assert _controls(crawl) == ["pause"]
        # a control with a bad argument is a one-line refusal, not a record
        bad = await client.post(
            "/api/control",
            data=json.dumps({"kind": "opt-out", "args": {"domain": ""}}),
            headers={"Content-Type": "application/json", "Origin": own},
        )
        assert bad.status == 400 and "\n" not in (await bad.json())["error"]
        assert _controls(crawl) == ["pause"]
    finally:
        await client.close()
        await worker.call(desk.close)


async def test_off_loopback_a_control_needs_the_token(tmp_path: Path, worker: ThreadWorker) -> None:
    crawl = _crawl_dir(tmp_path / "c")
    desk = ControlDesk(CrawlRef(directory=crawl), worker)
    token = "t0ken-of-this-console"
    client = await _client(DirSource(crawl, worker), desk, Guard(loopback=False, token=token))
    try:
        own = {"Origin": f"http://{client.host}:{client.port}"}
        for headers in ({}, {"X-Headway-Token": "wrong"}, {"X-Headway-Token": token[:-1]}):
            answer = await _post(client, own | headers)
            assert answer.status == 403
            assert "needs its token" in (await answer.json())["error"]
        # the page without the token reads, and knows it is read-only
        state = await (await client.get("/api/state")).json()
        assert state["controls"]["token_required"] is True
        assert state["where"] == str(crawl)
        assert _controls(crawl) == []
        answer = await _post(client, own | {"X-Headway-Token": token}, kind="resume")
        assert answer.status == 200
        assert _controls(crawl) == ["resume"]
    finally:
        await client.close()
        await worker.call(desk.close)


async def test_on_loopback_only_a_loopback_host_is_answered(
    tmp_path: Path, worker: ThreadWorker
) -> None:
    crawl = _crawl_dir(tmp_path / "c")
    desk = ControlDesk(CrawlRef(directory=crawl), worker)
    client = await _client(DirSource(crawl, worker), desk, Guard(loopback=True, token=None))
    try:
        rebound = {"Host": f"attacker.example:{client.port}"}
        assert (await client.get("/api/state", headers=rebound)).status == 403
        origin = {"Origin": f"http://attacker.example:{client.port}"}
        assert (await _post(client, rebound | origin)).status == 403
        assert _controls(crawl) == []
        page = await client.get("/", headers={"Host": f"localhost:{client.port}"})
        assert page.status == 200
        csp = page.headers["Content-Security-Policy"]
        assert "default-src 'none'" in csp and "frame-ancestors 'none'" in csp
    finally:
        await client.close()
        await worker.call(desk.close)


def test_a_console_off_loopback_makes_a_token_stored_for_its_owner_only(tmp_path: Path) -> None:
    worker = ThreadWorker("console-test")
    try:
        crawl = _crawl_dir(tmp_path / "c")
        server = ConsoleServer(
            DirSource(crawl, worker),
            ControlDesk(None, worker),
            host="192.0.2.10",
            port=8787,
            token_dir=crawl,
        )
        assert server.token and len(server.token) >= 24
        server.store_token()
        path = crawl / TOKEN_FILE
        assert path.read_text().strip() == server.token
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        loop = ConsoleServer(DirSource(crawl, worker), ControlDesk(None, worker), token_dir=crawl)
        assert loop.token is None  # 127.0.0.1 by default: no token
        # a token file left world-readable by an earlier run is made private again
        path.chmod(0o644)
        store_token("again", crawl)
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    finally:
        worker.shutdown()


async def test_a_store_password_reaches_no_answer_and_no_log(
    redis_server: RedisServer,
    tmp_path: Path,
    worker: ThreadWorker,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    secret_url = f"redis://:{SECRET}@127.0.0.1:{redis_server.port}/0"
    crawl = "console-secret"
    frontier = RedisFrontier(secret_url, crawl, "n1", shards=4)
    frontier.add([UrlEntry("http://a.test/", "a.test", 0, 0, 1)], now=0)
    frontier.publish_console(
        json.dumps(
            {"node": "n1", "time": 1.0, "running": True, "crawl": {"store": frontier.store_url}}
        ).encode(),
        30,
    )
    answers: list[str] = []
    for url, crawl_id in (
        (secret_url, crawl),  # the crawl
        (secret_url, "no-such-crawl"),  # an error naming the store
        (f"redis://:{SECRET}@127.0.0.1:1/0", crawl),  # an unreachable store
    ):
        source = SharedSource(url, crawl_id, worker)
        desk = ControlDesk(CrawlRef(store=url, crawl_id=crawl_id), worker)
        client = await _client(source, desk, Guard(loopback=True, token=None))
        try:
            own = {"Origin": f"http://{client.host}:{client.port}"}
            for answer in (
                await client.get("/"),
                await client.get("/static/console.js"),
                await client.get("/api/state"),
                await client.get("/api/hosts?q=a"),
                await _post(client, own),
            ):
                answers.append(await answer.text())
        finally:
            await client.close()
            await worker.call(desk.close)
            await worker.call(source.close)
    frontier.close()
    assert any(":***@" in a for a in answers), "the store is named, masked"
    assert any("no crawl 'no-such-crawl'" in a for a in answers)
    for text in [*answers, caplog.text]:
        assert SECRET not in text


async def test_host_search_is_bounded_and_checks_its_arguments(
    tmp_path: Path, worker: ThreadWorker
) -> None:
    crawl = _crawl_dir(tmp_path / "c")
    desk = ControlDesk(CrawlRef(directory=crawl), worker)
    client = await _client(DirSource(crawl, worker), desk, Guard(loopback=True, token=None))
    try:
        found = await (await client.get("/api/hosts?q=A.TE&limit=100000")).json()
        assert found["limit"] == 500  # bounded
        assert [h["host"] for h in found["hosts"]] == ["a.test"]  # any case, from the file
        assert found["hosts"][0]["queued"] == 1
        for query in ("sort=queued%3B", "limit=many"):
            answer = await client.get(f"/api/hosts?{query}")
            assert answer.status == 400 and "\n" not in (await answer.json())["error"]
    finally:
        await client.close()
        await worker.call(desk.close)


def test_headway_console_refuses_what_is_not_a_crawl_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from headway.cli import main

    assert main(["console"]) == 2
    assert main(["console", str(tmp_path)]) == 2
    assert main(["console", str(tmp_path), "--port", "70000"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        "headway: error: give a crawl directory, or --store and --crawl-id of a shared crawl",
        f"headway: error: {tmp_path} is not a headway crawl directory",
        "headway: error: --port must be in 0..65535",
    ]


@pytest.mark.parametrize("host", ["0.0.0.0", "::"])
async def test_a_console_on_every_interface_needs_the_token(
    host: str, tmp_path: Path, worker: ThreadWorker
) -> None:
    """Bound to every interface (the unspecified address) the console is reachable from
    other machines: controls need the token as on any address other than loopback,
    even from a client that says ``Host: localhost`` (a Host check is no defence)."""
    crawl = _crawl_dir(tmp_path / "c")
    desk = ControlDesk(CrawlRef(directory=crawl), worker)
    server = ConsoleServer(DirSource(crawl, worker), desk, host=host, port=0, token_dir=crawl)
    assert server.token is not None and len(server.token) >= 24
    # the server's application, served here on loopback: no interface but 127.0.0.1
    client: TestClient[Any, Any] = TestClient(TestServer(server.app))
    await client.start_server()
    try:
        local = {"Host": f"localhost:{client.port}", "Origin": f"http://localhost:{client.port}"}
        for headers in (local, local | {"X-Headway-Token": "not-the-token"}):
            answer = await _post(client, headers)
            assert answer.status == 403, await answer.text()
            assert "needs its token" in (await answer.json())["error"]
        state = await (await client.get("/api/state", headers=local)).json()
        assert state["controls"]["token_required"] is True
        assert _controls(crawl) == []
        answer = await _post(client, local | {"X-Headway-Token": server.token})
        assert answer.status == 200, await answer.text()
        assert _controls(crawl) == ["pause"]
    finally:
        await client.close()
        await worker.call(desk.close)


async def test_a_control_body_that_is_not_json_is_refused_from_the_right_origin(
    tmp_path: Path, worker: ThreadWorker
) -> None:
    """A control from the console's own page with a body that is not JSON is refused
    and records nothing: a form post or ``text/plain`` (what a page elsewhere can send
    without asking first) by its type, a JSON type over other bytes by its body."""
    crawl = _crawl_dir(tmp_path / "c")
    desk = ControlDesk(CrawlRef(directory=crawl), worker)
    client = await _client(DirSource(crawl, worker), desk, Guard(loopback=True, token=None))
    try:
        own = {"Origin": f"http://{client.host}:{client.port}"}
        pause = json.dumps({"kind": "pause"})
        for content_type, body in (
            ("text/plain", pause),  # JSON bytes, but not sent as JSON
            ("application/x-www-form-urlencoded", "kind=pause"),
            ("multipart/form-data; boundary=x", pause),
            ("application/jsonp", pause),
        ):
            headers = own | {"Content-Type": content_type}
            answer = await client.post("/api/control", data=body, headers=headers)
            assert answer.status == 403, (content_type, await answer.text())
            assert (await answer.json())["error"] == "control refused: the body must be JSON"
        for body in ("kind=pause", "{'kind': 'pause'}", "", "\xff"):
            answer = await client.post(
                "/api/control", data=body, headers=own | {"Content-Type": "application/json"}
            )
            assert answer.status == 400, (body, await answer.text())
            assert (await answer.json())["error"] == "the body is not JSON"
        assert _controls(crawl) == []
        answer = await _post(client, own)
        assert answer.status == 200
        assert _controls(crawl) == ["pause"]
    finally:
        await client.close()
        await worker.call(desk.close)


async def test_every_api_answer_is_not_cached_refusals_included(
    tmp_path: Path, worker: ThreadWorker
) -> None:
    """``Cache-Control: no-store`` on every API answer: what a crawl shows and every
    refusal (a wrong Host, a control refused, a bad argument, no such route, a wrong
    method, a body too large), so that no cache keeps a view or a token's answer."""
    from headway.console.app import MAX_BODY

    crawl = _crawl_dir(tmp_path / "c")
    desk = ControlDesk(CrawlRef(directory=crawl), worker)
    client = await _client(DirSource(crawl, worker), desk, Guard(loopback=True, token="tok"))
    try:
        own = {"Origin": f"http://{client.host}:{client.port}"}
        good = own | {"X-Headway-Token": "tok"}
        answers = {
            "state": await client.get("/api/state"),
            "hosts": await client.get("/api/hosts?q=a"),
            "hosts, bad sort": await client.get("/api/hosts?sort=nope"),
            "wrong Host": await client.get("/api/state", headers={"Host": "elsewhere.example"}),
            "no Origin": await _post(client, {"X-Headway-Token": "tok"}),
            "no token": await _post(client, own),
            "not JSON": await client.post(
                "/api/control", data="x", headers=good | {"Content-Type": "application/json"}
            ),
            "bad control": await _post(client, good, kind="no-such-control"),
            "control": await _post(client, good),
            "no such route": await client.get("/api/nothing-here"),
            "wrong method": await client.get("/api/control"),
            "too large": await client.post(
                "/api/control",
                data="[" + " " * (MAX_BODY + 1) + "]",
                headers=good | {"Content-Type": "application/json"},
            ),
        }
        statuses = {name: a.status for name, a in answers.items()}
        assert statuses == {
            "state": 200,
            "hosts": 200,
            "hosts, bad sort": 400,
            "wrong Host": 403,
            "no Origin": 403,
            "no token": 403,
            "not JSON": 400,
            "bad control": 400,
            "control": 200,
            "no such route": 404,
            "wrong method": 405,
            "too large": 413,
        }
        for name, answer in answers.items():
            assert answer.headers.get("Cache-Control") == "no-store", name
            assert answer.content_type == "application/json", name
    finally:
        await client.close()
        await worker.call(desk.close)
