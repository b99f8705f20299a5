"""``kill -9`` of the node alone takes its helper processes (parser processes, the
forkserver, the resource tracker) down with it."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from headway.testing.simweb import HostSpec, SimWebSpec
from tests.integration.helpers import ThreadedSimWeb, crawl_argv

pytestmark = pytest.mark.slow


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rpartition(")")[2].split()[1])
        tree.setdefault(ppid, []).append(int(entry))
    return tree


def descendants(pid: int) -> set[int]:
    tree = _children()
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in tree.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def running(pid: int) -> bool:
    """The process exists and is not a zombie (exited, waiting to be reaped)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc to see the process tree")
def test_kill_minus_9_of_the_node_ends_every_helper(tmp_path: Path) -> None:
    spec = SimWebSpec(hosts=2, host_spec=HostSpec(pages=40, links_per_page=4, delay=0.05))
    with ThreadedSimWeb(spec) as web:
        seeds = tmp_path / "seeds.txt"
        seeds.write_text("\n".join(web.seeds()) + "\n")
        argv = crawl_argv(seeds, tmp_path / "c", "--delay", "0.05")
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 60
            helpers: set[int] = set()
            # mid-crawl, with the parser pool up: forkserver, its parser, resource tracker
            while len(web.log) < 10 or len(helpers) < 3:
                assert proc.poll() is None, "the crawl ended before it could be killed"
                assert time.monotonic() < deadline, f"no progress: {helpers}"
                time.sleep(0.05)
                helpers = descendants(proc.pid)
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(10)
            deadline = time.monotonic() + 15
            while (alive := {p for p in helpers if running(p)}) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert not alive, f"helpers still running after the node was killed: {alive}"
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)
            for pid in helpers:
                if running(pid):
                    os.kill(pid, signal.SIGKILL)
