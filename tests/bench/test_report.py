"""The bench report's ratios: one round as before, or the median of repeated rounds."""

from __future__ import annotations

import importlib.util
import re

import pytest

from headway.bench.harness import BenchCase, BenchResult
from headway.bench.report import report_lines


def _result(
    gap: float, ms_per_page: float, round_: int = 0, client: str = "aiohttp"
) -> BenchResult:
    case = BenchCase("http", gap, 1, 2, 3, 3, 1, 1, 10.0, round=round_, client=client)
    # all-in CPU per page = crawl_cpu / pages; steady from the progress samples
    progress = ((0.5, 10), (1.0, 100), (2.0, 100 + int(1000 / ms_per_page)))
    return BenchResult(case, pages=1000, crawl_cpu=ms_per_page, progress=progress)


def test_one_round_gives_one_ratio_line_per_pair() -> None:
    lines = report_lines([_result(0.0, 2.0), _result(1.0, 2.2)])
    ratio = [line for line in lines if line.startswith("gap 1s / no gap")]
    assert ratio == ["gap 1s / no gap (http 1x): CPU per page 1.10x (steady 1.10x)"]
    assert any(line.startswith("http gap 0s 1x ") for line in lines)  # no round number


def test_repeated_rounds_give_the_median_and_every_round() -> None:
    results = []
    for n, (a, b) in enumerate([(2.0, 2.6), (2.0, 2.1), (2.0, 2.2)]):
        results += [_result(0.0, a, n), _result(1.0, b, n)]
    lines = report_lines(results)
    ratio = [line for line in lines if line.startswith("gap 1s / no gap")]
    assert ratio == [
        "gap 1s / no gap (http 1x): CPU per page median 1.10x over 3 rounds "
        "(1.30 1.05 1.10); steady median 1.10x (1.30 1.05 1.10)"
    ]
    # every run has its row, numbered by round
    rows = [line.split()[4] for line in lines if re.match(r"http gap 1s 1x #\d +1000 ", line)]
    assert rows == ["#1", "#2", "#3"]


def test_a_second_client_is_compared_with_aiohttp_in_the_same_case() -> None:
    """``--http-client aiohttp curl``: one ratio per case, aiohttp's CPU per page over
    libcurl's; the gap ratio stays the default client's."""
    results = [_result(0.0, 2.0), _result(0.0, 1.6, client="curl")]
    results += [_result(1.0, 2.2), _result(1.0, 2.0, client="curl")]
    lines = report_lines(results)
    clients = [line.split(";")[0] for line in lines if line.startswith("aiohttp / curl")]
    assert clients == [
        "aiohttp / curl (http gap 0s 1x): CPU per page 1.25x (steady 1.25x)",
        "aiohttp / curl (http gap 1s 1x): CPU per page 1.10x (steady 1.10x)",
    ]
    gaps = [line for line in lines if line.startswith("gap 1s / no gap")]
    assert gaps == ["gap 1s / no gap (http 1x): CPU per page 1.10x (steady 1.10x)"]
    assert any(line.startswith("http gap 1s 1x curl ") for line in lines)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--repeat", "0"], "--repeat must be 1..100"),
        (["--server-idle", "-1"], "--server-idle must be 0..86400 seconds"),
        (["--gaps", "-1"], "gaps >= 0"),
    ],
)
def test_bad_bench_arguments_give_one_line_and_run_nothing(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from headway.cli.commands import main

    assert main(["bench", *args]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("headway: error:") and message in err[0], err


def test_bench_with_a_client_not_installed_runs_nothing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from headway.cli.commands import main

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "pycurl" else real(name, *a)
    )
    assert main(["bench", "--http-client", "aiohttp", "curl"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--http-client" in err[0] and "needs pycurl" in err[0], err


def test_a_failed_run_makes_the_bench_fail(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run that failed (its crawler exited early) is reported and the exit code says so."""
    from headway.bench import harness
    from headway.cli.commands import main

    def run(cases: list[BenchCase]) -> list[BenchResult]:
        return [_result(0.0, 2.0), BenchResult(cases[-1], error="crawler exited with 2")]

    monkeypatch.setattr(harness, "run_bench", run)
    assert main(["bench", "--gaps", "0", "1"]) == 1
    captured = capsys.readouterr()
    assert "crawler exited with 2" in captured.out
    assert "1 of 2 runs failed" in captured.err
