"""Helper processes die with the node.

Parser processes are forkserver children, not the node's: when the node is killed
(``kill -9``), nothing tells them. A parser process blocked reading its task pipe never
sees end-of-file either, because it holds both ends of that pipe; and while it lives, the
forkserver (which waits for its last child) and multiprocessing's resource tracker
(which waits for the forkserver) live on too. ``die_with`` makes a process exit as soon
as a given process is gone, which unwinds the whole chain.

Stopping is the node's alone: ``timeout``, systemd (``KillMode=control-group``) and a
terminal's Ctrl-C signal every process of the group, and a helper that died of it would
break the parser pool in the middle of the node's clean stop. So helpers ignore SIGINT
and SIGTERM (``ignore_stop_signals``, and the forkserver is started with them ignored,
which its children inherit) and go only with the node, through the lifeline.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os
import select
import signal
import sys
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)

_PR_SET_PDEATHSIG = 1
_POLL_SECONDS = 0.5
#: A warnings filter for multiprocessing's resource tracker: after ``kill -9`` of the node
#: it finds the parser pool's queue semaphores unreleased, releases them (that is its
#: job) and would print "There appear to be N leaked semaphore objects" over the
#: terminal. A killed node is an event the crawl is built to survive, not a defect.
TRACKER_QUIET = "ignore::UserWarning:multiprocessing.resource_tracker"


def quiet_resource_tracker() -> None:
    """Pass ``TRACKER_QUIET`` to the resource tracker and forkserver processes, which
    multiprocessing starts with this interpreter's ``-W`` options: call it before the
    first forkserver pool. Other warnings of those processes are still shown."""
    if TRACKER_QUIET not in sys.warnoptions:
        sys.warnoptions.append(TRACKER_QUIET)


#: The signals that ask a crawl to stop: the node's to handle, never a helper's.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def ignore_stop_signals() -> None:
    """In a helper process: leave SIGINT and SIGTERM to the node (see the module doc)."""
    for sig in STOP_SIGNALS:
        signal.signal(sig, signal.SIG_IGN)


def start_deaf_to_stop(start: Callable[[], None]) -> None:
    """Call ``start`` (which starts helper processes) with SIGINT and SIGTERM ignored, so
    that the processes it starts inherit that (an ignored signal stays ignored across
    fork and exec); this process's handlers are put back after. Off the main thread
    (where handlers cannot be changed) ``start`` is simply called. A stop signal that
    arrives in the moment ``start`` takes is not seen (a signal mask would not do:
    the forkserver starts with an empty mask, whatever its parent blocked)."""
    if threading.current_thread() is not threading.main_thread():
        start()
        return
    old = {sig: signal.signal(sig, signal.SIG_IGN) for sig in STOP_SIGNALS}
    try:
        start()
    finally:
        for sig, handler in old.items():
            if handler is not None:
                signal.signal(sig, handler)


def set_parent_death_signal(sig: int = signal.SIGKILL) -> bool:
    """Ask the kernel to send ``sig`` to this process when its parent dies (Linux only);
    False where that is not available."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        return int(libc.prctl(_PR_SET_PDEATHSIG, int(sig), 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _watch(pid: int) -> None:
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        os._exit(0)
    except (AttributeError, OSError):
        fd = -1
    if fd >= 0:
        select.select([fd], [], [])  # readable once the process has exited
    else:  # no pidfd (old kernel): poll
        while _alive(pid):
            threading.Event().wait(_POLL_SECONDS)
    os._exit(0)


def die_with(pid: int) -> None:
    """Exit this process (at once, no clean-up: its work belonged to ``pid``) as soon as
    process ``pid`` is gone; also die by SIGKILL if this process's own parent dies."""
    set_parent_death_signal()
    threading.Thread(target=_watch, args=(pid,), name="lifeline", daemon=True).start()
