"""The Bloom bitmap saved at a clean close: used when it matches, never trusted after a
crash or when stale, and never the cause of a lost URL."""

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


def test_saved_bitmap_is_used_after_a_clean_close(tmp_path: Path) -> None:
    db = tmp_path / "f.sqlite3"
    saved = tmp_path / "f.sqlite3.bloom"
    urls = [f"http://h.example/{i}" for i in range(500)]
    f = SqliteFrontier(db, LIMITS, node_id="n")
    assert f.add(_entries(urls), 0.0).added == 500
    f.close()
    assert saved.exists()
    f = SqliteFrontier(db, LIMITS, node_id="n")
    assert not saved.exists()  # consumed: a crash from here on means a rebuild
    assert all(fp in f._bloom for fp in (fingerprint(u) for u in urls))
    assert f.add(_entries(urls[:10]), 1.0).duplicates == 10
    # "crash": the object is dropped without close; the next open rebuilds
    more = [f"http://h.example/new{i}" for i in range(50)]
    assert f.add(_entries(more), 2.0).added == 50
    del f
    f = SqliteFrontier(db, LIMITS, node_id="n")
    assert all(fp in f._bloom for fp in (fingerprint(u) for u in urls + more))
    f.close()


def test_stale_or_foreign_bitmap_is_ignored(tmp_path: Path) -> None:
    db = tmp_path / "f.sqlite3"
    saved = tmp_path / "f.sqlite3.bloom"
    f = SqliteFrontier(db, LIMITS, node_id="n")
    f.add(_entries(["http://h.example/a", *FILL]), 0.0)
    f.close()
    # a bitmap whose count does not match the table (written before more URLs were added)
    header, _, bits = saved.read_bytes().partition(b"\n")
    assert header.startswith(b"headway-bloom 1 201 ")
    saved.write_bytes(header.replace(b" 1 201 ", b" 1 200 ", 1) + b"\n" + bytes(len(bits)))
    f = SqliteFrontier(db, LIMITS, node_id="n")
    assert fingerprint("http://h.example/a") in f._bloom  # rebuilt from the table
    f.close()
    saved.write_bytes(b"garbage")
    f = SqliteFrontier(db, LIMITS, node_id="n")
    assert fingerprint("http://h.example/a") in f._bloom
    f.close()


def test_truncated_bitmap_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "f.sqlite3"
    saved = tmp_path / "f.sqlite3.bloom"
    f = SqliteFrontier(db, LIMITS, node_id="n")
    f.add(_entries(["http://h.example/a", *FILL]), 0.0)
    f.close()
    saved.write_bytes(saved.read_bytes()[:-10])  # cut short, as by a full disk
    f = SqliteFrontier(db, LIMITS, node_id="n")
    assert not saved.exists()
    assert fingerprint("http://h.example/a") in f._bloom  # rebuilt, not half-loaded
    assert f.add(_entries(["http://h.example/b"]), 1.0).added == 1
    f.close()


def test_a_small_seen_set_is_not_saved_but_rebuilt(tmp_path: Path) -> None:
    db = tmp_path / "f.sqlite3"
    saved = tmp_path / "f.sqlite3.bloom"
    f = SqliteFrontier(db, LIMITS, node_id="n")
    f.add(_entries(["http://h.example/a", "http://h.example/b"]), 0.0)
    f.close()
    assert not saved.exists()  # 2 fingerprints: the rebuild is cheaper than 12 KB of bitmap
    f = SqliteFrontier(db, LIMITS, node_id="n")
    assert fingerprint("http://h.example/b") in f._bloom
    assert f.add(_entries(["http://h.example/a"]), 1.0).duplicates == 1
    f.close()


def test_a_small_crawl_gets_a_small_filter(tmp_path: Path) -> None:
    """510 URLs under the default 10 million capacity: a filter of about 118 KB, not
    18 MB, and no bitmap file bigger than that."""
    f = SqliteFrontier(tmp_path / "f.sqlite3", FrontierLimits(), node_id="n")
    urls = [f"http://h.example/{i}" for i in range(510)]
    assert f.add(_entries(urls), 0.0).added == 510
    assert f._bloom.nbytes < 130_000
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
    from headway.frontier.sqlite import backend

    monkeypatch.setattr(bloom, "START_CAPACITY", 100)
    monkeypatch.setattr(
        backend, "capacity_for", lambda seen, most: bloom.capacity_for(seen, most, 100)
    )
    db = tmp_path / "f.sqlite3"
    f = SqliteFrontier(db, LIMITS, node_id="n")  # at most 10,000
    sizes = [f._bloom.nbytes]
    admitted: list[str] = []
    for batch in range(30):
        urls = [f"http://h.example/{batch}/{i}" for i in range(200)]
        assert f.add(_entries(urls), 0.0).added == 200
        admitted += urls
        sizes.append(f._bloom.nbytes)
        assert all(fp in f._bloom for fp in (fingerprint(u) for u in admitted))
    assert f._bloom_capacity == 10_000  # 100 -> 1,600 -> 10,000 (the configured capacity)
    assert len(set(sizes)) == 3 and sizes == sorted(sizes)
    assert f.add(_entries(admitted[:50]), 1.0).duplicates == 50
    f.close()
    assert (tmp_path / "f.sqlite3.bloom").exists()
    with caplog.at_level(logging.INFO, logger="headway.frontier.sqlite"):
        f = SqliteFrontier(db, LIMITS, node_id="n")
    assert "loaded from the bitmap saved" in caplog.text  # it matched the sizing
    assert f._bloom.nbytes == sizes[-1]
    assert all(fp in f._bloom for fp in (fingerprint(u) for u in admitted))
    f.close()
