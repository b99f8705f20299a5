"""Main-content quality: word 4-shingles of an extracted text against the true text.

The score of the public article-extraction benchmark (scrapinghub's, MIT licence):
words are runs of ``\\w`` characters (case kept); a page's shingles are its runs of four
consecutive words (a text of fewer than four words is one shingle of all of them), as a
multiset. Per page, matched shingles are true positives, extracted shingles beyond the
true count false positives, true ones beyond the extracted count false negatives, and
the three are divided by their sum so that every page weighs the same. Precision and
recall are averaged over the pages where they are defined; F1 is that of the two means.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["PageCounts", "Score", "page_counts", "score"]

_WORD = re.compile(r"\w+")
SHINGLE = 4


@dataclass(frozen=True, slots=True)
class PageCounts:
    """One page's true positives, false positives and false negatives (shares of 1)."""

    tp: float
    fp: float
    fn: float


@dataclass(frozen=True, slots=True)
class Score:
    precision: float
    recall: float
    f1: float
    pages: int


def _shingles(text: str) -> Counter[tuple[str, ...]]:
    words = _WORD.findall(text)
    if len(words) < SHINGLE:
        return Counter([tuple(words)] if words else [])
    return Counter(tuple(words[i : i + SHINGLE]) for i in range(len(words) - SHINGLE + 1))


def page_counts(true: str, extracted: str) -> PageCounts:
    """The normalised counts of one page (all zero when both texts have no words)."""
    want, got = _shingles(true), _shingles(extracted)
    tp = sum((want & got).values())
    fp = sum((got - want).values())
    fn = sum((want - got).values())
    total = tp + fp + fn
    if total == 0:
        return PageCounts(0.0, 0.0, 0.0)
    return PageCounts(tp / total, fp / total, fn / total)


def _precision(c: PageCounts) -> float:
    if c.fp == 0 and c.fn == 0:
        return 1.0
    return c.tp / (c.tp + c.fp) if c.tp + c.fp else 0.0


def _recall(c: PageCounts) -> float:
    if c.fp == 0 and c.fn == 0:
        return 1.0
    return c.tp / (c.tp + c.fn) if c.tp + c.fn else 0.0


def score(pages: Iterable[PageCounts]) -> Score:
    """Mean precision and recall over ``pages`` and their F1."""
    counts = list(pages)
    # precision is defined where something was extracted, recall where there was text
    precisions = [_precision(c) for c in counts if c.tp + c.fp > 0]
    recalls = [_recall(c) for c in counts if c.tp + c.fn > 0]
    p = sum(precisions) / len(precisions) if precisions else 0.0
    r = sum(recalls) / len(recalls) if recalls else 0.0
    f1 = 2 * p * r / (p + r) if p + r else 0.0
    return Score(p, r, f1, len(counts))
