"""Hostile operator input: each case is one line on stderr, exit code 2, no traceback, and
nothing is lost (a full disk leaves a crawl directory that the same command resumes)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from headway.testing.simweb import HostSpec, SimWebSpec
from tests.integration.helpers import TOKEN, ThreadedSimWeb, crawl_argv, fetched_urls

UA = "bot/1.0 (+https://example.org/bot)"
FLAGS = ("--user-agent", UA, "--quiet", "--parsers", "1")


def crawl(
    seeds: Path, out: Path, *extra: str, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "headway.cli",
            "crawl",
            str(seeds),
            "--out",
            str(out),
            *FLAGS,
            *extra,
        ],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def assert_one_line_exit_2(proc: subprocess.CompletedProcess[str], *words: str) -> str:
    err = proc.stderr
    assert proc.returncode == 2, (proc.returncode, err)
    assert "Traceback" not in err, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, lines
    for word in words:
        assert word in lines[0], (word, lines[0])
    return lines[0]


@pytest.fixture
def seeds(tmp_path: Path) -> Path:
    path = tmp_path / "seeds.txt"
    path.write_text("http://a.example/\n")
    return path


def _mount(point: Path, options: str) -> None:
    point.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(point)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small file system here: {done.stderr.strip()}")


@pytest.fixture
def mounts(tmp_path: Path) -> Iterator[list[Path]]:
    points: list[Path] = []
    yield points
    for point in points:
        subprocess.run(["umount", "-l", str(point)], capture_output=True)


def test_toml_integer_of_5000_digits(tmp_path: Path, seeds: Path) -> None:
    config = tmp_path / "big.toml"
    config.write_text("[crawl]\nmax_pages = " + "1" * 5000 + "\n")
    proc = crawl(seeds, tmp_path / "c", "--config", str(config))
    assert_one_line_exit_2(proc, "not valid TOML", "4300")


def test_endless_config_file(tmp_path: Path, seeds: Path) -> None:
    proc = crawl(seeds, tmp_path / "c", "--config", "/dev/zero")
    assert_one_line_exit_2(proc, "larger than")


def test_out_name_too_long(tmp_path: Path, seeds: Path) -> None:
    proc = crawl(seeds, tmp_path / ("a" * 300))
    assert_one_line_exit_2(proc, "File name too long")


def test_seeds_that_never_end(tmp_path: Path) -> None:
    proc = crawl(Path("/dev/zero"), tmp_path / "c")
    assert_one_line_exit_2(proc, "larger than 64 MiB")
    # an endless pipe of one valid line: read in bounded memory, then refused
    pipe = subprocess.Popen(["yes", "http://a.example/"], stdout=subprocess.PIPE)
    assert pipe.stdout is not None
    fd = pipe.stdout.fileno()
    out_flags = ["--out", str(tmp_path / "c2"), *FLAGS]
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "headway.cli", "crawl", f"/dev/fd/{fd}", *out_flags],
            capture_output=True,
            text=True,
            timeout=120,
            pass_fds=(fd,),
        )
    finally:
        pipe.kill()
        pipe.wait()
    assert_one_line_exit_2(proc, "larger than 64 MiB")


def test_only_seed_is_50_mb(tmp_path: Path) -> None:
    path = tmp_path / "seeds.txt"
    with path.open("wb") as fh:
        fh.write(b"http://a.example/" + b"a" * 50_000_000 + b"\n")
    proc = crawl(path, tmp_path / "c")
    line = assert_one_line_exit_2(proc, "no usable seed", "line 1: line longer than 8192 bytes")
    assert len(line) < 500


def test_read_only_crawl_directory(tmp_path: Path, seeds: Path, mounts: list[Path]) -> None:
    point = tmp_path / "ro"
    _mount(point, "ro,size=1m")
    mounts.append(point)
    proc = crawl(seeds, point / "c")
    assert_one_line_exit_2(proc, "Read-only file system")
    proc = crawl(seeds, point)
    assert_one_line_exit_2(proc, "Read-only file system")


def test_full_disk(tmp_path: Path, mounts: list[Path]) -> None:
    point = tmp_path / "small"
    _mount(point, "size=16m")
    mounts.append(point)
    out = point / "c"
    spec = SimWebSpec(hosts=2, host_spec=HostSpec(pages=60, links_per_page=4), seed=5)
    seeds = tmp_path / "seeds.txt"
    filler = point / "filler"
    with ThreadedSimWeb(spec) as web:
        seeds.write_text("\n".join(web.seeds()) + "\n")
        argv = crawl_argv(seeds, out, "--delay", "0", "--bloom-capacity", "1000")
        # leave room for the crawl directory, not for the whole crawl
        filler.write_bytes(b"\0" * (16 * 1024 * 1024 - 700_000))
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=90)
        line = assert_one_line_exit_2(proc)
        assert "No space left" in line or "disk is full" in line, line
        # nothing lost: with room again, the same command finishes the crawl
        filler.unlink()
        again = subprocess.run(argv, capture_output=True, text=True, timeout=90)
        assert again.returncode == 0, again.stderr
        missing = web.expected_pages(TOKEN) - set(fetched_urls(web, web.log))
    assert not missing, sorted(missing)[:5]


def test_error_log_into_a_full_directory(
    tmp_path: Path, mounts: list[Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """The report of a full disk cannot write error.log either: still one line, no second
    traceback."""
    from headway.cli.commands import _report_failure

    point = tmp_path / "full"
    _mount(point, "size=64k")
    mounts.append(point)
    with (point / "filler").open("wb", buffering=0) as fh, pytest.raises(OSError):
        while True:
            fh.write(b"\0" * 4096)
    failure = BaseExceptionGroup("crawl", [OSError(28, "No space left on device")])
    assert _report_failure(failure, point) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert "No space left" in err and "could not be written" in err


def _closed_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # closed again when the block ends


@pytest.mark.parametrize("command", ["crawl", "node"])
def test_unreachable_store_at_start_is_one_line_not_a_wait(
    tmp_path: Path, seeds: Path, command: str
) -> None:
    # a wrong address or a server not started is reported at once, password masked;
    # outages of a store that was reached are waited for (tests/frontier/test_redis_outage.py)
    store = f"redis://:secret@127.0.0.1:{_closed_port()}/0"
    argv = [sys.executable, "-m", "headway.cli", command]
    if command == "crawl":
        argv.append(str(seeds))
    argv += ["--out", str(tmp_path / "c"), "--store", store, "--crawl-id", "t", *FLAGS]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    line = assert_one_line_exit_2(proc, "cannot reach Redis", "***")
    assert "secret" not in proc.stderr + proc.stdout, line
    assert not (tmp_path / "c").exists()  # the start that failed left no directory


BAD_INPUTS = {  # each named by the flag that gave the bad value
    "resolve rule": (("--resolve", "site0.sim"), "--resolve:"),
    "resolve address": (("--resolve", "*.sim=300.1.1.1"), "--resolve:"),
    "hosts file": (("--hosts-file", "{tmp}/no-hosts"), "--hosts-file:"),
    "CA file": (("--ca-file", "{seeds}"), "--ca-file:"),
    "optout file": (("--optout-file", "{tmp}/no-optout"), "--optout-file:"),
    "store URL": (("--store", "redis://h:port/0", "--crawl-id", "t"), "--store:"),
    "metrics port": (("--metrics-port", "{busy_port}"), "--metrics-port:"),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_input_is_refused_before_anything_is_written(
    tmp_path: Path, seeds: Path, case: str
) -> None:
    import socket

    flags, key = BAD_INPUTS[case]
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        values = {"tmp": tmp_path, "seeds": seeds, "busy_port": busy.getsockname()[1]}
        extra = [flag.format(**values) for flag in flags]
        for out in (tmp_path / "new", tmp_path / "empty"):
            if out.name == "empty":
                out.mkdir()
            proc = crawl(seeds, out, *extra)
            assert_one_line_exit_2(proc, key)
            assert not out.exists() or not any(out.iterdir()), sorted(out.iterdir())
        assert (tmp_path / "empty").is_dir()  # a directory the operator made is kept
