"""The conformance cases the tests read are all inside the repository, each listed with
its source, version and licence in tests/data/conformance/README.md."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest

from tests.conftest import CONFORMANCE_DIR, load_conformance

ROOT = Path(__file__).resolve().parents[1]
_ROW = re.compile(r"^\| `([^`]+\.jsonl)` \| (\d+) \| `([0-9a-f]{64})` \|")


def listed(readme: str) -> dict[str, tuple[int, str]]:
    """file -> (cases, SHA-256) from the README's table of files."""
    out: dict[str, tuple[int, str]] = {}
    for line in readme.splitlines():
        m = _ROW.match(line)
        if m:
            out[m.group(1)] = (int(m.group(2)), m.group(3))
    return out


LISTED = listed((CONFORMANCE_DIR / "README.md").read_text())


def test_the_cases_live_inside_the_repository() -> None:
    assert CONFORMANCE_DIR.is_relative_to(ROOT), CONFORMANCE_DIR
    assert set(LISTED) == {"robots_google.jsonl", "urls.jsonl", "html_links.jsonl"}


@pytest.mark.parametrize("name", sorted(LISTED))
def test_each_listed_file_is_there_whole(name: str) -> None:
    cases, sha256 = LISTED[name]
    path = CONFORMANCE_DIR / name
    assert path.is_file(), f"conformance file missing: {path}"
    assert hashlib.sha256(path.read_bytes()).hexdigest() == sha256, f"{name} changed"
    assert len(load_conformance(name)) == cases


def test_every_file_there_is_listed_with_its_sources() -> None:
    readme = (CONFORMANCE_DIR / "README.md").read_text()
    for path in CONFORMANCE_DIR.glob("*.jsonl"):
        assert path.name in LISTED, f"{path.name} is not listed in the README"
        sources = [line for line in readme.splitlines() if line.startswith(f"| `{path.name}` |")]
        # the file's row in the files table, and at least one row of source, version, licence
        assert len(sources) >= 2, path.name


def test_a_missing_file_fails_loudly(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import tests.conftest as conftest

    monkeypatch.setattr(conftest, "CONFORMANCE_DIR", tmp_path)
    with pytest.raises(pytest.fail.Exception, match="conformance file missing"):
        conftest.load_conformance("urls.jsonl")
