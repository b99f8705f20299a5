"""Shared test fixtures."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

#: Third-party conformance cases live beside the project folder.
CONFORMANCE_DIR = Path(__file__).resolve().parents[2] / "shared" / "conformance"


def load_conformance(name: str) -> list[dict[str, Any]]:
    """Cases of one conformance file; the test fails loudly if the file is missing."""
    path = CONFORMANCE_DIR / name
    if not path.exists():
        pytest.fail(f"conformance file missing: {path}")
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.fixture
def tmp_crawl_dir(tmp_path: Path) -> Iterator[Path]:
    d = tmp_path / "crawl"
    yield d
