"""Conformance of canonicalize against shared/conformance/urls.jsonl.

Required classes (must_equal, crawler_common, whatwg_failure, must_not_equal) must all
pass except the cases in SKIP, each with its reason. whatwg_only and library_specific
cases are informative: they are counted, never failed.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from headway.urls.canonical import CanonOptions, canonicalize
from tests.conftest import load_conformance

CASES = load_conformance("urls.jsonl")
REQUIRED = frozenset({"must_equal", "crawler_common", "whatwg_failure", "must_not_equal"})
INFORMATIVE = frozenset({"whatwg_only", "library_specific"})

#: Deliberate departures from a required case: {case id: reason}.
SKIP: dict[str, str] = {
    "url-0059": (
        "userinfo is removed by canonicalization (credentials from links are never used "
        "or stored), so URLs differing only in userinfo name the same page"
    ),
    "url-0058": (
        "query parameters are sorted by default (CanonOptions.sort_query) so that "
        "reordered links dedupe; test_query_order_kept_without_sort covers the RFC reading"
    ),
}


def case_passes(case: dict[str, Any], options: CanonOptions | None = None) -> bool:
    """Whether headway's canonicalization agrees with one conformance case."""
    opts = options or CanonOptions()
    got = canonicalize(case["input"], case["base"], opts)
    if case["class"] == "whatwg_failure" or case["expected_failure"]:
        return got is None
    want = canonicalize(case["expected"], None, opts)
    if case["class"] == "must_not_equal" or case["kind"] == "not_equivalent":
        return got != want
    return got == want


def tally() -> dict[str, Counter[str]]:
    """Per-class pass/fail/skip counts over the whole file."""
    counts: dict[str, Counter[str]] = {}
    for case in CASES:
        c = counts.setdefault(case["class"], Counter())
        if case["id"] in SKIP:
            c["skipped"] += 1
        elif case_passes(case):
            c["passed"] += 1
        else:
            c["failed"] += 1
    return counts


def _ids(cases: list[dict[str, Any]]) -> list[str]:
    return [c["id"] for c in cases]


_REQUIRED_CASES = [c for c in CASES if c["class"] in REQUIRED]


@pytest.mark.parametrize("case", _REQUIRED_CASES, ids=_ids(_REQUIRED_CASES))
def test_required_case(case: dict[str, Any]) -> None:
    if case["id"] in SKIP:
        pytest.skip(SKIP[case["id"]])
    got = canonicalize(case["input"], case["base"])
    assert case_passes(case), (
        f"{case['id']} [{case['class']}] input={case['input']!r} base={case['base']!r} "
        f"expected={case['expected']!r} got={got!r} notes={case.get('notes', '')}"
    )


def test_query_order_kept_without_sort() -> None:
    opts = CanonOptions(sort_query=False)
    case = next(c for c in CASES if c["id"] == "url-0058")
    assert case_passes(case, opts)


def test_skip_list_names_real_required_cases() -> None:
    by_id = {c["id"]: c for c in CASES}
    for case_id in SKIP:
        assert by_id[case_id]["class"] in REQUIRED


def test_class_summary() -> None:
    counts = tally()
    lines = [
        f"{cls}: {c['passed']} passed, {c['failed']} failed, {c['skipped']} skipped"
        for cls, c in sorted(counts.items())
    ]
    print("\nurls.jsonl conformance\n" + "\n".join(lines))
    total = sum(sum(c.values()) for c in counts.values())
    assert total == len(CASES)
    for cls in REQUIRED:
        assert counts.get(cls, Counter())["failed"] == 0, cls
    assert set(counts) <= REQUIRED | INFORMATIVE
