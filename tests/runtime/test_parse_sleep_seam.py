"""Making the parse stage slow is a test seam, not a user setting: the variable
``HEADWAY_TEST_PARSE_SLEEP`` read when a parser pool starts; no flag, no settings key, no
line in the settings docs."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from headway.parse.page import ParseTask
from headway.runtime.parsepool import PARSE_SLEEP_ENV, ParsePool
from headway.settings import KEYS, load_env

ROOT = Path(__file__).resolve().parents[2]


def test_the_seam_is_not_a_setting() -> None:
    assert not [k.name for k in KEYS if "sleep" in k.name]
    out = subprocess.run(
        [sys.executable, "-m", "headway.cli", "crawl", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0
    assert "--max-depth" in out.stdout  # the help was read
    assert "sleep" not in out.stdout.lower()
    assert "sleep" not in (ROOT / "docs" / "settings.md").read_text().lower()
    # the variable is no unknown setting to the environment layer either
    assert load_env({PARSE_SLEEP_ENV: "0.5"}) == {}


async def test_parser_processes_sleep_as_the_seam_asks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(PARSE_SLEEP_ENV, "0.3")
    pool = ParsePool(1, 2)
    try:
        pool.warm_up()
        tasks = [ParseTask(url=f"http://example.com/{i}", body=b"<a href=/x>") for i in range(2)]
        started = time.monotonic()
        pages = await pool.parse_many(tasks)
        took = time.monotonic() - started
    finally:
        pool.close()
    assert [getattr(p, "links", p) for p in pages] == [("http://example.com/x",)] * 2
    assert took >= 2 * 0.3  # each page slept, in the parser process


def test_a_bad_value_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(PARSE_SLEEP_ENV, "slow")
    with pytest.raises(ValueError, match=PARSE_SLEEP_ENV):
        ParsePool(1, 2)
