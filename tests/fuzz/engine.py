"""Running a fuzz target on one input and judging it (``run_one``), and a time-bounded
run of a target with hypothesis (``hypothesis_run``) or atheris (``atheris_main``).

Judged per input: an exception not in the target's ``allowed`` tuple, a ``Broken``
bound, a warning logged with a traceback (parsers that "never raise" log what they
caught, e.g. ``parse_page``), more wall time than the target's ``seconds`` (on each of
``TIME_TRIES`` runs, so that a stall of the machine is not a finding), or the
process's peak memory passing ``RSS_LIMIT_MIB``: each is a ``Finding``. A finding's input
is written to the crash directory (named by target and digest) so that it can be
replayed (``python -m tests.fuzz --replay FILE``) and kept as a regression case.
"""

from __future__ import annotations

import hashlib
import logging
import resource
import sys
import time
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.fuzz.targets import Target

#: The peak resident memory a fuzzing process may reach (MiB).
RSS_LIMIT_MIB = 2048


class Finding(AssertionError):
    """One input a target failed on (see the module docstring)."""


@dataclass(frozen=True, slots=True)
class RunStats:
    target: str
    engine: str
    inputs: int
    seconds: float
    slowest: float  # wall seconds of the slowest input
    findings: tuple[str, ...]


class _Caught(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info:
            self.records.append(record)


@contextmanager
def _watch_logs() -> Iterator[_Caught]:
    caught = _Caught()
    root = logging.getLogger("headway")
    root.addHandler(caught)
    try:
        yield caught
    finally:
        root.removeHandler(caught)


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


#: Runs of an input that went over its time bound, before it counts as slow: a process
#: stalled by a busy machine is slow once, an input that costs the time is slow each time.
TIME_TRIES = 3


def _run_timed(target: Target, data: bytes) -> float:
    with _watch_logs() as caught:
        start = time.perf_counter()
        try:
            target.run(data)
        except target.allowed:
            pass
        except Exception as exc:
            raise Finding(
                f"{target.name}: {type(exc).__name__}: {exc}\n{traceback.format_exc()}"
            ) from exc
        took = time.perf_counter() - start
    if caught.records:
        r = caught.records[0]
        raise Finding(f"{target.name}: logged {r.getMessage()!r} with a traceback")
    return took


def run_one(target: Target, data: bytes) -> float:
    """Run ``target`` on ``data``; its wall seconds (the least of up to ``TIME_TRIES``
    runs when the first is over the bound), or ``Finding``."""
    data = data[: target.max_input]
    took = _run_timed(target, data)
    for _ in range(TIME_TRIES - 1):
        if took <= target.seconds:
            break
        took = min(took, _run_timed(target, data))
    if took > target.seconds:
        raise Finding(f"{target.name}: {took:.2f} s for {len(data)} bytes (> {target.seconds})")
    rss = peak_rss_mib()
    if rss > RSS_LIMIT_MIB:
        raise Finding(f"{target.name}: peak memory {rss:.0f} MiB (> {RSS_LIMIT_MIB})")
    return took


def save_input(crashes: Path, target: Target, data: bytes) -> Path:
    crashes.mkdir(parents=True, exist_ok=True)
    path = crashes / f"{target.name}-{hashlib.sha1(data).hexdigest()[:16]}"
    path.write_bytes(data)
    return path


def hypothesis_run(target: Target, seconds: float, seed: int, crashes: Path) -> RunStats:
    """Generate inputs for ``target`` (random bytes and sequences of its tokens) for
    ``seconds`` of wall time, in rounds of fresh seeds; each finding is shrunk by
    hypothesis and saved."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hseed

    from tests.fuzz.strategies import inputs_for

    deadline = time.monotonic() + seconds
    began = time.monotonic()
    count = 0
    slowest = 0.0
    findings: list[str] = []
    round_no = 0
    last: list[bytes | None] = [None]
    while time.monotonic() < deadline:

        @hseed(seed + round_no)
        @settings(
            max_examples=500,
            deadline=None,
            database=None,
            phases=(Phase.generate, Phase.shrink),
            suppress_health_check=list(HealthCheck),
        )
        @given(inputs_for(target))
        def one(data: bytes) -> None:
            nonlocal count, slowest
            count += 1
            try:
                slowest = max(slowest, run_one(target, data))
            except Finding:
                last[0] = data  # the last failing input is the shrunk one
                raise

        round_no += 1
        try:
            one()
        except Exception as exc:  # a Finding, shrunk (or hypothesis's own group of them)
            saved = save_input(crashes, target, last[0]) if last[0] is not None else None
            findings.append(f"{str(exc).splitlines()[0]} (input: {saved})")
            last[0] = None
    return RunStats(
        target.name, "hypothesis", count, time.monotonic() - began, slowest, tuple(findings)
    )


def replay(target: Target, path: Path) -> str:
    try:
        took = run_one(target, path.read_bytes())
    except Finding as exc:
        return f"FAIL {exc}"
    return f"ok {took:.3f} s"


def atheris_main(target: Target, argv: list[str]) -> None:
    """libFuzzer's loop over ``target`` (never returns: atheris exits when done).
    Findings are raised as exceptions, which atheris reports and saves."""
    import atheris

    def one(data: bytes) -> None:
        run_one(target, data)

    atheris.Setup([sys.argv[0], *argv], one)
    atheris.Fuzz()
