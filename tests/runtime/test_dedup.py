"""``--dedup-from``: which index files a path names, the refusals (one line, naming the
setting), and the earlier captures put into a frontier once per index file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from headway.errors import ConfigError
from headway.runtime.dedup import dedup_indexes, import_earlier_payloads

LINES = (
    'org,a)/ 20240101000000 {"url": "https://a.org/", "mime": "text/html", "status": "200", '
    '"digest": "sha1:AAA", "length": "9", "offset": "0", "filename": "x.warc.gz"}\n'
    'org,a)/b 20240101000001 {"url": "https://a.org/b", "mime": "warc/revisit", '
    '"status": "200", "digest": "sha1:AAA", "length": "9", "offset": "9", "filename": "x"}\n'
    'org,a)/c 20240102030405 {"url": "https://a.org/c", "mime": "text/html", "status": "304",'
    ' "digest": "sha1:CCC", "length": "9", "offset": "18", "filename": "x"}\n'
    "a partial line\n"
)


class FakeFrontier:
    def __init__(self) -> None:
        self.meta: dict[str, str] = {}
        self.payloads: list[tuple[str, str, str]] = []

    def get_meta(self, key: str) -> str | None:
        return self.meta.get(key)

    def set_meta(self, key: str, value: str) -> None:
        self.meta[key] = value

    def put_payloads(self, items: Any) -> None:
        self.payloads.extend(items)


def test_paths_and_refusals(tmp_path: Path) -> None:
    crawl = tmp_path / "crawl"
    crawl.mkdir()
    (crawl / "headway.json").write_text("{}")
    (crawl / "index-n1.cdxj").write_text(LINES)
    (crawl / "index-n2.cdxj").write_text("")
    alone = tmp_path / "other.cdxj"
    alone.write_text(LINES)
    got = dedup_indexes([str(crawl), str(alone)])
    assert [p.name for p in got] == ["index-n1.cdxj", "index-n2.cdxj", "other.cdxj"]
    empty = tmp_path / "empty"
    empty.mkdir()
    (tmp_path / "i.parquet").write_bytes(b"PAR1")
    for path, message in [
        (tmp_path / "missing", "no such crawl directory or index file"),
        (empty, "is not a headway crawl directory"),
        (tmp_path / "i.parquet", "Parquet indexes are not read yet"),
    ]:
        with pytest.raises(ConfigError) as info:
            dedup_indexes([str(path)])
        assert info.value.key == "store.dedup_from" and message in str(info.value)


def test_captures_go_in_once_per_index_file(tmp_path: Path) -> None:
    index = tmp_path / "index.cdxj"
    index.write_text(LINES)
    frontier = FakeFrontier()
    assert import_earlier_payloads(frontier, [index], batch=1) == 1  # type: ignore[arg-type]
    # revisits and 304s are no captures of a payload; the date is the WARC-Date
    assert frontier.payloads == [("sha1:AAA", "https://a.org/", "2024-01-01T00:00:00Z")]
    assert import_earlier_payloads(frontier, [index]) == 0  # type: ignore[arg-type]
    with index.open("a") as fh:  # the index changed: read again
        fh.write(LINES.splitlines(keepends=True)[0].replace("AAA", "BBB"))
    assert import_earlier_payloads(frontier, [index]) == 2  # type: ignore[arg-type]
