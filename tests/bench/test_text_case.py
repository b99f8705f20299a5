"""``headway bench --text MODE``: the case crawls with the text output on, and says so."""

from __future__ import annotations

from pathlib import Path

from headway.bench.harness import BenchCase, bench_settings


def test_text_case_turns_the_output_on(tmp_path: Path) -> None:
    off = bench_settings(tmp_path, 1)
    on = bench_settings(tmp_path, 1, text="all")
    assert not off.text.text
    assert on.text.text and on.text.text_mode == "all"
    case = BenchCase("http", 0.0, 1, 5, 5, 5, 8, 1, 1.0, text="main")
    assert case.name.endswith("text main")
    assert not BenchCase("http", 0.0, 1, 5, 5, 5, 8, 1, 1.0).name.endswith("text main")
