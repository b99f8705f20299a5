"""Start-up recovery checks only the WARC file that can hold a partial record."""

from __future__ import annotations

import os
from pathlib import Path

from headway.runtime.crawldir import CrawlPaths
from headway.runtime.storewriter import _newest_warc_glob


def test_only_the_newest_warc_file_is_checked(tmp_path: Path) -> None:
    paths = CrawlPaths(tmp_path)
    paths.warc_dir.mkdir()
    assert _newest_warc_glob(paths) == "warc/*.warc.gz"  # nothing yet: check all (none)
    names = (
        "headway-20261130100000-00001.warc.gz",
        "other-20261130090000-00010.warc.gz",
        "headway-20261130110000-00002.warc.gz",
    )
    for i, name in enumerate(names):
        (paths.warc_dir / name).write_bytes(b"")
        os.utime(paths.warc_dir / name, ns=(10**18, 10**18 + i))
    # the file written last, whatever its prefix or serial
    assert _newest_warc_glob(paths) == "warc/headway-20261130110000-00002.warc.gz"
    os.utime(paths.warc_dir / names[1], ns=(10**18, 10**18 + 2))  # same time: serial wins
    assert _newest_warc_glob(paths) == "warc/other-20261130090000-00010.warc.gz"
