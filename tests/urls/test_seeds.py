"""parse_seeds and load_seeds: table tests."""

from __future__ import annotations

import io
import re
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from headway.errors import SeedError
from headway.urls.canonical import CanonOptions
from headway.urls.scope import ScopeMode, SeedScope
from headway.urls.seeds import SeedProblem, load_seeds, parse_seeds

LINES = [
    "# seeds for the test crawl",  # 1
    "",  # 2
    "example.org",  # 3
    "https://Example.org/",  # 4 duplicate of 3
    "example.org/news?utm_source=x  # launch list",  # 5
    "http://blog.example.net:8080/a/../b",  # 6
    "   ",  # 7
    "ftp://files.example.com/",  # 8
    "mailto:web@example.com",  # 9
    "http://exa mple.com/",  # 10
    "http://[broken/",  # 11
    "localhost:8080",  # 12
    "https://example.org/page#section",  # 13
    "/just/a/path",  # 14
    "bücher.de",  # 15
]


def test_parse_seeds_table() -> None:
    result = parse_seeds(LINES)
    seeds, problems = result.urls, result.problems
    assert result.unusable == 5
    assert seeds == [
        "https://example.org/",
        "https://example.org/news",
        "http://blog.example.net:8080/b",
        "https://localhost:8080/",
        "https://example.org/page",
        "https://xn--bcher-kva.de/",
    ]
    assert [(p.line_no, p.line) for p in problems] == [
        (8, "ftp://files.example.com/"),
        (9, "mailto:web@example.com"),
        (10, "http://exa mple.com/"),
        (11, "http://[broken/"),
        (14, "/just/a/path"),
    ]
    reasons = {p.line_no: p.reason for p in problems}
    assert "unsupported scheme 'ftp'" in reasons[8]
    assert "unsupported scheme 'mailto'" in reasons[9]
    assert "whitespace" in reasons[10]
    assert reasons[11] == "not a valid URL"


def test_default_scheme_and_options() -> None:
    result = parse_seeds(
        ["example.org/?b=1&a=2"], default_scheme="http", options=CanonOptions(sort_query=False)
    )
    seeds, problems = result.urls, result.problems
    assert seeds == ["http://example.org/?b=1&a=2"]
    assert problems == []
    with pytest.raises(ValueError):
        parse_seeds(["example.org"], default_scheme="ftp")


def test_seed_problem_is_a_value() -> None:
    p = SeedProblem(3, "x", "bad")
    assert p == SeedProblem(3, "x", "bad")
    with pytest.raises(AttributeError):
        p.reason = "other"  # type: ignore[misc]


def test_load_seeds_reads_utf8_with_bom(tmp_path: Path) -> None:
    path = tmp_path / "seeds.txt"
    path.write_bytes("\ufeffexample.org\r\nnot a seed\r\nhttps://bücher.de/x\r\n".encode())
    result = load_seeds(path)
    seeds, problems = result.urls, result.problems
    assert seeds == ["https://example.org/", "https://xn--bcher-kva.de/x"]
    assert [p.line_no for p in problems] == [2]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read seeds file"),
        (b"\xff\xfe\nexample\xff.org\n", "no usable seed .*line 1: not UTF-8; line 2: not UTF-8"),
        (b"", "no usable seed"),
        (b"# only a comment\n\n", "no line but blank lines and # comments"),
        (b"ftp://a.org/\n", "line 1: unsupported scheme"),
    ],
)
def test_load_seeds_errors(tmp_path: Path, content: bytes | None, message: str) -> None:
    path = tmp_path / "seeds.txt"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(SeedError, match=message):
        load_seeds(path)


@pytest.mark.parametrize("line", ["ht!tp://", "a..b", "-bad-.com", "http://exa$mple.com/"])
def test_seed_hosts_must_be_real_host_names(line: str) -> None:
    result = parse_seeds([line])
    assert result.urls == []
    assert len(result.problems) == 1 and "host name" in result.problems[0].reason


@pytest.mark.parametrize("line", ["my_host.example.com", "http://127.0.0.1:8080/", "bücher.de"])
def test_seed_hosts_accepted(line: str) -> None:
    result = parse_seeds([line])
    assert len(result.urls) == 1 and result.problems == []


def test_overlong_lines_are_problems_read_in_bounded_memory(tmp_path: Path) -> None:
    import tracemalloc

    from headway.urls.seeds import MAX_SEED_LINE

    path = tmp_path / "seeds.txt"
    with path.open("wb") as fh:
        fh.write(b"http://a.example/" + b"x" * 20_000_000 + b"\nexample.org\n")
        fh.write(b"http://b.example/" + b"y" * MAX_SEED_LINE)  # last line, no newline
    tracemalloc.start()
    try:
        result = load_seeds(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert result.urls == ["https://example.org/"]
    assert [(p.line_no, p.reason) for p in result.problems] == [
        (1, f"line longer than {MAX_SEED_LINE} bytes"),
        (3, f"line longer than {MAX_SEED_LINE} bytes"),
    ]
    assert peak < 1_000_000, peak  # never the 20 MB line


def test_only_seed_unusable_is_no_usable_seed(tmp_path: Path) -> None:
    path = tmp_path / "seeds.txt"
    path.write_bytes(b"http://a.example/" + b"a" * 50_000_000 + b"\n")
    with pytest.raises(SeedError, match=r"no usable seed .*line 1: line longer than"):
        load_seeds(path)
    path.write_bytes(b"http://a.example/" + b"a" * 3000 + b"\n")
    with pytest.raises(SeedError, match="URL longer than 2083"):
        load_seeds(path, max_length=2083)


def test_endless_source_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import headway.urls.seeds as seeds_module

    monkeypatch.setattr(seeds_module, "MAX_SEEDS_BYTES", 1_000_000)
    path = tmp_path / "seeds.txt"
    path.write_bytes(b"http://a.example/\n" * 100_000)
    with pytest.raises(SeedError, match="larger than"):
        load_seeds(path)
    with pytest.raises(SeedError, match="larger than"):
        load_seeds(Path("/dev/zero"))


def test_problems_kept_are_bounded_and_short() -> None:
    from headway.urls.seeds import MAX_PROBLEMS, SHOWN_CHARS

    lines = [f"ftp://{i}.example/{'p' * 500}" for i in range(MAX_PROBLEMS + 50)]
    result = parse_seeds(lines)
    assert len(result.problems) == MAX_PROBLEMS
    assert result.unusable == MAX_PROBLEMS + 50
    assert max(len(p.line) for p in result.problems) <= SHOWN_CHARS + 3


def test_lines_that_are_not_utf8_are_skipped_and_the_rest_kept(tmp_path: Path) -> None:
    path = tmp_path / "seeds.txt"
    path.write_bytes(
        b"\xef\xbb\xbfexample.org\n"  # a byte-order mark on line 1 is not a problem
        b"caf\xe9.example\n"  # Latin-1
        b"a.example\r\n"
        b"\xff\xfe\x00b\x00\n"  # UTF-16
        b"b.example"  # last line, no newline
    )
    result = load_seeds(path)
    assert result.urls == ["https://example.org/", "https://a.example/", "https://b.example/"]
    assert [(p.line_no, p.reason) for p in result.problems] == [
        (2, "not UTF-8"),
        (4, "not UTF-8"),
    ]
    assert result.unusable == 2
    path.write_bytes(b"a.example\nb\xe9.example")  # the last line, undecodable
    result = load_seeds(path)
    assert result.urls == ["https://a.example/"]
    assert [(p.line_no, p.reason) for p in result.problems] == [(2, "not UTF-8")]


def test_dash_reads_seeds_from_standard_input(monkeypatch: pytest.MonkeyPatch) -> None:
    class Stdin:
        buffer = io.BytesIO(b"# piped\nexample.org\nhttp://b.example/x\n")

    monkeypatch.setattr(sys, "stdin", Stdin)
    seeds = load_seeds(Path("-"))
    assert seeds.urls == ["https://example.org/", "http://b.example/x"]


@pytest.mark.parametrize(
    ("line", "seed"),
    [
        ("intranet", None),
        ("g", None),
        ("intranet/news", None),
        ("intranet:8080", None),
        ("bücher", None),
        ("7", None),
        ("0x7f", None),
        ("http://intranet/", "http://intranet/"),
        ("https://g/", "https://g/"),
        ("localhost", "https://localhost/"),
        ("localhost:8080/x", "https://localhost:8080/x"),
        ("127.0.0.1", "https://127.0.0.1/"),
        ("[::1]:8080", "https://[::1]:8080/"),
        ("example.org", "https://example.org/"),
        ("intranet.corp", "https://intranet.corp/"),
    ],
)
def test_a_bare_word_without_a_scheme_is_no_domain(line: str, seed: str | None) -> None:
    result = parse_seeds([line])
    if seed is None:
        assert result.urls == []
        assert len(result.problems) == 1 and "bare word" in result.problems[0].reason
        assert result.unusable == 1
    else:
        assert result.urls == [seed] and result.problems == []


def test_random_binary_bytes_yield_no_seed(tmp_path: Path) -> None:
    import random

    rng = random.Random(15)
    alphabet = bytes(range(256)) + b"\n" * 64  # short lines: some are one letter
    path = tmp_path / "seeds.bin"
    for _ in range(20):
        path.write_bytes(bytes(rng.choice(alphabet) for _ in range(4096)))
        try:
            urls = load_seeds(path).urls
        except SeedError:
            continue
        # a line of noise may hold a dot ('a.p'); none that is one word becomes a seed
        # (not 'g', nor '7' read as the address 0.0.0.7)
        hosts = [urlsplit(u).hostname or "" for u in urls]
        assert all("." in h and re.search("[a-z]", h) for h in hosts), hosts


def test_seed_options_and_their_errors_by_line() -> None:
    lines = [
        "https://example.org/docs/ scope=prefix depth=3 extra-hops=1",
        "https://example.org/blog/ scope=PREFIX depth=1",
        "example.net extra-hops=2  # a comment",
        "https://a.org/ colour=blue",
        "https://b.org/ scope=everything",
        "https://c.org/ depth=-1",
        "https://d.org/ extra-hops=101",
        "https://e.org/ depth=1 depth=2",
        "https://f.org/ with space",
        "https://g.org/",
    ]
    got = parse_seeds(lines)
    assert got.urls == [
        "https://example.org/docs/",
        "https://example.org/blog/",
        "https://example.net/",
        "https://g.org/",
    ]
    assert got.scopes == {
        "https://example.org/docs/": SeedScope(ScopeMode.PREFIX, 3, 1),
        "https://example.org/blog/": SeedScope(ScopeMode.PREFIX, 1, None),
        "https://example.net/": SeedScope(None, None, 2),
    }
    assert [(p.line_no, p.reason) for p in got.problems] == [
        (4, "unknown seed option 'colour' (one of scope, depth, extra-hops)"),
        (5, "scope='everything': one of seed-domains, seed-hosts, prefix, open"),
        (6, "depth='-1': a whole number from 0 to 10000"),
        (7, "extra-hops='101': a whole number from 0 to 100"),
        (8, "seed option 'depth' given twice"),
        (9, "whitespace inside the URL"),
    ]
