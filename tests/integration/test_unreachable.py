"""A crawl that reaches nothing says so: each unreachable host is named once with why and
what to do, counted as an error, listed in the summary, and a crawl that reached no host
of its seeds ends by itself with its own exit code."""

from __future__ import annotations

import json
import logging
import socket
import subprocess
from pathlib import Path
from typing import Any

import pytest
from aiohttp.abc import AbstractResolver, ResolveResult

from headway.cli.commands import EXIT_UNREACHABLE, asyncio_run_crawl
from headway.fetch import resolver as resolver_module
from headway.testing.simweb import HostSpec, SimWebSpec
from tests.integration.helpers import UA, ThreadedSimWeb, crawl_settings, page_requests

pytestmark = pytest.mark.slow

#: Short robots.txt retries: an unreachable host is given up after three tries.
FAST_GIVE_UP: dict[str, Any] = {
    "robots_retry_base": 0.05,
    "robots_give_up": 3,
    "max_duration": 60,
    "quiet": True,
}


class NoSuchName(AbstractResolver):
    """The system resolver's answer for a name that does not exist, for every name."""

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    async def close(self) -> None:
        return None


def _spec() -> SimWebSpec:
    return SimWebSpec(hosts=1, host_spec=HostSpec(pages=3, links_per_page=2), seed=3)


def _unreachable_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "unreachable:" in r.getMessage()]


def _printed(capsys: pytest.CaptureFixture[str]) -> str:
    """What the crawl printed, its lines (wrapped to the terminal) joined."""
    return " ".join(capsys.readouterr().out.split())


def _last_metrics(out: Path) -> dict[str, Any]:
    lines = (out / "metrics.jsonl").read_text().splitlines()
    return dict(json.loads(lines[-1]))


def test_a_name_that_does_not_resolve(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(resolver_module, "DefaultResolver", NoSuchName)
    caplog.set_level(logging.WARNING)
    out = tmp_path / "c"
    code = asyncio_run_crawl(
        crawl_settings(out, **FAST_GIVE_UP), ["https://intranet.example/"], None
    )
    assert code == EXIT_UNREACHABLE
    warned = _unreachable_warnings(caplog)
    assert len(warned) == 1, warned  # once, the first time, not at every retry
    assert "intranet.example" in warned[0] and "does not resolve" in warned[0]
    assert "--resolve HOST=ADDRESS" in warned[0]
    printed = _printed(capsys)
    assert "no host of the seeds could be reached" in printed
    assert "unreachable hosts 1: intranet.example (the name does not resolve" in printed
    # a name that does not exist is final: one robots.txt try, shown live
    assert _last_metrics(out)["errors"] == 1


def test_a_plain_http_port_given_as_https(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    caplog.set_level(logging.WARNING)
    out = tmp_path / "c"
    with ThreadedSimWeb(_spec()) as web:
        seed = web.seeds()[0].replace("http://", "https://")
        code = asyncio_run_crawl(crawl_settings(out, **FAST_GIVE_UP), [seed], None)
        assert not page_requests(web.log)
    assert code == EXIT_UNREACHABLE
    warned = _unreachable_warnings(caplog)
    assert len(warned) == 1, warned
    assert web.hosts[0] in warned[0]
    assert "plain HTTP, not TLS" in warned[0] and "http://" in warned[0]
    assert "unreachable hosts 1:" in _printed(capsys)


def test_one_reachable_seed_host_is_enough(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(resolver_module, "DefaultResolver", NoSuchName)
    out = tmp_path / "c"
    with ThreadedSimWeb(_spec()) as web:
        seeds = [web.seeds()[0], "https://intranet.example/"]
        code = asyncio_run_crawl(crawl_settings(out, **FAST_GIVE_UP), seeds, None)
        assert page_requests(web.log)
    assert code == 0
    printed = _printed(capsys)
    assert "unreachable hosts 1: intranet.example" in printed
    assert "no host of the seeds" not in printed


def _closed_port() -> int:
    """A loopback port nothing listens on (bound, then closed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_refused_port_ends_the_crawl_with_its_exit_code(tmp_path: Path) -> None:
    from tests.support.argv import headway_argv

    seeds = tmp_path / "seeds.txt"
    seeds.write_text(f"http://dead.sim:{_closed_port()}/\n")
    argv = headway_argv(tmp_path / "c", user_agent=UA, seeds=seeds)
    argv += ["--robots-retry-base", "0.05", "--robots-give-up", "3", "--max-duration", "60"]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert proc.returncode == EXIT_UNREACHABLE, proc.stderr
    assert proc.stderr.count("unreachable:") == 1, proc.stderr
    assert "dead.sim" in proc.stderr and "connection was refused" in proc.stderr
    printed = " ".join(proc.stdout.split())
    assert "no host of the seeds could be reached" in printed
    assert "unreachable hosts 1: dead.sim" in printed
    assert "Traceback" not in proc.stderr
