"""The benchmark's process-tree meter counts every process a command leads to."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from headway.bench.proctree import read_stat, role_of, tree_of

# The command: a child that starts a grandchild burning CPU, then exits at once, so the
# grandchild is orphaned and only a subreaper can still count it.
_COMMAND = textwrap.dedent(
    """
    import subprocess, sys
    burn = "import time\\nt = time.process_time()\\nwhile time.process_time() - t < 0.4: pass"
    subprocess.Popen([sys.executable, "-c", burn])
    """
)

_MEASURE = textwrap.dedent(
    """
    import json, sys
    from headway.bench.proctree import TreeRun
    run = TreeRun([sys.executable, "-c", sys.argv[1]], stdout=None, sample_every=0.05)
    run.start()
    u = run.wait(30)
    print(json.dumps({"cpu": u.total_cpu, "orphans": u.orphans, "rc": u.returncode}))
    """
)


def test_tree_cpu_counts_an_orphaned_grandchild() -> None:
    # measured in a process of its own: the meter makes its process a subreaper
    out = subprocess.run(
        [sys.executable, "-c", _MEASURE, _COMMAND],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    usage = json.loads(out.stdout.strip().splitlines()[-1])
    assert usage["rc"] == 0
    assert usage["orphans"] >= 1
    assert usage["cpu"] >= 0.35, usage  # the grandchild's 0.4 s (minus clock ticks)


def test_read_stat_and_tree_of_this_process() -> None:
    import os

    me = read_stat(os.getpid())
    assert me is not None and me.pid == os.getpid() and me.cpu > 0
    assert read_stat(2**22 + 12345) is None
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(5)"])
    try:
        stats = {p: s for p in (os.getpid(), child.pid) if (s := read_stat(p)) is not None}
        assert tree_of(os.getpid(), stats) == {os.getpid(), child.pid}
    finally:
        child.kill()
        child.wait()


FORKSERVER = "python -c from multiprocessing.forkserver import main; main(1)"
TRACKER = "python -c from multiprocessing.resource_tracker import main;main(3)"
#: the -W option every helper gets from a node (runtime.lifeline.TRACKER_QUIET)
QUIET = "python -Wignore::UserWarning:multiprocessing.resource_tracker"


@pytest.mark.parametrize(
    ("cmd", "parent", "role"),
    [
        (FORKSERVER, "python x", "forkserver"),
        (FORKSERVER, FORKSERVER, "parser"),
        (TRACKER, "", "resource-tracker"),
        (f"{QUIET} -c from multiprocessing.forkserver import main; main(1)", "x", "forkserver"),
        (
            f"{QUIET} -c from multiprocessing.resource_tracker import main;main(3)",
            "",
            "resource-tracker",
        ),
        ("python -m headway.cli bench-crawl {}", "python", "main"),
    ],
)
def test_role_of(cmd: str, parent: str, role: str) -> None:
    assert role_of(cmd, parent) == role


def test_memory_sampler_counts_a_grandchild() -> None:
    from headway.bench.proctree import TreeMemorySampler, tree_pids

    # a child whose child holds 64 MiB: the tree's peak holds it, the child's alone not
    hold = "b = bytearray(64 << 20)\\nimport time\\ntime.sleep(5)"
    parent = f"import subprocess, sys\nsubprocess.run([sys.executable, '-c', '{hold}'])"
    proc = subprocess.Popen([sys.executable, "-c", parent], start_new_session=True)
    try:
        with TreeMemorySampler(proc.pid, interval=0.02) as sampler:
            deadline = time.monotonic() + 20
            while sampler.peak < 64 << 20 and time.monotonic() < deadline:
                time.sleep(0.05)
        assert len(tree_pids(proc.pid)) == 2
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the grandchild too
        proc.wait()
    assert sampler.samples > 0
    assert sampler.peak >= 64 << 20
