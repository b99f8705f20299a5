"""The Bloom filter's checkpoints: the bitmap saved at a clean close and every so many
new fingerprints, loaded after a close or a kill, never the cause of a lost URL or of
one admitted twice, however stale."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from headway.frontier.sqlite import SqliteFrontier
from headway.frontier.store import FrontierLimits, UrlEntry
from headway.urls.fingerprint import fingerprint

LIMITS = FrontierLimits(bloom_capacity=10_000, bloom_error=0.01)
#: Enough fingerprints for the bitmap to be worth saving at LIMITS' sizing (12 KB).
FILL = [f"http://h.example/fill{i}" for i in range(200)]


def _entries(urls: list[str]) -> list[UrlEntry]:
    return [UrlEntry(u, "h.example", 1, 1, fingerprint(u)) for u in urls]


def _open(db: Path, caplog: pytest.LogCaptureFixture) -> tuple[SqliteFrontier, str]:
    """The store opened, and how its Bloom filter was filled (from the log)."""
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="headway.frontier.sqlite"):
        f = SqliteFrontier(db, LIMITS, node_id="n")
    (line,) = [r.getMessage() for r in caplog.records if "Bloom filter of" in r.getMessage()]
    return f, line


def _all_in_filter(f: SqliteFrontier, urls: list[str]) -> bool:
    return all(fingerprint(u) in f._seen.bloom for u in urls)


def test_saved_bitmap_is_used_after_a_clean_close_and_after_a_kill(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A clean close checkpoints the filter and the next open loads it. Killed later,
    the store reopens from that same checkpoint, which lacks what was admitted since:
    those URLs are still found seen (by the table), and the filter learns them."""
    db = tmp_path / "f.sqlite3"
    saved = tmp_path / "f.sqlite3.bloom"
    urls = [f"http://h.example/{i}" for i in range(500)]
    f, _ = _open(db, caplog)
    assert f.add(_entries(urls), 0.0).added == 500
    f.close()
    assert saved.exists()
    f, how = _open(db, caplog)
    assert "loaded from its checkpoint of 500 fingerprints" in how
    assert saved.exists()  # kept: any checkpoint of the right size is safe to load
    assert _all_in_filter(f, urls)
    assert f.add(_entries(urls[:10]), 1.0).duplicates == 10
    more = [f"http://h.example/new{i}" for i in range(50)]
    assert f.add(_entries(more), 2.0).added == 50
    del f  # killed: no close
    f, how = _open(db, caplog)
    assert "loaded from its checkpoint of 500 fingerprints" in how  # no rebuild
    assert not _all_in_filter(f, more)
    result = f.add(_entries(more + urls[:5]), 3.0)
    assert (result.added, result.duplicates) == (0, 55)
    assert _all_in_filter(f, more)  # learned
    assert f.counts().seen == 550
    f.close()


def test_a_killed_store_reopens_from_its_last_periodic_checkpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Checkpoints come every ``checkpoint_every()`` new fingerprints while the store
    runs (here every 300): a store killed after 1,000 reopens from the one at 900,
    every URL still seen."""
    from headway.frontier.sqlite import seenfilter

    monkeypatch.setattr(seenfilter, "checkpoint_every", lambda bloom: 300)
    db = tmp_path / "f.sqlite3"
    f, how = _open(db, caplog)
    assert "rebuilt" in how  # a new store: nothing to load
    urls = [f"http://h.example/{i}" for i in range(1000)]
    for start in range(0, 1000, 100):
        assert f.add(_entries(urls[start : start + 100]), 0.0).added == 100
    del f  # killed
    f, how = _open(db, caplog)
    assert "loaded from its checkpoint of 900 fingerprints" in how
    assert f.add(_entries(urls), 1.0).duplicates == 1000
    assert f.add(_entries(["http://h.example/new"]), 1.0).added == 1
    f.close()


def test_a_stale_or_foreign_bitmap_loses_nothing_and_admits_nothing_twice(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A bitmap of the right size is loaded whatever it holds: all zeros (every URL
    missing from it) or all ones (every URL a false positive). Either way every URL
    admitted before is a duplicate and a new one is admitted once. Garbage is not
    loaded: the filter is rebuilt."""
    db = tmp_path / "f.sqlite3"
    saved = tmp_path / "f.sqlite3.bloom"
    f = SqliteFrontier(db, LIMITS, node_id="n")
    f.add(_entries(FILL), 0.0)
    f.close()
    header, _, bits = saved.read_bytes().partition(b"\n")
    assert header.split()[:3] == [b"headway-bloom", b"1", b"200"]
    for n, fill in enumerate((b"\x00", b"\xff")):
        saved.write_bytes(header + b"\n" + fill * len(bits))
        f, how = _open(db, caplog)
        assert "loaded from its checkpoint" in how
        assert f.add(_entries(FILL), 1.0).duplicates == 200
        assert f.add(_entries([f"http://h.example/new{n}"]), 1.0).added == 1
        del f  # no close: the doctored bitmap stays for the next case
    saved.write_bytes(b"garbage")
    f, how = _open(db, caplog)
    assert "rebuilt" in how and _all_in_filter(f, FILL)
    f.close()


def test_truncated_bitmap_is_refused(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    db = tmp_path / "f.sqlite3"
    saved = tmp_path / "f.sqlite3.bloom"
    f = SqliteFrontier(db, LIMITS, node_id="n")
    f.add(_entries(["http://h.example/a", *FILL]), 0.0)
    f.close()
    saved.write_bytes(saved.read_bytes()[:-10])  # cut short, as by a full disk
    f, how = _open(db, caplog)
    assert "rebuilt" in how
    assert fingerprint("http://h.example/a") in f._seen.bloom  # rebuilt, not half-loaded
    assert f.add(_entries(["http://h.example/b"]), 1.0).added == 1
    f.close()


def test_a_bitmap_that_cannot_be_written_leaves_the_last_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A failed write (a full disk) is logged; the next open loads the last good
    checkpoint, and what was admitted after it is still seen."""
    from headway.frontier.sqlite import seenfilter

    db = tmp_path / "f.sqlite3"
    f = SqliteFrontier(db, LIMITS, node_id="n")
    f.add(_entries(FILL), 0.0)
    f.close()  # a good checkpoint of 200
    monkeypatch.setattr(seenfilter, "save_bitmap", lambda *a: False)
    f = SqliteFrontier(db, LIMITS, node_id="n")
    more = [f"http://h.example/more{i}" for i in range(30)]
    f.add(_entries(more), 1.0)
    f.close()  # its checkpoint fails
    monkeypatch.undo()
    f, how = _open(db, caplog)
    assert "loaded from its checkpoint of 200 fingerprints" in how
    assert f.add(_entries(FILL + more), 2.0).duplicates == 230
    f.close()


def test_a_small_seen_set_is_not_saved_but_rebuilt(tmp_path: Path) -> None:
    db = tmp_path / "f.sqlite3"
    saved = tmp_path / "f.sqlite3.bloom"
    f = SqliteFrontier(db, LIMITS, node_id="n")
    f.add(_entries(["http://h.example/a", "http://h.example/b"]), 0.0)
    f.close()
    assert not saved.exists()  # 2 fingerprints: the rebuild is cheaper than 12 KB of bitmap
    f = SqliteFrontier(db, LIMITS, node_id="n")
    assert fingerprint("http://h.example/b") in f._seen.bloom
    assert f.add(_entries(["http://h.example/a"]), 1.0).duplicates == 1
    f.close()


def test_a_small_crawl_gets_a_small_filter(tmp_path: Path) -> None:
    """510 URLs under the default 10 million capacity: a filter of about 118 KB, not
    18 MB, and no bitmap file bigger than that."""
    f = SqliteFrontier(tmp_path / "f.sqlite3", FrontierLimits(), node_id="n")
    urls = [f"http://h.example/{i}" for i in range(510)]
    assert f.add(_entries(urls), 0.0).added == 510
    assert f._seen.bloom.nbytes < 130_000
    f.close()
    saved = tmp_path / "f.sqlite3.bloom"
    assert not saved.exists() or saved.stat().st_size < 130_000


def test_the_filter_grows_with_the_seen_set_and_persists(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """From a start of 100 fingerprints the filter grows 16-fold as URLs are admitted, up
    to the configured capacity; no admitted URL is ever missing from it, and the bitmap
    saved at the configured size is loaded back."""
    from headway.frontier import bloom
    from headway.frontier.sqlite import seenfilter

    monkeypatch.setattr(bloom, "START_CAPACITY", 100)
    monkeypatch.setattr(
        seenfilter, "capacity_for", lambda seen, most: bloom.capacity_for(seen, most, 100)
    )
    db = tmp_path / "f.sqlite3"
    f = SqliteFrontier(db, LIMITS, node_id="n")  # at most 10,000
    sizes = [f._seen.bloom.nbytes]
    admitted: list[str] = []
    for batch in range(30):
        urls = [f"http://h.example/{batch}/{i}" for i in range(200)]
        assert f.add(_entries(urls), 0.0).added == 200
        admitted += urls
        sizes.append(f._seen.bloom.nbytes)
        assert all(fp in f._seen.bloom for fp in (fingerprint(u) for u in admitted))
    assert f._seen.capacity == 10_000  # 100 -> 1,600 -> 10,000 (the configured capacity)
    assert len(set(sizes)) == 3 and sizes == sorted(sizes)
    assert f.add(_entries(admitted[:50]), 1.0).duplicates == 50
    f.close()
    assert (tmp_path / "f.sqlite3.bloom").exists()
    with caplog.at_level(logging.INFO, logger="headway.frontier.sqlite"):
        f = SqliteFrontier(db, LIMITS, node_id="n")
    assert "loaded from its checkpoint" in caplog.text  # it matched the sizing
    assert f._seen.bloom.nbytes == sizes[-1]
    assert all(fp in f._seen.bloom for fp in (fingerprint(u) for u in admitted))
    f.close()


def test_an_sqlite_too_old_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sqlite3

    from headway.errors import StoreError

    monkeypatch.setattr(sqlite3, "sqlite_version_info", (3, 31, 1))
    monkeypatch.setattr(sqlite3, "sqlite_version", "3.31.1")
    with pytest.raises(StoreError, match=r"needs SQLite 3\.35\.0 or later.*has SQLite 3\.31\.1"):
        SqliteFrontier(tmp_path / "f.sqlite3", LIMITS, node_id="n")
    assert not (tmp_path / "f.sqlite3").exists()


def test_a_page_cache_too_small_for_the_frontier_is_warned_of_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Past about 6 bytes of page cache per seen URL admission slows down: the store
    says so once, naming the setting and a size that fits, at open and as it grows
    (checked at each checkpoint)."""
    from headway.frontier.sqlite import seenfilter

    monkeypatch.setattr(seenfilter, "checkpoint_every", lambda bloom: 100)
    db = tmp_path / "f.sqlite3"
    with caplog.at_level(logging.WARNING, logger="headway.frontier.sqlite"):
        f = SqliteFrontier(db, LIMITS, node_id="n", cache_size_kib=1)  # 1 KiB: 170 URLs
        f.add(_entries([f"http://h.example/{i}" for i in range(100)]), 0.0)
        assert "page cache" not in caplog.text
        for start in range(100, 400, 100):
            f.add(_entries([f"http://h.example/{i}" for i in range(start, start + 100)]), 0.0)
        f.close()
    warned = [r.getMessage() for r in caplog.records if "page cache" in r.getMessage()]
    assert len(warned) == 1 and "--frontier-cache-mib 1 or more" in warned[0], warned
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="headway.frontier.sqlite"):
        SqliteFrontier(db, LIMITS, node_id="n", cache_size_kib=1).close()  # at open
        SqliteFrontier(db, LIMITS, node_id="n", cache_size_kib=4096).close()  # 4 MiB: fits
    warned = [r.getMessage() for r in caplog.records if "page cache" in r.getMessage()]
    assert len(warned) == 1 and "holds 400 URLs" in warned[0], warned


def test_a_grown_filter_is_checkpointed_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Growing replaces the filter by a larger one, which the last checkpoint (of the
    smaller size) cannot fill: the grown one is saved in the same commit, so a store
    killed right after reopens from it instead of rebuilding from the whole seen table
    (19 minutes at 96 million URLs)."""
    from headway.frontier import bloom
    from headway.frontier.sqlite import seenfilter

    monkeypatch.setattr(
        seenfilter, "capacity_for", lambda seen, most: bloom.capacity_for(seen, most, 100)
    )
    db = tmp_path / "f.sqlite3"
    f, how = _open(db, caplog)
    assert "rebuilt" in how and f._seen.capacity == 100
    urls = [f"http://h.example/{i}" for i in range(600)]
    assert f.add(_entries(urls[:90]), 0.0).added == 90
    assert f._seen.capacity == 100  # not grown yet
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="headway.frontier.sqlite"):
        assert f.add(_entries(urls[90:]), 0.0).added == 510  # 600 seen: grown to 1,600
    assert f._seen.capacity == 1600
    assert "checkpoint: 600 fingerprints" in caplog.text
    grown = f._seen.bloom.nbytes
    del f  # killed before any other checkpoint was due
    f, how = _open(db, caplog)
    assert "loaded from its checkpoint of 600 fingerprints" in how, how
    assert f._seen.bloom.nbytes == grown
    assert _all_in_filter(f, urls)
    assert f.add(_entries(urls), 1.0).duplicates == 600
    f.close()
