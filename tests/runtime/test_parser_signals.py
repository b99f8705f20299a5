"""Parser processes leave the stop signals to the node: a terminal's Ctrl-C and a service
manager's SIGTERM reach the whole process group, and a parser that died of them would
take its pages with it before the node stops in order. Each parser process ignores them
itself, so this holds also when the forkserver that forks the parsers was started by
someone else (a library, the embedding program) with the default handlers."""

from __future__ import annotations

import subprocess
import sys
import textwrap

#: Run in a fresh interpreter (a process has one forkserver): the forkserver is started
#: first with the default handlers, then a pool parses, its parser is sent SIGINT and
#: SIGTERM, and the same parser process must still answer.
SCRIPT = textwrap.dedent(
    """
    import os, signal, sys, time
    from multiprocessing import forkserver

    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    forkserver.ensure_running()  # someone else's, with the default handlers

    from headway.runtime.parsepool import ParsePool

    pool = ParsePool(1, 2)
    try:
        pool.warm_up()
        pid = pool._pool.submit(os.getpid).result(timeout=20)
        stops = (signal.SIGINT, signal.SIGTERM)
        seen = [pool._pool.submit(signal.getsignal, s).result(timeout=20) for s in stops]
        print("handlers ignored:", seen == [signal.SIG_IGN, signal.SIG_IGN])
        os.kill(pid, signal.SIGINT)
        os.kill(pid, signal.SIGTERM)
        time.sleep(0.3)
        again = pool._pool.submit(os.getpid).result(timeout=20)
        print("same parser after the signals:", again == pid)
    except Exception as exc:
        print("pool failed:", type(exc).__name__)
    finally:
        pool.close()
    """
)


def test_parser_processes_ignore_stop_signals_under_a_default_forkserver() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=60, check=False
    )
    lines = done.stdout.splitlines()
    assert lines == [
        "handlers ignored: True",
        "same parser after the signals: True",
    ], (lines, done.stderr[-2000:])
    assert done.returncode == 0, done.stderr[-2000:]
