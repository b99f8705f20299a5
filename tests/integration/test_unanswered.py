"""A crawl whose seed hosts never answer ends soon, with why: a name that does not exist
is final at its first try, and once only hosts that never answered are queued the crawl
ends after ``--unanswered-wait`` (here shortened) instead of minutes of robots.txt
retries; a host that answered keeps them."""

from __future__ import annotations

import logging
import socket
import time
from pathlib import Path

import pytest

from headway.cli.commands import EXIT_UNREACHABLE, asyncio_run_crawl
from headway.fetch import resolver as resolver_module
from headway.frontier.sqlite.status import read_counts
from headway.testing.simweb import HostSpec, SimWebSpec
from tests.integration.helpers import ThreadedSimWeb, crawl_settings, page_requests
from tests.integration.test_unreachable import NoSuchName

pytestmark = pytest.mark.slow


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _lines(caplog: pytest.LogCaptureFixture, word: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if word in r.getMessage()]


def test_a_name_that_does_not_exist_is_final_at_its_first_try(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Default robots.txt retries (60 s, 4 tries), the quick end off: the crawl still
    ends at once, the URL failed, with the exit status of a crawl that reached nothing."""
    monkeypatch.setattr(resolver_module, "DefaultResolver", NoSuchName)
    caplog.set_level(logging.WARNING)
    out = tmp_path / "c"
    settings = crawl_settings(out, unanswered_wait=0, max_duration=10)
    started = time.monotonic()
    code = asyncio_run_crawl(settings, ["http://nowhere.example/"], None)
    took = time.monotonic() - started
    assert code == EXIT_UNREACHABLE
    assert took < 8, took  # not a robots.txt retry 60 s later, nor the 10 s limit
    printed = " ".join(capsys.readouterr().out.split())
    assert printed.startswith("headway: finished (no host of the seeds could be reached)")
    warned = _lines(caplog, "unreachable")
    assert len(warned) == 1, warned
    assert "nowhere.example" in warned[0] and "does not resolve" in warned[0]
    assert "final: its URLs fail as robots-unreachable, not retried" in warned[0]
    counts = read_counts(out / "frontier.sqlite3")
    assert (counts.queued, counts.failed) == (0, 1)


def test_seed_hosts_that_never_answer_end_the_crawl_within_the_wait(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A refused port on loopback (its robots.txt retried 60 s later by default) and a
    name that does not exist: ended after the 2 s wait with the reason, exit 3, the
    refused host's URL still queued for the next run."""
    monkeypatch.setattr(resolver_module, "DefaultResolver", NoSuchName)
    caplog.set_level(logging.WARNING)
    out = tmp_path / "c"
    settings = crawl_settings(out, unanswered_wait=2, max_duration=12)
    seeds = [f"http://dead.sim:{_closed_port()}/", "http://nowhere.example/"]
    started = time.monotonic()
    code = asyncio_run_crawl(settings, seeds, None)
    took = time.monotonic() - started
    assert code == EXIT_UNREACHABLE
    assert 2 <= took < 10, took  # the wait, not the 12 s limit
    ended = _lines(caplog, "no host answered")
    assert len(ended) == 1, ended
    assert "dead.sim" in ended[0] and "connection was refused" in ended[0]
    assert "--unanswered-wait" in ended[0]
    printed = " ".join(capsys.readouterr().out.split())
    assert printed.startswith("headway: no host answered (no host of the seeds could be reached)")
    counts = read_counts(out / "frontier.sqlite3")
    assert (counts.queued, counts.failed) == (1, 1)  # dead.sim waits; nowhere.example failed


def test_a_host_that_answers_keeps_the_crawl_and_its_retries(tmp_path: Path) -> None:
    """One seed host answers, another refuses: the wait does not end the crawl while the
    refused host's robots.txt waits for its retry (the crawl runs to its limit)."""
    spec = SimWebSpec(hosts=1, host_spec=HostSpec(pages=2, links_per_page=1), seed=5)
    out = tmp_path / "c"
    with ThreadedSimWeb(spec) as web:
        seeds = [web.seeds()[0], f"http://dead.sim:{_closed_port()}/"]
        settings = crawl_settings(out, unanswered_wait=1, max_duration=6)
        started = time.monotonic()
        asyncio_run_crawl(settings, seeds, None)
        took = time.monotonic() - started
        assert page_requests(web.log)
    assert took >= 5.5, took  # ended by --max-duration, not by the quick end
    counts = read_counts(out / "frontier.sqlite3")
    assert counts.queued == 1  # dead.sim's seed, waiting for its robots.txt retry
