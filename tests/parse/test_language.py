"""Language of a text against a labelled multilingual sample (tests/data/languages)."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

from headway.parse.language import ISO_639_3, MAX_LANGUAGES, identify

DATA = Path(__file__).resolve().parent.parent / "data" / "languages" / "sentences.jsonl"


def _by_language() -> dict[str, list[str]]:
    out: dict[str, list[str]] = defaultdict(list)
    for line in DATA.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        out[row["lang"]].append(row["text"])
    return out


def test_sample_is_whole() -> None:
    sample = _by_language()
    assert len(sample) == 62
    assert all(len(texts) == 20 for texts in sample.values())


def test_paragraphs_of_five_sentences() -> None:
    # page text is paragraphs, not lone sentences: 237 of 248 (0.956) when measured
    right = total = 0
    for lang, texts in _by_language().items():
        for i in range(0, 20, 5):
            found = identify(" ".join(texts[i : i + 5]))
            total += 1
            right += bool(found) and found[0] == lang
    assert total == 248
    assert right / total >= 0.93


def test_single_sentences() -> None:
    # harder (many are a few words long): 868 of 1240 (0.70) when measured
    pairs = [(lang, identify(t)) for lang, texts in _by_language().items() for t in texts]
    right = sum(bool(found) and found[0] == lang for lang, found in pairs)
    assert right / len(pairs) >= 0.65


@pytest.mark.parametrize("text", ["", "   ", "12345 67890 !!! ... 2024-05-01", "ab cd"])
def test_too_little_text_has_no_language(text: str) -> None:
    assert identify(text) == ()


def test_codes_are_iso_639_3() -> None:
    found = identify("Le renard brun rapide saute par-dessus le chien paresseux. " * 3)
    assert found[0] == "fra"
    assert 1 <= len(found) <= MAX_LANGUAGES
    assert all(len(code) == 3 for code in ISO_639_3.values())
    assert len(set(ISO_639_3.values())) == len(ISO_639_3)


def test_cost_is_bounded_by_the_characters_read() -> None:
    # a 10 MB text is read only as far as MAX_CHARS
    assert identify("Der Hund läuft schnell über die Wiese. " * 250_000)[0] == "deu"
