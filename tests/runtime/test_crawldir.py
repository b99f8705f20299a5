"""The crawl directory: a stable node id, and the upgrade of a format-1 directory."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from headway import CRAWL_FORMAT_VERSION
from headway.cli.status import read_status
from headway.errors import CrawlDirError
from headway.frontier.sqlite import SqliteFrontier
from headway.runtime.crawldir import MARKER, CrawlDir, CrawlIdentity
from headway.runtime.factory import import_index_payloads
from tests.frontier.conftest import TEST_LIMITS


def _open(root: Path) -> CrawlDir:
    d = CrawlDir(root)
    d.open()
    return d


def test_node_id_is_made_once_and_kept(tmp_path: Path) -> None:
    first = _open(tmp_path / "c")
    assert first.node_id and not first.resumed and first.upgrade_from is None
    first.close()
    again = _open(tmp_path / "c")
    assert again.resumed and again.node_id == first.node_id
    again.close()
    other = _open(tmp_path / "d")
    assert other.node_id != first.node_id
    other.close()


def test_marker_with_a_bad_node_id_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "c"
    _open(root).close()
    info = json.loads((root / MARKER).read_text())
    (root / MARKER).write_text(json.dumps({**info, "node_id": "../x y"}))
    with pytest.raises(CrawlDirError, match="node_id"):
        _open(root)


def test_format_1_directory_is_upgraded_with_its_index_digests(tmp_path: Path) -> None:
    root = tmp_path / "c"
    root.mkdir()
    (root / MARKER).write_text(json.dumps({"format": 1, "software": "headway/0.1.0"}))
    (root / "index.cdxj").write_text(
        'com,example)/a 20260101000000 {"url": "http://example.com/a", "mime": "text/html",'
        ' "status": "200", "digest": "sha1:AAA", "length": "9", "offset": "0",'
        ' "filename": "x.warc.gz"}\n'
        'com,example)/b 20260102000000 {"url": "http://example.com/b", "mime": "warc/revisit",'
        ' "status": "200", "digest": "sha1:AAA", "length": "9", "offset": "9",'
        ' "filename": "x.warc.gz"}\n'
    )
    d = _open(root)
    assert d.upgrade_from == 1 and d.node_id
    frontier = SqliteFrontier(d.paths.frontier, TEST_LIMITS, node_id=d.node_id)
    assert import_index_payloads(frontier, d.paths.cdxj) == 1
    d.finish_upgrade()
    assert frontier.find_payloads(["sha1:AAA", "sha1:BBB"]) == {
        "sha1:AAA": ("http://example.com/a", "2026-01-01T00:00:00Z")
    }
    frontier.close()
    node_id = d.node_id
    d.close()
    info = json.loads((root / MARKER).read_text())
    assert info["format"] == CRAWL_FORMAT_VERSION == 2
    again = _open(root)
    assert (again.upgrade_from, again.node_id) == (None, node_id)
    again.close()


def test_upgrade_cut_short_keeps_the_node_id_and_is_done_again(tmp_path: Path) -> None:
    root = tmp_path / "c"
    root.mkdir()
    (root / MARKER).write_text(json.dumps({"format": 1, "software": "headway/0.1.0"}))
    d = _open(root)
    node_id = d.node_id
    d.close()  # crash before finish_upgrade
    again = _open(root)
    assert (again.upgrade_from, again.node_id) == (1, node_id)
    again.close()


@pytest.mark.parametrize("text", ["", "{trunc", "[]", '"x"', '{"format": "2"}', '{"format": true}'])
def test_an_unreadable_marker_is_one_clear_error_for_crawl_and_status(
    tmp_path: Path, text: str
) -> None:
    root = tmp_path / "c"
    root.mkdir()
    (root / MARKER).write_text(text)
    with pytest.raises(CrawlDirError, match="unreadable"):
        read_status(root)
    assert sorted(p.name for p in root.iterdir()) == [MARKER]  # a status writes nothing
    with pytest.raises(CrawlDirError, match="unreadable; this directory cannot be resumed"):
        CrawlDir(root).open()


def test_status_says_when_this_version_cannot_resume_a_directory(tmp_path: Path) -> None:
    (tmp_path / MARKER).write_text(json.dumps({"format": CRAWL_FORMAT_VERSION + 1}))
    note = read_status(tmp_path)["format_note"]
    assert isinstance(note, str) and "cannot resume" in note
    (tmp_path / MARKER).write_text(json.dumps({"format": CRAWL_FORMAT_VERSION}))
    assert "format_note" not in read_status(tmp_path)


SHARED = CrawlIdentity("redis://:***@127.0.0.1:6379/0", "news")
OWN = CrawlIdentity()


def test_a_new_directory_records_the_crawl_it_belongs_to_password_masked(
    tmp_path: Path,
) -> None:
    from headway.runtime.factory import crawl_identity
    from headway.settings import build_settings

    settings = build_settings(
        {
            "user_agent": "bot/1.0 (+https://example.org/bot)",
            "out": tmp_path / "c",
            "store": "redis://:s3cret@127.0.0.1:6379",
            "crawl_id": "news",
        }
    )
    identity = crawl_identity(settings)
    assert identity == SHARED
    shared = CrawlDir(tmp_path / "c", identity)
    shared.open()
    shared.close()
    text = (tmp_path / "c" / MARKER).read_text()
    assert "s3cret" not in text
    info = json.loads(text)
    assert (info["store"], info["crawl_id"]) == ("redis://:***@127.0.0.1:6379/0", "news")
    _open(tmp_path / "own").close()
    info = json.loads((tmp_path / "own" / MARKER).read_text())
    assert (info["store"], info["crawl_id"]) == ("", None)


@pytest.mark.parametrize(
    ("recorded", "opening", "belongs_to"),
    [
        (OWN, OWN, None),
        (SHARED, SHARED, None),
        (SHARED, CrawlIdentity("redis://:***@127.0.0.1:6379/0", "news"), None),  # new password
        (SHARED, OWN, "belongs to the shared crawl 'news' in redis://:***@127.0.0.1:6379/0"),
        (OWN, SHARED, "belongs to a crawl with its own frontier in the directory"),
        (SHARED, CrawlIdentity(SHARED.store, "sports"), "the shared crawl 'news'"),
        (SHARED, CrawlIdentity("redis://10.0.0.5:6379/0", "news"), "the shared crawl 'news'"),
    ],
)
def test_a_directory_is_refused_to_another_crawl(
    tmp_path: Path, recorded: CrawlIdentity, opening: CrawlIdentity, belongs_to: str | None
) -> None:
    root = tmp_path / "c"
    d = CrawlDir(root, recorded)
    d.open()
    d.close()
    before = (root / MARKER).read_text()
    again = CrawlDir(root, opening)
    if belongs_to is None:
        again.open()
        assert again.resumed
        again.close()
        return
    with pytest.raises(CrawlDirError) as err:
        again.open()
    message = str(err.value)
    assert belongs_to in message and "\n" not in message
    assert "choose another --out" in message
    assert (root / MARKER).read_text() == before  # refused: nothing changed
    assert again.identity is opening


def _unrecorded(root: Path, *files: str) -> None:
    """A format-2 directory as the previous version wrote it: no store, no crawl id."""
    root.mkdir()
    (root / MARKER).write_text(
        json.dumps({"format": CRAWL_FORMAT_VERSION, "software": "headway/0.9", "node_id": "n-1"})
    )
    for name in files:
        (root / name).write_text("")
    if "frontier.sqlite3" not in files:
        assert read_status(root)["belongs_to"] == "not recorded (an earlier version)"


@pytest.mark.parametrize(
    ("files", "opening", "refused"),
    [
        (("frontier.sqlite3",), OWN, None),
        (("frontier.sqlite3",), SHARED, "belongs to a crawl with its own frontier"),
        (("crawl-n-1.log.jsonl", "index-n-1.cdxj"), SHARED, None),
        (("crawl-n-1.log.jsonl",), OWN, "belongs to a shared crawl (--store)"),
        ((), OWN, None),  # nothing written yet: whoever opens it first
        ((), SHARED, None),
    ],
)
def test_a_directory_of_the_previous_version_is_judged_by_its_files_then_recorded(
    tmp_path: Path, files: tuple[str, ...], opening: CrawlIdentity, refused: str | None
) -> None:
    root = tmp_path / "c"
    _unrecorded(root, *files)
    d = CrawlDir(root, opening)
    if refused is not None:
        with pytest.raises(CrawlDirError, match=re.escape(refused)):
            d.open()
        assert "store" not in json.loads((root / MARKER).read_text())
        return
    d.open()
    d.close()
    info = json.loads((root / MARKER).read_text())
    assert (info["store"], info["crawl_id"], info["node_id"]) == (
        opening.store,
        opening.crawl_id,
        "n-1",
    )
    other = SHARED if opening == OWN else OWN
    with pytest.raises(CrawlDirError, match="belongs to"):
        CrawlDir(root, other).open()  # recorded from now on
    if "frontier.sqlite3" not in files:  # (an empty file here, not a frontier to count)
        assert read_status(root)["belongs_to"] == opening.describe()


def test_a_bad_recorded_crawl_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "c"
    _open(root).close()
    info = json.loads((root / MARKER).read_text())
    (root / MARKER).write_text(json.dumps({**info, "store": 7}))
    with pytest.raises(CrawlDirError, match="cannot be resumed"):
        _open(root)
