"""The two flags that name a shared crawl (``--store``, ``--crawl-id``), the same for every
command that reads or changes one."""

from __future__ import annotations

import argparse
import os


def add_shared_crawl_flags(parser: argparse.ArgumentParser) -> None:
    """``--store`` and ``--crawl-id``, defaulting to ``HEADWAY_STORE`` and
    ``HEADWAY_CRAWL_ID``."""
    parser.add_argument(
        "--store",
        default=os.environ.get("HEADWAY_STORE", ""),
        help="the shared crawl's store URL, e.g. redis://host:6379/0 (env HEADWAY_STORE)",
    )
    parser.add_argument(
        "--crawl-id",
        default=os.environ.get("HEADWAY_CRAWL_ID"),
        help="the shared crawl's id (env HEADWAY_CRAWL_ID)",
    )
