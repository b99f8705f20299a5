"""Fuzz every parser of outside input for a given time (see docs/fuzzing.md).

    python -m tests.fuzz --seconds 600                  # each target 600 s
    python -m tests.fuzz --seconds 60 --target robots   # one target (repeat --target)
    python -m tests.fuzz --engine hypothesis            # without atheris
    python -m tests.fuzz --replay fuzz-crashes/html-0123abcd...

The engine is atheris (coverage-guided libFuzzer, the ``fuzz`` extra) when it is
installed, else hypothesis. Each target runs in turn for ``--seconds``; the command
prints one line per target (inputs, seconds, slowest input, findings), saves each
finding's input under ``--crashes`` and exits 1 when there was any.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.fuzz.engine import RSS_LIMIT_MIB, RunStats, hypothesis_run, replay
from tests.fuzz.targets import TARGETS, Target


def _dictionary(target: Target, path: Path) -> None:
    """The target's tokens as a libFuzzer dictionary (one escaped string a line)."""
    lines = []
    for tok in target.tokens:
        if len(tok) > 64:  # libFuzzer ignores long entries; big seeds go in the corpus
            continue
        lines.append('"' + "".join(f"\\x{b:02x}" for b in tok) + '"')
    path.write_text("\n".join(lines) + "\n")


def atheris_run(target: Target, seconds: float, crashes: Path, corpus: Path) -> RunStats:
    """``seconds`` of libFuzzer over ``target`` in a child process (its corpus kept in
    ``corpus/<target>``, so that later runs start where this one stopped)."""
    crashes.mkdir(parents=True, exist_ok=True)
    own = corpus / target.name
    own.mkdir(parents=True, exist_ok=True)
    for i, tok in enumerate(target.tokens):  # the tokens are the first seeds
        (own / f"token-{i:03d}").write_bytes(tok)
    began = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        dic = Path(tmp) / "tokens.dict"
        _dictionary(target, dic)
        argv = [
            sys.executable,
            "-m",
            "tests.fuzz.atheris_one",
            target.name,
            f"-max_total_time={int(seconds)}",
            f"-max_len={target.max_input}",
            f"-rss_limit_mb={RSS_LIMIT_MIB}",
            f"-timeout={max(1, int(target.seconds * 5))}",
            f"-dict={dic}",
            f"-artifact_prefix={crashes}/{target.name}-",
            "-print_final_stats=1",
            str(own),
        ]
        done = subprocess.run(argv, capture_output=True, text=True, errors="replace")
    out = done.stdout + done.stderr
    runs = re.findall(r"stat::number_of_executed_units:\s*(\d+)", out)
    findings = tuple(
        line.strip()
        for line in out.splitlines()
        if "Finding" in line or "ERROR: libFuzzer" in line or "Uncaught Python" in line
    )
    if done.returncode != 0 and not findings:
        findings = (f"exit {done.returncode}: {out.strip().splitlines()[-1:]}",)
    return RunStats(
        target.name,
        "atheris",
        int(runs[-1]) if runs else 0,
        time.monotonic() - began,
        0.0,
        findings,
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__.split("\n")[0])
    p.add_argument("--seconds", type=float, default=60.0, help="wall seconds per target")
    p.add_argument("--target", action="append", choices=sorted(TARGETS), default=[])
    p.add_argument("--engine", choices=("auto", "atheris", "hypothesis"), default="auto")
    p.add_argument("--seed", type=int, default=0, help="first hypothesis seed")
    p.add_argument("--crashes", type=Path, default=Path("fuzz-crashes"))
    p.add_argument("--corpus", type=Path, default=Path("fuzz-corpus"))
    p.add_argument("--replay", type=Path, nargs="+", metavar="FILE", help="run saved inputs")
    args = p.parse_args(argv)
    if args.replay:
        bad = 0
        for path in args.replay:
            # <target>-<digest> (kept), or <target>-crash-<sha1> (as libFuzzer saves it)
            name = path.name.rsplit("-", 1)[0].removesuffix("-crash")
            target = TARGETS.get(name)
            if target is None:
                print(f"{path}: no target named {name!r}")
                bad += 1
                continue
            verdict = replay(target, path)
            bad += verdict.startswith("FAIL")
            print(f"{path}: {verdict}")
        return 1 if bad else 0
    engine = args.engine
    if engine == "auto":
        engine = "atheris" if importlib.util.find_spec("atheris") else "hypothesis"
    names = args.target or sorted(TARGETS)
    found = 0
    print(f"engine {engine}, {args.seconds:.0f} s per target, {len(names)} targets", flush=True)
    for name in names:
        target = TARGETS[name]
        if engine == "atheris":
            stats = atheris_run(target, args.seconds, args.crashes, args.corpus)
        else:
            stats = hypothesis_run(target, args.seconds, args.seed, args.crashes)
        found += len(stats.findings)
        # libFuzzer does not report its slowest input; its -timeout bounds it instead
        slowest = f"{stats.slowest:.3f} s" if stats.engine == "hypothesis" else "-"
        print(
            f"{stats.target:18} {stats.inputs:>10} inputs {stats.seconds:>8.0f} s"
            f"  slowest {slowest}  findings {len(stats.findings)}",
            flush=True,
        )
        for f in stats.findings:
            print(f"    {f}", flush=True)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
