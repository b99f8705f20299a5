"""Parsing of HEADWAY_CRASH_AT and the counting of reaches (the kills themselves are
tested by the crash-and-restart crawls in tests/integration/test_crash_points.py)."""

from __future__ import annotations

import pytest

from headway import crashpoints
from headway.crashpoints import CrashPoint


def test_name_and_count_are_parsed() -> None:
    assert crashpoints._parse(None) is None
    assert crashpoints._parse("") is None
    assert crashpoints._parse("warc-partial") == (CrashPoint.WARC_PARTIAL, 1)
    assert crashpoints._parse("settled:7") == (CrashPoint.SETTLED, 7)


@pytest.mark.parametrize("bad", ["nowhere", "settled:0", "settled:x", "settled:-2"])
def test_bad_values_are_refused_with_the_names(bad: str) -> None:
    with pytest.raises(ValueError, match="HEADWAY_CRASH_AT") as err:
        crashpoints._parse(bad)
    if not bad.startswith("settled"):
        assert "warc-partial" in str(err.value)


def test_only_the_nth_reach_of_the_armed_point_hits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(crashpoints, "ARMED_POINT", CrashPoint.SETTLED)
    monkeypatch.setattr(crashpoints, "_remaining", 3)
    assert not crashpoints.hit(CrashPoint.LEASED)  # another point never counts
    assert [crashpoints.hit(CrashPoint.SETTLED) for _ in range(5)] == [
        False,
        False,
        True,
        False,
        False,
    ]
