"""Main-content text against hand-checked article bodies (tests/data/articles): the
shingle F1 of the main mode must reach a threshold that all visible text does not."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from headway.bench.textscore import Score, page_counts, score
from headway.parse.charset import decode_body, detect_charset
from headway.parse.text import extract_text

DATA = Path(__file__).resolve().parent.parent / "data" / "articles"
#: Main content scores 0.938 on these ten pages (0.934 on all 181), all text 0.652.
THRESHOLD = 0.90


def _pages() -> list[tuple[str, str]]:
    truth = json.loads((DATA / "ground-truth.json").read_text())
    out = []
    for key, value in sorted(truth.items()):
        raw = gzip.decompress((DATA / "html" / f"{key}.html.gz").read_bytes())
        out.append((decode_body(raw, detect_charset("text/html", raw)), value["articleBody"]))
    return out


def _score(mode: str) -> Score:
    return score(page_counts(true, extract_text(html, mode)) for html, true in _pages())  # type: ignore[arg-type]


def test_sample_is_whole() -> None:
    assert len(_pages()) == 10


def test_main_content_reaches_the_threshold() -> None:
    s = _score("main")
    assert s.pages == 10
    assert s.f1 >= THRESHOLD, s


def test_all_visible_text_fails_the_threshold() -> None:
    # what the threshold is for: text with navigation and footers left in does not pass
    s = _score("all")
    assert s.f1 < THRESHOLD - 0.1, s
    assert s.recall > 0.95  # the article is in there, among everything else


def test_accurate_mode_is_better_still() -> None:
    pytest.importorskip("trafilatura")
    assert _score("accurate").f1 >= 0.95


@pytest.mark.parametrize(
    ("true", "extracted", "f1"),
    [
        ("one two three four five", "one two three four five", 1.0),
        ("one two three four five", "", 0.0),
        # two shingles true, one of them extracted with one wrong: tp 1, fp 1, fn 1
        ("a b c d e", "a b c d x", 0.5),
        # fewer than four words: one shingle of them all
        ("a b", "a b", 1.0),
    ],
)
def test_shingle_score_of_one_page(true: str, extracted: str, f1: float) -> None:
    s = score([page_counts(true, extracted)])
    assert s.f1 == pytest.approx(f1)
