"""Small mistakes get small answers: bare ``headway``, an unknown flag, a hidden command,
the commands' descriptions, errors naming the flag that was typed, a User-Agent on two
lines, output whose reader went away, a console on every interface."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest

from headway.cli import main
from headway.cli.parsers import BENCH_CHILD, COMMANDS, build_parser
from headway.frontier.sqlite import SqliteFrontier
from headway.frontier.store import UrlEntry

UA = "bot/1.0 (+https://example.org/bot)"


def _subcommands() -> tuple[dict[str, argparse.ArgumentParser], dict[str, str]]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    helps = {c.dest: c.help or "" for c in sub._choices_actions}
    return dict(sub.choices), helps


def test_bare_headway_prints_the_usage_and_every_command_without_an_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main([]) == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: headway")
    assert "error" not in err
    for name in COMMANDS:
        assert f"\n    {name}" in err, name


def test_an_unknown_crawl_flag_shows_the_crawl_usage_and_the_flag_meant(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["crawl", "seeds.txt", "--user-agent", UA, "--max-page", "5"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: headway crawl SEEDS")
    assert "headway crawl: error: unrecognized arguments: --max-page 5" in err
    assert "(did you mean --max-pages?)" in err
    assert len(err.splitlines()) <= 3  # the short usage, not 40 lines of settings


def test_the_internal_command_is_neither_listed_nor_offered(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        main(["frobnicate"])
    err = capsys.readouterr().err
    assert "invalid choice: 'frobnicate'" in err and "'bench'" in err
    assert BENCH_CHILD not in err
    choices, _ = _subcommands()
    assert BENCH_CHILD not in choices
    assert list(choices) == list(COMMANDS)
    # and it still runs, for headway bench's measured process
    from headway.cli.commands import _parse

    parsed = _parse([BENCH_CHILD, '{"x": 1}'])
    assert isinstance(parsed, argparse.Namespace)
    assert parsed.command == BENCH_CHILD and parsed.config == '{"x": 1}'


def test_every_command_is_described_in_one_style() -> None:
    """The list's help: a lower-case verb phrase without a full stop; the command's own
    description: sentences, capital first, full stop last."""
    choices, helps = _subcommands()
    for name, sub in choices.items():
        short = helps[name]
        assert short and short[0].islower() and not short.endswith("."), (name, short)
        text = sub.description or ""
        assert text[:1].isupper() and text.endswith("."), (name, text)


def test_a_bad_flag_value_is_named_by_the_flag_typed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("example.org\n")
    monkeypatch.chdir(tmp_path)
    assert main(["crawl", str(seeds), "--user-agent", UA, "--delay", "-1"]) == 2
    err = capsys.readouterr().err
    assert err.strip() == "headway: error: --delay: must be from 0 to 3600; got -1.0"
    assert main(["crawl", str(seeds), "--user-agent", "nobody"]) == 2
    assert capsys.readouterr().err.startswith("headway: error: --user-agent: 'nobody' carries")
    # from a settings file the key is named, as the file spells it
    cfg = tmp_path / "c.toml"
    cfg.write_text("[politeness]\ndelay = -1\n")
    assert main(["crawl", str(seeds), "--user-agent", UA, "--config", str(cfg)]) == 2
    assert "headway: error: politeness.delay: must be from 0 to 3600" in capsys.readouterr().err


def test_a_user_agent_with_a_line_break_is_refused_at_start(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("http://127.0.0.1:9/\n")  # (were it not refused: a closed port)
    monkeypatch.chdir(tmp_path)
    for ua in (UA + "\nX-Injected: 1", UA + "\r", "bot/1.0\x00 (+https://example.org/bot)"):
        assert main(["crawl", str(seeds), "--user-agent", ua, "--max-duration", "3"]) == 2
        err = capsys.readouterr().err
        assert err.startswith("headway: error: --user-agent: contains "), err
        assert "no HTTP header may carry" in err
    assert not (tmp_path / "crawl").exists()  # refused before the crawl directory


def _crawl_dir(root: Path) -> Path:
    root.mkdir()
    (root / "headway.json").write_text('{"format": 2}')
    frontier = SqliteFrontier(root / "frontier.sqlite3", node_id="n1")
    frontier.add([UrlEntry(f"http://a.test/{i}", "a.test", 0, 0, i + 1) for i in range(3)], 0)
    frontier.close()
    return root


@pytest.mark.parametrize("command", ["status", "report"])
def test_output_whose_reader_went_away_ends_quietly(tmp_path: Path, command: str) -> None:
    """``headway report DIR | head``: the reader closed the pipe before the output was
    written. No message, no traceback, nothing in the crawl's error.log."""
    crawl = _crawl_dir(tmp_path / "c")
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first byte
    try:
        done = subprocess.run(
            [sys.executable, "-m", "headway.cli", command, str(crawl)],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
        )
    finally:
        os.close(write_end)
    assert done.stderr == ""
    assert done.returncode == 141
    assert not (crawl / "error.log").exists()


def test_a_console_on_every_interface_prints_an_address_one_can_open(tmp_path: Path) -> None:
    import socket

    from headway.console.app import ConsoleServer
    from headway.console.sources import ControlDesk, DirSource
    from headway.threads import ThreadWorker

    worker = ThreadWorker("console-url")
    try:
        crawl = _crawl_dir(tmp_path / "c")
        for host in ("0.0.0.0", "::"):
            server = ConsoleServer(
                DirSource(crawl, worker), ControlDesk(None, worker), host=host, port=8999
            )
            name = socket.gethostname()
            shown = f"[{name}]" if ":" in name else name
            assert server.url == f"http://{shown}:8999/"
            assert server.token is not None  # every interface is not loopback
        loop = ConsoleServer(DirSource(crawl, worker), ControlDesk(None, worker), port=8999)
        assert loop.url == "http://127.0.0.1:8999/"
    finally:
        worker.shutdown()


def test_the_live_line_says_what_paused_the_crawl_and_what_resumes_it() -> None:
    from headway.cli.progress import progress_text
    from headway.runtime.stats import NodeStats, SchedulerStats

    def line(*reasons: str) -> str:
        sch = SchedulerStats(paused=True, paused_for=reasons)
        return progress_text(NodeStats(scheduler=sch), 200)

    assert "PAUSED (headway resume continues)" in line("control")
    assert "SIGUSR1" not in line("control")
    assert "PAUSED (quota): SIGUSR1 resumes" in line("quota")
    both = line("control", "quota")
    assert "PAUSED (control, quota): headway resume continues and SIGUSR1 resumes" in both
    assert "PAUSED" not in progress_text(NodeStats(), 200)


async def test_the_scheduler_reports_why_it_is_paused(tmp_path: Path) -> None:
    from headway.policy.politeness import HostLimitParams
    from headway.policy.robots import RobotsCache
    from headway.runtime.scheduler import Scheduler
    from headway.threads import ThreadWorker

    frontier = SqliteFrontier(tmp_path / "f.sqlite3", node_id="n1")
    worker = ThreadWorker("pause-test")
    try:

        async def skip(*_: object) -> None:
            return None

        s = Scheduler(
            frontier,
            worker,
            limits=HostLimitParams(min_gap=1.0, ceiling=1),
            robots=RobotsCache(),
            robots_ttl=3600,
            crawl_delay_max=30,
            lease_seconds=60,
            optout=None,
            on_skip=skip,
            user_agent=UA,
        )
        s.pause("control")
        assert s.statistics().paused_for == ("control",)
        s.pause("quota")
        s.resume("control")
        assert s.statistics().paused_for == ("quota",) and s.statistics().paused
    finally:
        worker.shutdown()
        frontier.close()


def test_status_says_paused_and_an_index_left_unsorted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    crawl = _crawl_dir(tmp_path / "c")
    (crawl / "index.cdxj").write_text("org,b)/ 2026 {}\norg,a)/ 2026 {}\n")  # capture order
    assert main(["pause", str(crawl)]) == 0
    capsys.readouterr()
    assert main(["status", str(crawl)]) == 0
    out = capsys.readouterr().out
    assert "stopped with 3 URLs left" in out
    assert "paused by a control: it starts paused, headway resume continues it" in out
    assert "index         index.cdxj not sorted: the crawl stopped without closing" in out
    assert "queued 3, leased 0," in out and "in flight" not in out
    (crawl / "index.cdxj").write_text("org,a)/ 2026 {}\norg,b)/ 2026 {}\n")
    assert main(["resume", str(crawl)]) == 0
    capsys.readouterr()
    assert main(["status", str(crawl)]) == 0
    out = capsys.readouterr().out
    assert "  index " not in out and "paused by" not in out
