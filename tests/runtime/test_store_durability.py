"""The store writer as the node drives it: its settings reach the files, and what it
writes is fsynced as the ``store_sync`` setting promises."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from headway.frontier.store import LeasedUrl
from headway.runtime import storewriter
from headway.runtime.crawldir import CrawlPaths
from headway.runtime.storewriter import StoreWriter
from headway.settings import build_settings
from headway.work.items import FetchedPage
from tests.integration.helpers import UA
from tests.store.factory import fetch_result


async def _no_payloads(digests: Sequence[str]) -> dict[str, tuple[str, str]]:
    return {}


async def _put(rows: Sequence[tuple[str, str, str]]) -> None:
    return None


def _writer(root: Path, **settings: object) -> StoreWriter:
    root.mkdir(parents=True, exist_ok=True)
    paths = CrawlPaths(root)
    paths.warc_dir.mkdir(exist_ok=True)
    s = build_settings({"out": str(root), "user_agent": UA, **settings})
    return StoreWriter(paths, s, find_payloads=_no_payloads, put_payloads=_put)


def _page(i: int) -> FetchedPage:
    words = " ".join(f"word{(i * 7 + j) % 50} text{j % 13}" for j in range(800))
    body = f"<html><body><p>{words}</p><a href='/p/{i + 1}'>next</a></body></html>".encode()
    url = f"http://example.com/p/{i}"
    lease = LeasedUrl(
        id=i + 1,
        url=url,
        host="example.com",
        depth=1,
        priority=1,
        fp=i,
        via=None,
        attempts=0,
        lease_expires=0.0,
    )
    return FetchedPage(lease, fetch_result(url=url, raw_body=body, body=body))


async def test_warc_gzip_level_reaches_the_files(tmp_path: Path) -> None:
    sizes = {}
    for level in (1, 9):
        root = tmp_path / f"level{level}"
        w = _writer(root, warc_gzip_level=level)
        await w.open()
        await w.write([_page(i) for i in range(20)], [None] * 20)
        await w.close()
        sizes[level] = sum(f.stat().st_size for f in (root / "warc").glob("*.warc.gz"))
    assert sizes[9] < sizes[1] * 0.97, sizes  # level 9 is measurably smaller on HTML


@pytest.fixture
def fsynced(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Names of the files passed to ``os.fsync``, in order (the fsync still happens)."""
    names: list[str] = []
    real = os.fsync

    def counting(fd: int) -> None:
        names.append(Path(os.readlink(f"/proc/self/fd/{fd}")).name)
        real(fd)

    monkeypatch.setattr(os, "fsync", counting)
    yield names


STORE_FILES = {"index.cdxj", "crawl.log.jsonl"}


def _synced(names: list[str]) -> set[str]:
    """The store files among fsynced names, the WARC file counted as 'warc'."""
    return {"warc" if n.endswith(".warc.gz") else n for n in names} & (STORE_FILES | {"warc"})


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc to name fds")
async def test_store_sync_batch_fsyncs_every_file_before_each_settle(
    tmp_path: Path, fsynced: list[str]
) -> None:
    w = _writer(tmp_path / "c", store_sync="batch")
    await w.open()
    for i in range(3):
        fsynced.clear()
        await w.write([_page(i)], [None])
        assert _synced(fsynced) == STORE_FILES | {"warc"}, fsynced
    await w.close()


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc to name fds")
async def test_store_sync_interval_fsyncs_at_most_once_per_interval_and_at_close(
    tmp_path: Path, fsynced: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(storewriter, "SYNC_INTERVAL", 0.0)  # an interval has passed
    w = _writer(tmp_path / "c", store_sync="interval")
    await w.open()
    fsynced.clear()
    await w.write([_page(0)], [None])
    assert _synced(fsynced) == STORE_FILES | {"warc"}, fsynced
    monkeypatch.setattr(storewriter, "SYNC_INTERVAL", 3600.0)  # and now it has not
    fsynced.clear()
    await w.write([_page(1)], [None])
    await w.write([_page(2)], [None])
    assert _synced(fsynced) == set(), "fsynced again within the interval"
    await w.close()
    assert _synced(fsynced) == STORE_FILES | {"warc"}, "close fsyncs what it wrote"
