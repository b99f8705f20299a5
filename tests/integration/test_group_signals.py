"""Signals as service managers send them: ``timeout`` sends SIGTERM to the crawl's
process and then to its whole process group (systemd and container runtimes signal the
group too). That is one stop request delivered twice: the same clean stop, summary and
closed files as one Ctrl-C, with the helper processes left to the node. Only a second
signal sent after a moment quits at once."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from headway.testing.simweb import HostSpec, SimWebSpec
from tests.integration.helpers import ThreadedSimWeb, crawl_argv
from tests.integration.test_helpers_die import descendants, running

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc to see the process tree"),
]

SPEC = SimWebSpec(hosts=3, host_spec=HostSpec(pages=200, links_per_page=4, delay=0.02), seed=5)


def _start(tmp_path: Path, web_seeds: list[str]) -> tuple[subprocess.Popen[bytes], Path]:
    """A crawl in a session (and process group) of its own, as under ``timeout``."""
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("\n".join(web_seeds) + "\n")
    out = tmp_path / "c"
    proc = subprocess.Popen(
        crawl_argv(seeds, out, "--delay", "0.02"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    return proc, out


def _wait_mid_crawl(proc: subprocess.Popen[bytes], log: Sequence[object]) -> set[int]:
    """Wait until pages are being fetched and parsed (forkserver, a parser process and
    the resource tracker are up); the helper processes then."""
    deadline = time.monotonic() + 60
    helpers: set[int] = set()
    while len(log) < 30 or len(helpers) < 3:
        assert proc.poll() is None, "the crawl ended before it could be stopped"
        assert time.monotonic() < deadline, f"no progress: {helpers}"
        time.sleep(0.05)
        helpers = descendants(proc.pid)
    return helpers


def _ignores_stop_signals(pid: int) -> bool:
    """The process ignores SIGINT and SIGTERM (its ``SigIgn`` mask in /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("SigIgn:"):
            mask = int(line.split()[1], 16)
            return all(mask & (1 << (sig - 1)) for sig in (signal.SIGINT, signal.SIGTERM))
    return False


def _gone(helpers: set[int]) -> set[int]:
    deadline = time.monotonic() + 15
    while (alive := {p for p in helpers if running(p)}) and time.monotonic() < deadline:
        time.sleep(0.05)
    return alive


def _index_sorted(out: Path) -> bool:
    lines = (out / "index.cdxj").read_bytes().splitlines()
    return bool(lines) and lines == sorted(lines)


def test_sigterm_to_the_process_then_its_group_is_one_clean_stop(tmp_path: Path) -> None:
    with ThreadedSimWeb(SPEC) as web:
        proc, out = _start(tmp_path, web.seeds())
        try:
            helpers = _wait_mid_crawl(proc, web.log)
            # forkserver, parser processes, resource tracker: stopping is the node's
            deaf = {p: _ignores_stop_signals(p) for p in helpers}
            assert all(deaf.values()), deaf
            os.kill(proc.pid, signal.SIGTERM)  # what timeout does: the process,
            time.sleep(0.02)  # (delivered before the next: two signals, not one pending)
            os.killpg(proc.pid, signal.SIGTERM)  # then, milliseconds later, its group
            stdout, stderr = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(10)
    err = stderr.decode()
    assert proc.returncode == 130, err
    assert "headway: interrupted:" in stdout.decode(), (stdout, err)  # the summary
    assert err.count("stopping: finishing what was fetched") == 1, err
    assert "parser process died" not in err and "Traceback" not in err, err
    # closed files: the frontier checkpointed its WAL, the index sorted at the clean stop
    wal = out / "frontier.sqlite3-wal"
    assert not wal.exists() or wal.stat().st_size == 0, wal.stat().st_size
    assert _index_sorted(out)
    assert not _gone(helpers), "helper processes outlived the node"


def test_a_second_signal_after_a_moment_still_quits_at_once(tmp_path: Path) -> None:
    with ThreadedSimWeb(SPEC) as web:
        for host in web.hosts:
            web.set_timeout(host, True)  # pages hang: the clean stop waits its grace
        proc, _ = _start(tmp_path, web.seeds())
        try:
            deadline = time.monotonic() + 60
            while not any(r.status == 0 for r in web.log):  # a page fetch is hanging
                assert proc.poll() is None and time.monotonic() < deadline
                time.sleep(0.02)
            helpers = descendants(proc.pid)
            os.killpg(proc.pid, signal.SIGINT)
            time.sleep(1.5)  # a deliberate second Ctrl-C
            assert proc.poll() is None, "the stop did not wait for the hanging fetches"
            os.killpg(proc.pid, signal.SIGINT)
            stdout, stderr = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(10)
    assert proc.returncode == 130, stderr.decode()
    assert b"headway: interrupted:" not in stdout  # quit at once: no summary
    assert not _gone(helpers), "helper processes outlived the node"


def test_the_group_signal_arriving_as_the_process_exits_changes_nothing(tmp_path: Path) -> None:
    """The group's copy of the signal can arrive late (a loaded machine): after the node
    has finished, while the process prints its summary and the interpreter tears itself
    down, it is still the same request, never a kill by the default action."""
    with ThreadedSimWeb(SPEC) as web:
        proc, _ = _start(tmp_path, web.seeds())
        assert proc.stdout is not None
        try:
            _wait_mid_crawl(proc, web.log)
            os.kill(proc.pid, signal.SIGTERM)
            lines: list[bytes] = []
            for line in proc.stdout:  # the summary: the node has finished
                lines.append(line)
                if b"headway: interrupted:" in line:
                    os.killpg(proc.pid, signal.SIGTERM)  # within the second: the same stop
                    break
            lines.extend(proc.stdout)
            proc.wait(60)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(10)
        stderr = proc.stderr.read().decode() if proc.stderr else ""
    assert any(b"headway: interrupted:" in line for line in lines), lines
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr, stderr
