"""Conformance of canonicalize against tests/data/conformance/urls.jsonl.

Required classes (must_equal, crawler_common, whatwg_failure, must_not_equal) must all
pass except the cases in SKIP, each with its reason. whatwg_only and library_specific
cases are informative: they are counted, never failed.

An equivalence case passes when headway's output equals the expected string as written,
after only the normalizations written out in ``as_headway_writes`` below (RFC 3986
section 6.2.2 and headway's documented policy: no fragment, no userinfo, no empty query,
IDNA hosts). The expected string is never passed through the code under test.
"""

from __future__ import annotations

import re
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
    "url-0001": "only http and https URLs are crawled; any other scheme is refused",
    "url-0112": "only http and https URLs are crawled; any other scheme is refused",
    "url-0105": "canonical URLs are absolute: a relative reference without a base is refused",
    "url-0107": "canonical URLs are absolute: a relative reference without a base is refused",
    "url-0189": (
        "a percent-encoded byte in a host is refused (WHATWG host parsing), where the "
        "case keeps it as written"
    ),
    "url-0194": (
        "a percent-encoded byte in a host is refused (WHATWG host parsing), where the "
        "case keeps it as written"
    ),
    "url-0058": (
        "query parameters are sorted by default (CanonOptions.sort_query) so that "
        "reordered links dedupe; test_query_order_kept_without_sort covers the RFC reading"
    ),
}


_TRIPLET = re.compile(r"%([0-9A-Fa-f]{2})")
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


def _percent(m: re.Match[str]) -> str:
    char = chr(int(m.group(1), 16))
    return char if char in _UNRESERVED else "%" + m.group(1).upper()


def _idna(host: str) -> str:
    labels = []
    for label in host.split("."):
        if label.isascii():
            labels.append(label.lower())
        else:
            labels.append("xn--" + label.lower().encode("punycode").decode("ascii"))
    return ".".join(labels)


def as_headway_writes(url: str) -> str:
    """The expected URL with the normalizations headway makes on purpose, written out
    here independently of headway: fragment, userinfo and an empty query dropped, an
    empty path written ``/``, the host IDNA-encoded, percent-encoded unreserved
    characters decoded and other triplets upper-cased (RFC 3986 6.2.2)."""
    url = url.split("#", 1)[0]
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    authority, slash, tail = rest.partition("/")
    path_query = slash + tail
    if "?" in authority:  # "http://host?q": the query starts in what looked like authority
        authority, q, query = authority.partition("?")
        path_query = "?" + query + path_query if q else path_query
    authority = authority.rpartition("@")[2]
    host, colon, port = authority.rpartition(":") if ":" in authority else (authority, "", "")
    authority = _idna(host) + colon + port
    if path_query.endswith("?") and path_query.count("?") == 1:
        path_query = path_query[:-1]
    if not path_query.startswith("/"):
        path_query = "/" + path_query
    return f"{scheme.lower()}://{authority}{_TRIPLET.sub(_percent, path_query)}"


def case_passes(case: dict[str, Any], options: CanonOptions | None = None) -> bool:
    """Whether headway's canonicalization agrees with one conformance case."""
    opts = options or CanonOptions()
    got = canonicalize(case["input"], case["base"], opts)
    if case["class"] == "whatwg_failure" or case["expected_failure"]:
        return got is None
    if case["class"] == "must_not_equal" or case["kind"] == "not_equivalent":
        # two URLs that must stay apart: headway must not map them to one
        return got != canonicalize(case["expected"], None, opts)
    return got == as_headway_writes(case["expected"])


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
        f"expected={case['expected']!r} (as headway writes it: "
        f"{as_headway_writes(case['expected'])!r}) got={got!r} notes={case.get('notes', '')}"
    )


def test_query_order_kept_without_sort() -> None:
    opts = CanonOptions(sort_query=False)
    case = next(c for c in CASES if c["id"] == "url-0058")
    assert case_passes(case, opts)


def test_skip_list_names_real_required_cases() -> None:
    by_id = {c["id"]: c for c in CASES}
    for case_id in SKIP:
        assert by_id[case_id]["class"] in REQUIRED


@pytest.mark.parametrize(
    ("written", "normalized"),
    [
        ("http://user:pw@Ex.com:81/a%2fb%41?#frag", "http://ex.com:81/a%2FbA"),
        ("http://g", "http://g/"),
        ("http://www.archive.org?", "http://www.archive.org/"),
        ("http://x.org/?a=1#f", "http://x.org/?a=1"),
        ("http://ex.com/p?q=%7e", "http://ex.com/p?q=~"),
        ("http://é.jp/", "http://xn--9ca.jp/"),
    ],
)
def test_the_expected_string_normalization_itself(written: str, normalized: str) -> None:
    assert as_headway_writes(written) == normalized


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
