"""The control commands and ``headway report`` as a person types them: one line per
control recorded, one ``headway: error:`` line and exit status 2 for anything wrong."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from headway.cli import main
from headway.control.log import ControlKind
from headway.control.target import CrawlRef, open_control_log
from headway.frontier.redis import RedisFrontier
from headway.frontier.sqlite import SqliteFrontier
from tests.support.redisproc import RedisServer


@pytest.fixture
def crawl_dir(tmp_path: Path) -> Path:
    d = tmp_path / "crawl"
    d.mkdir()
    (d / "headway.json").write_text(json.dumps({"format": 1, "node_id": "node-a"}))
    SqliteFrontier(d / "frontier.sqlite3", node_id="node-a").close()
    return d


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    got = capsys.readouterr()
    return code, got.out, got.err


def test_each_control_prints_one_line_and_is_recorded(
    crawl_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = str(crawl_dir)
    code, out, _ = run(["pause", d], capsys)
    assert code == 0 and out.count("\n") == 1
    assert out.startswith("recorded #1 pause (every node) by cli ") and f"in {d}" in out
    assert "no node runs there now" in out
    assert run(["stop", d, "--node", "node-a"], capsys)[1].startswith(
        "recorded #2 stop node node-a"
    )
    code, out, _ = run(["opt-out", d, "Example.ORG", "shop.example.net"], capsys)
    assert code == 0 and [x.split(" by ")[0] for x in out.splitlines()] == [
        "recorded #3 opt-out example.org",
        "recorded #4 opt-out shop.example.net",
    ]
    out = run(["host", d, "WWW.example.com:8080", "--delay", "2.5", "--budget", "9"], capsys)[1]
    assert out.startswith("recorded #5 host-override www.example.com:8080: delay 2.5, budget 9")
    assert run(["host", d, "www.example.com:8080", "--clear"], capsys)[0] == 0
    assert run(["seed", d, "https://new.example/", "other.example"], capsys)[0] == 0
    log = open_control_log(CrawlRef(crawl_dir))
    try:
        got = [(c.kind, c.node, dict(c.args)) for c in log.read_after(0)]
    finally:
        log.close()
    assert got == [
        (ControlKind.PAUSE, None, {}),
        (ControlKind.STOP, "node-a", {}),
        (ControlKind.OPT_OUT, None, {"domain": "example.org"}),
        (ControlKind.OPT_OUT, None, {"domain": "shop.example.net"}),
        (
            ControlKind.HOST_OVERRIDE,
            None,
            {"host": "www.example.com:8080", "delay": 2.5, "budget": 9},
        ),
        (ControlKind.HOST_CLEAR, None, {"host": "www.example.com:8080"}),
        (ControlKind.ADD_SEEDS, None, {"urls": ["https://new.example/", "other.example"]}),
    ]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["pause", "{tmp}/none"], "no crawl at {tmp}/none: not a directory"),
        (["pause", "{tmp}"], "not a headway crawl directory"),
        (["pause"], "give a crawl directory, or --store and --crawl-id"),
        (["pause", "{dir}", "--node", "node-b"], "the node of {dir} is node-a, not node-b"),
        (["seed", "{dir}"], "give a crawl directory and then what to seed"),
        (["seed", "{dir}", "ftp://x.example/"], "not an http or https URL"),
        (["opt-out", "{dir}", "not a domain"], "opt-out needs a domain"),
        (["host", "{dir}", "a.example"], "give --delay, --budget and/or --concurrency"),
        (["host", "{dir}", "a.example", "--exclude", "--delay", "1"], "or --exclude, or --clear"),
        (["host", "{dir}", "a.example", "b.example", "--exclude"], "name one host"),
        (["host", "{dir}", "a.example", "--delay", "-1"], "delay must be from 0"),
        (["pause", "--store", "redis://127.0.0.1:1/0"], "needs --crawl-id"),
        (["pause", "{dir}", "--store", "redis://h:1/0", "--crawl-id", "c"], "not both"),
        (["report", "{tmp}"], "not a headway crawl directory"),
        (["report", "{dir}", "--politeness", "--format", "csv"], "text or JSON (--json)"),
        (
            ["report", "--politeness", "--store", "redis://127.0.0.1:1/0", "--crawl-id", "c"],
            "give them with --logs DIR",
        ),
    ],
)
def test_mistakes_are_one_line_and_exit_2(
    argv: list[str],
    message: str,
    crawl_dir: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("HEADWAY_STORE", raising=False)
    monkeypatch.delenv("HEADWAY_CRAWL_ID", raising=False)
    fill = {"tmp": str(crawl_dir.parent), "dir": str(crawl_dir)}
    code, out, err = run([a.format(**fill) for a in argv], capsys)
    assert code == 2 and out == ""
    assert err.startswith("headway: error: ") and err.count("\n") == 1
    assert message.format(**fill) in err


def test_an_unreachable_store_is_named_with_its_password_masked(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["resume", "--store", "redis://:s3cret@127.0.0.1:1/0", "--crawl-id", "c"]
    code, out, err = run(argv, capsys)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "s3cret" not in err and "redis://:***@127.0.0.1:1/0" in err


def test_help_lists_the_control_commands(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    text = capsys.readouterr().out
    for name in ("pause", "resume", "stop", "seed", "opt-out", "host", "report"):
        assert name in text


def test_a_shared_crawl_says_which_nodes_are_live(
    redis_server: RedisServer, capsys: pytest.CaptureFixture[str]
) -> None:
    crawl = "cmd-live"
    node = RedisFrontier(redis_server.url, crawl, "node-a", shards=4, handover_gap=0.0)
    shared = ["--store", redis_server.url, "--crawl-id", crawl]
    try:
        wait = time.monotonic() + 10
        while not run(["pause", *shared], capsys)[1].endswith(f"{redis_server.url}\n"):
            assert time.monotonic() < wait, "the node never showed as live"
            time.sleep(0.1)
        out = run(["stop", *shared, "--node", "node-b"], capsys)[1]
        assert "(node node-b is not live now; live: node-a)" in out
    finally:
        node.close()
    out = run(["resume", *shared], capsys)[1]
    assert out.endswith("(no live node now: it applies when nodes run)\n")
    assert run(["pause", "--store", redis_server.url, "--crawl-id", "other"], capsys)[2] == (
        f"headway: error: no crawl 'other' in {redis_server.url}\n"
    )


def test_a_host_control_names_the_host_as_the_crawl_keys_it(tmp_path: Path) -> None:
    """``headway host Example.ORG. ...`` records ``example.org``: the crawl's host keys
    are lower case without a trailing dot, so the control reaches the host."""
    from headway.cli.control import _wants
    from headway.control.log import ControlKind

    class Args:
        delay, budget, concurrency, exclude, clear = 2.0, None, None, False, False

    ((kind, args),) = _wants("host", Args(), [" Example.ORG. "])  # type: ignore[arg-type]
    assert kind is ControlKind.HOST_OVERRIDE and args["host"] == "example.org"
