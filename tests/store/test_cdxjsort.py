"""The index is sorted in place in bytes order, with bounded memory (merged runs)."""

from __future__ import annotations

import random
from pathlib import Path

from headway.store.cdxjsort import discard_leftovers, is_sorted, sort_index, sorted_lines


def _line(rng: random.Random) -> bytes:
    host = rng.choice(["com,example", "org,example", "com,example,www", "net,a"])
    path = "".join(rng.choice("ab/-_") for _ in range(rng.randint(0, 6)))
    stamp = f"2026{rng.randint(10**9, 10**10 - 1)}"
    return f'{host}){path} {stamp} {{"url": "x", "length": "{rng.randint(1, 99)}"}}\n'.encode()


def test_sorted_in_bytes_order_across_runs(tmp_path: Path) -> None:
    rng = random.Random(5)
    lines = [_line(rng) for _ in range(200)]
    lines += lines[:10]  # duplicates are kept
    index = tmp_path / "index.cdxj"
    index.write_bytes(b"".join(lines))
    assert not is_sorted(index)
    assert sort_index(index, run_lines=7)  # about 30 runs merged
    assert index.read_bytes() == b"".join(sorted(lines))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["index.cdxj"]  # no run left
    assert not sort_index(index)  # already sorted: not rewritten


def test_space_sorts_before_any_path_character(tmp_path: Path) -> None:
    """pywb searches for ``<key> `` : ``com,example)/ 2026`` must come before
    ``com,example)/a 2026`` (bytes order, not locale order)."""
    index = tmp_path / "index.cdxj"
    index.write_bytes(b"com,example)/a 20260101000000 {}\ncom,example)/ 20260101000000 {}\n")
    sort_index(index)
    assert index.read_bytes().splitlines()[0].startswith(b"com,example)/ ")


def test_a_missing_last_newline_is_added_and_leftovers_go(tmp_path: Path) -> None:
    index = tmp_path / "index.cdxj"
    index.write_bytes(b"b 20260101000000 {}\na 20260101000000 {}")
    (tmp_path / "index.cdxj.sorting").write_bytes(b"half")
    (tmp_path / "index.cdxj.run-3").write_bytes(b"run")
    discard_leftovers(index)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["index.cdxj"]
    sort_index(index)
    assert index.read_bytes() == b"a 20260101000000 {}\nb 20260101000000 {}\n"
    assert not sort_index(tmp_path / "absent.cdxj")


def test_looks_sorted_reads_samples_and_catches_an_unsorted_tail(tmp_path: Path) -> None:
    from headway.store.cdxjsort import SAMPLE_BYTES, looks_sorted

    index = tmp_path / "index.cdxj"
    lines = [f"org,example)/p/{i:07d} 20260101000000 {{}}\n" for i in range(20_000)]
    index.write_text("".join(lines))
    assert index.stat().st_size > 4 * SAMPLE_BYTES  # samples, not the whole file
    assert looks_sorted(index)
    with index.open("a") as fh:  # a killed run's lines, appended in capture order
        fh.write("org,zzz)/ 20260102000000 {}\norg,aaa)/ 20260102000001 {}\n")
    assert not looks_sorted(index)


def test_sorted_lines_leave_the_index_as_it_is(tmp_path: Path) -> None:
    rng = random.Random(9)
    lines = [_line(rng) for _ in range(100)]
    index = tmp_path / "index.cdxj"
    index.write_bytes(b"".join(lines))
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    with sorted_lines(index, scratch, run_lines=9) as it:
        got = list(it)
        assert len(list(scratch.iterdir())) == 12  # runs while the merge reads them
    assert got == sorted(lines)
    assert index.read_bytes() == b"".join(lines)  # not rewritten
    assert list(scratch.iterdir()) == []  # the runs are gone
    index.write_bytes(b"".join(sorted(lines)))
    with sorted_lines(index, scratch, run_lines=9) as it:
        assert list(it) == sorted(lines)
        assert list(scratch.iterdir()) == []  # a sorted index is read as it is
    with sorted_lines(tmp_path / "absent.cdxj", scratch) as it:
        assert list(it) == []
