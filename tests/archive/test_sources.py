"""Which directories ``headway export`` packages together, and its refusals: each a
one-line ``ExportError`` naming the directory."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from headway.archive.sources import find_sources
from headway.errors import ExportError
from headway.runtime.crawldir import CrawlIdentity


def _crawl_dir(root: Path, node: str, store: str = "", crawl_id: str | None = None) -> Path:
    (root / "warc").mkdir(parents=True)
    marker = {"format": 3, "node_id": node, "store": store, "crawl_id": crawl_id}
    (root / "headway.json").write_text(json.dumps(marker))
    prefix = f"headway-{node}" if store else "headway"
    (root / "warc" / f"{prefix}-20260101000000-00000.warc.gz").write_bytes(b"")
    return root


WHOLE = gzip.compress(b"WARC/1.1\r\n\r\n")


def _with_record(warc: Path) -> None:
    """One whole gzip member, then 15 bytes of a torn one."""
    warc.write_bytes(WHOLE + gzip.compress(b"x" * 100)[:15])


def test_one_crawl_directory(tmp_path: Path) -> None:
    d = _crawl_dir(tmp_path / "c", "n1")
    (warc,) = (d / "warc").iterdir()
    _with_record(warc)
    src = find_sources([d])
    assert src.identity == CrawlIdentity()
    (node,) = src.nodes
    assert node.index == d / "index.cdxj" and node.crawl_log == d / "crawl.log.jsonl"
    (part,) = node.warcs
    assert (part.size, part.cut) == (len(WHOLE), 15)  # the torn tail is left out


def test_nodes_of_a_shared_crawl(tmp_path: Path) -> None:
    dirs = []
    for node in ("a", "b"):
        d = _crawl_dir(tmp_path / node, node, "redis://127.0.0.1:1/0", "news")
        (warc,) = (d / "warc").iterdir()
        _with_record(warc)
        dirs.append(d)
    src = find_sources(dirs, CrawlIdentity("redis://127.0.0.1:1/0", "news"))
    assert [n.index.name for n in src.nodes] == ["index-a.cdxj", "index-b.cdxj"]
    assert len(src.warc_sizes()) == 2
    with pytest.raises(ExportError, match="belongs to the shared crawl 'news'"):
        find_sources(dirs, CrawlIdentity("redis://127.0.0.1:1/0", "sports"))


def _refusal(tmp_path: Path, dirs: list[Path]) -> str:
    with pytest.raises(ExportError) as info:
        find_sources(dirs)
    text = str(info.value)
    assert "\n" not in text
    return text


def test_refusals(tmp_path: Path) -> None:
    own = _crawl_dir(tmp_path / "own", "n1")
    _with_record(next((own / "warc").iterdir()))
    other = _crawl_dir(tmp_path / "other", "n2")
    _with_record(next((other / "warc").iterdir()))
    shared = _crawl_dir(tmp_path / "shared", "n3", "redis://127.0.0.1:1/0", "news")
    _with_record(next((shared / "warc").iterdir()))
    empty = _crawl_dir(tmp_path / "empty", "n4")
    (tmp_path / "file").write_text("x")
    foreign = tmp_path / "photos"
    foreign.mkdir()
    assert "no such directory" in _refusal(tmp_path, [tmp_path / "missing"])
    assert "not a directory" in _refusal(tmp_path, [tmp_path / "file"])
    assert "not a headway crawl directory" in _refusal(tmp_path, [foreign])
    assert "a WACZ packages one crawl" in _refusal(tmp_path, [own, shared])
    assert "two crawls with their own frontier" in _refusal(tmp_path, [own, other])
    assert "in both" in _refusal(tmp_path, [shared, shared])
    assert "nothing to package" in _refusal(tmp_path, [empty])
    (foreign / "headway.json").write_text("{not json")
    assert "unreadable" in _refusal(tmp_path, [foreign])


def test_the_command_checks_the_directories_against_store_and_crawl_id(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from headway.cli import main

    d = _crawl_dir(tmp_path / "a", "a", "redis://127.0.0.1:1/0", "news")
    _with_record(next((d / "warc").iterdir()))
    out = tmp_path / "news.wacz"
    base = ["export", str(d), "--wacz", str(out), "--store", "redis://127.0.0.1:1/0"]
    assert main([*base, "--crawl-id", "sports"]) == 2
    assert "belongs to the shared crawl 'news'" in capsys.readouterr().err
    assert not out.exists()
    assert (
        main(
            ["export", "--wacz", str(out), "--store", "redis://127.0.0.1:1/0", "--crawl-id", "news"]
        )
        == 2
    )
    assert "stay in its nodes' directories" in capsys.readouterr().err
    assert main([*base, "--crawl-id", "news"]) == 0
    assert "1 WARC files" in capsys.readouterr().out
    assert out.exists() and not (tmp_path / "news.wacz.partial").exists()
    assert main([*base, "--crawl-id", "news"]) == 2  # never overwritten
    assert "exists" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("logged", "what"),
    [
        (lambda a, b: len(a), "the last logged record, a whole member: read from there"),
        (lambda a, b: 3, "not a member boundary: the whole file is read"),
        (lambda a, b: len(a) + len(b) + 50, "past the end: the whole file is read"),
        (lambda a, b: 0, "no logged record: the whole file is read"),
    ],
)
def test_the_newest_file_keeps_its_whole_records_only(
    tmp_path: Path, logged: object, what: str
) -> None:
    d = _crawl_dir(tmp_path / "c", "n1")
    (warc,) = (d / "warc").iterdir()
    a, b = gzip.compress(b"WARC/1.1 first\r\n\r\n"), gzip.compress(b"WARC/1.1 second\r\n\r\n")
    warc.write_bytes(a + b + gzip.compress(bytes(range(256)) * 4)[:30])
    assert callable(logged)
    line = {"url": "http://a.sim/", "warc_file": warc.name, "warc_offset": logged(a, b)}
    (d / "crawl.log.jsonl").write_text(json.dumps(line, separators=(",", ":")) + "\n")
    (part,) = find_sources([d]).nodes[0].warcs
    assert (part.size, part.cut) == (len(a) + len(b), 30), what
