"""CPU time and memory of a whole process tree (Linux), for benchmarks and tests.

A crawler is more than its main process: parser workers are children of a forkserver,
so neither ``getrusage`` of the main process nor ``/usr/bin/time`` sees their CPU.
``TreeRun`` starts a command and counts every process it leads to:

- The measuring process makes itself a *child subreaper* (``PR_SET_CHILD_SUBREAPER``),
  so a descendant orphaned by its parent (a forkserver left behind) is re-parented to
  it instead of to init, and is still reaped here.
- The **total** is exact: every process of the tree is reaped by ``wait4``, either by its
  own parent (its CPU is then in that parent's ``cutime``/``cstime`` and reaches us with
  the parent) or, when orphaned, by us; the sum of the ``wait4`` usage of the command and
  of each orphan is the CPU of the whole tree, from start to the exit of the last process.
- A **sample** at any moment (``sample()``) sums ``utime + stime + cutime + cstime`` of
  every live process of the tree from ``/proc/<pid>/stat``, plus what the reaped ones
  already reported: exact to the clock tick of each process. It marks the start of the
  crawl proper, so that start-up (imports, pool start) can be told apart.
- Peak resident memory of every process is ``VmHWM`` from ``/proc/<pid>/status``, read
  at each sample (``sample_every`` seconds), with the process's command line as its name.

``TreeMemorySampler`` samples the resident memory of a process and every descendant it has
now, in a thread, for tests and benchmarks that bound a crawler's memory; it walks the tree
with the same ``all_stats`` and ``tree_of`` as ``TreeRun``.

Children of the measuring process that are not the command's (those that existed before
``start()``, and ``exclude``, e.g. a server the benchmark talks to) are never counted; the
measuring process must start no other child while it measures.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import resource
import signal
import subprocess
import threading
import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass

PR_SET_CHILD_SUBREAPER = 36
_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


@dataclass(frozen=True, slots=True)
class ProcStat:
    """One process as ``/proc`` shows it."""

    pid: int
    ppid: int
    cpu: float  # utime + stime + cutime + cstime, seconds
    name: str  # short command name (``comm``)


@dataclass(frozen=True, slots=True)
class ProcessPeak:
    """Peak resident memory of one process of the tree."""

    pid: int
    role: str  # a readable role from its command line
    peak_rss_mib: float


@dataclass(frozen=True, slots=True)
class TreeUsage:
    """What ``TreeRun`` measured. ``total_cpu`` covers every process of the tree from the
    start of the command to the exit of the last one; ``mark_cpu`` is the tree's CPU at
    ``mark()`` (None when never marked)."""

    returncode: int
    wall: float
    total_cpu: float
    mark_cpu: float | None
    processes: int  # distinct processes seen (sampled or reaped)
    orphans: int  # processes re-parented to the measuring process and reaped by it
    peaks: tuple[ProcessPeak, ...]

    @property
    def after_mark_cpu(self) -> float:
        """CPU of the tree after ``mark()`` (all of it when never marked)."""
        return self.total_cpu - (self.mark_cpu or 0.0)


def read_stat(pid: int) -> ProcStat | None:
    """The ``/proc/<pid>/stat`` figures of ``pid``; None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            raw = fh.read()
    except OSError:
        return None
    # comm is in parentheses and may itself hold spaces or parentheses
    lpar, rpar = raw.find(b"("), raw.rfind(b")")
    fields = raw[rpar + 2 :].split()
    try:
        ppid = int(fields[1])
        ticks = int(fields[11]) + int(fields[12]) + int(fields[13]) + int(fields[14])
    except (IndexError, ValueError):
        return None
    return ProcStat(pid, ppid, ticks / _TICK, raw[lpar + 1 : rpar].decode(errors="replace"))


def peak_rss_mib_of(pid: int) -> float | None:
    """``VmHWM`` (peak resident set) of ``pid`` in MiB; None when gone or unknown."""
    try:
        with open(f"/proc/{pid}/status", "rb") as fh:
            for line in fh:
                if line.startswith(b"VmHWM:"):
                    return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def cmdline_of(pid: int) -> str:
    """The command line of ``pid`` ("" when gone)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return " ".join(a.decode(errors="replace") for a in fh.read().split(b"\0") if a)
    except OSError:
        return ""


def role_of(cmdline: str, parent_cmdline: str) -> str:
    """A short readable role of a process of a crawler's tree: ``forkserver``, ``parser``
    (a child of the forkserver, which shares its command line), ``resource-tracker``,
    or ``main``. Read from the module the process runs (``-c "from multiprocessing.X
    import main..."``), not from anywhere in the line: the ``-W`` options multiprocessing
    passes on name the resource tracker in every helper's command line."""
    if "from multiprocessing.resource_tracker import" in cmdline:
        return "resource-tracker"
    if "from multiprocessing.forkserver import" in cmdline:
        return "parser" if parent_cmdline == cmdline else "forkserver"
    if "multiprocessing" in cmdline:
        return "worker"
    return "main" if cmdline else "?"


def all_stats() -> dict[int, ProcStat]:
    """Every process visible in ``/proc``."""
    out: dict[int, ProcStat] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            st = read_stat(int(entry))
            if st is not None:
                out[st.pid] = st
    return out


def tree_of(root: int, stats: dict[int, ProcStat]) -> set[int]:
    """``root`` and its live descendants among ``stats``."""
    children: dict[int, list[int]] = {}
    for st in stats.values():
        children.setdefault(st.ppid, []).append(st.pid)
    found, todo = set(), [root]
    while todo:
        pid = todo.pop()
        if pid in found or pid not in stats:
            continue
        found.add(pid)
        todo.extend(children.get(pid, ()))
    return found


def tree_pids(root: int) -> set[int]:
    """``root`` and every live descendant it has now."""
    return tree_of(root, all_stats())


def rss_bytes_of(pid: int) -> int:
    """Resident memory of ``pid`` now (0 when gone)."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as fh:
            return int(fh.read().split()[1]) * _PAGE
    except (OSError, IndexError, ValueError):
        return 0


def tree_rss_bytes(root: int) -> int:
    """Resident memory of ``root`` and all its descendants now (0 once it has ended)."""
    return sum(rss_bytes_of(pid) for pid in tree_pids(root))


class TreeMemorySampler:
    """Samples ``tree_rss_bytes(pid)`` every ``interval`` seconds in a thread; ``peak``
    is the largest sample (use as a context manager around the process's life)."""

    def __init__(self, pid: int, interval: float = 0.05) -> None:
        self.pid = pid
        self.interval = interval
        self.peak = 0
        self.samples = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, tree_rss_bytes(self.pid))
            self.samples += 1
            self._stop.wait(self.interval)

    def __enter__(self) -> TreeMemorySampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)


def become_subreaper() -> bool:
    """Make this process the reaper of its orphaned descendants (Linux)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


class TreeRun:
    """Run ``argv`` and measure its whole process tree (see the module docstring).

    ``start()`` spawns it; ``mark()`` records the tree's CPU now; ``wait()`` waits for the
    command and every process it left behind (killing the tree after ``timeout``) and
    returns the ``TreeUsage``. ``exclude`` are pids of this process's other children.
    """

    def __init__(
        self,
        argv: Sequence[str],
        *,
        exclude: Collection[int] = (),
        sample_every: float = 0.5,
        env: dict[str, str] | None = None,
        stdout: int | None = subprocess.PIPE,
    ) -> None:
        self._argv = list(argv)
        self._exclude = set(exclude)
        self._every = sample_every
        self._env = env
        self._stdout = stdout
        self._lock = threading.Lock()
        self._seen: set[int] = set()
        self._members: set[int] = set()  # processes known to belong to the tree
        self._peaks: dict[int, tuple[str, float]] = {}
        self._reaped_cpu = 0.0
        self._orphans = 0
        self._mark: float | None = None
        self._done = threading.Event()
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> subprocess.Popen[bytes]:
        become_subreaper()
        me = os.getpid()
        # children of ours from before the command are not its orphans
        self._exclude |= {st.pid for st in all_stats().values() if st.ppid == me}
        self._t0 = time.monotonic()
        self.proc = subprocess.Popen(
            self._argv, stdout=self._stdout, env=self._env, start_new_session=True
        )
        self._members.add(self.proc.pid)
        self._sampler = threading.Thread(target=self._sample_loop, daemon=True)
        self._sampler.start()
        return self.proc

    def sample(self) -> float:
        """CPU seconds of the tree so far (live processes plus reaped ones)."""
        stats = all_stats()
        with self._lock:
            live = self._live_members(stats)
            for pid in live:
                self._note_peak(pid, stats)
            return self._reaped_cpu + sum(stats[p].cpu for p in live if p in stats)

    def mark(self) -> float:
        """Record the tree's CPU now as the start of the measured part."""
        self._mark = self.sample()
        return self._mark

    def _live_members(self, stats: dict[int, ProcStat]) -> set[int]:
        assert self.proc is not None
        roots = {p for p in self._members if p in stats}
        live: set[int] = set()
        for root in roots:
            live |= tree_of(root, stats)
        # a process of the tree that was orphaned is now our child: still the tree's
        me = os.getpid()
        for st in stats.values():
            if st.ppid == me and st.pid not in self._exclude:
                live |= tree_of(st.pid, stats)
        self._members |= live
        self._seen |= live
        return live

    def _note_peak(self, pid: int, stats: dict[int, ProcStat]) -> None:
        peak = peak_rss_mib_of(pid)
        if peak is None:
            return
        role, old = self._peaks.get(pid, ("", 0.0))
        if not role:
            ppid = stats[pid].ppid if pid in stats else 0
            role = role_of(cmdline_of(pid), cmdline_of(ppid) if ppid else "")
        self._peaks[pid] = (role, max(old, peak))

    def _sample_loop(self) -> None:
        while not self._done.wait(self._every):
            self.sample()

    def _reap(self, pid: int, status_rusage: tuple[int, int, resource.struct_rusage]) -> None:
        _pid, _status, ru = status_rusage
        with self._lock:
            self._reaped_cpu += ru.ru_utime + ru.ru_stime
            self._members.discard(pid)
            self._seen.add(pid)

    def wait(self, timeout: float) -> TreeUsage:
        assert self.proc is not None
        proc = self.proc
        deadline = self._t0 + timeout
        returncode: int | None = None
        while returncode is None:
            self.sample()  # last look at the tree while the command still runs
            try:
                pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
            except ChildProcessError:
                break
            if pid:
                self._reap(pid, (pid, status, ru))
                returncode = os.waitstatus_to_exitcode(status)
                proc.returncode = returncode
                break
            if time.monotonic() > deadline:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                deadline = time.monotonic() + 30
            time.sleep(0.05)
        wall = time.monotonic() - self._t0
        # orphans of the tree were re-parented to us: wait for them to end
        stop_at = time.monotonic() + 30
        while True:
            stats = all_stats()
            me = os.getpid()
            with self._lock:
                left = [
                    st.pid for st in stats.values() if st.ppid == me and st.pid not in self._exclude
                ]
                for pid in left:
                    self._note_peak(pid, stats)
            # a zombie orphan shows in /proc with its ppid until it is reaped
            reaped_any = False
            for pid in left:
                try:
                    got, status, ru = os.wait4(pid, os.WNOHANG)
                except ChildProcessError:
                    continue
                if got:
                    self._reap(got, (got, status, ru))
                    self._orphans += 1
                    reaped_any = True
            if not left:
                break
            if time.monotonic() > stop_at:
                for pid in left:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
                stop_at = time.monotonic() + 5
            if not reaped_any:
                time.sleep(0.02)
        self._done.set()
        peaks = tuple(
            ProcessPeak(pid, role, peak) for pid, (role, peak) in sorted(self._peaks.items())
        )
        return TreeUsage(
            returncode=-1 if returncode is None else returncode,
            wall=wall,
            total_cpu=self._reaped_cpu,
            mark_cpu=self._mark,
            processes=len(self._seen),
            orphans=self._orphans,
            peaks=peaks,
        )
