"""``headway export``: package a crawl as one WACZ file (``archive/``), with a progress
bar on a terminal and one summary line at the end."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from headway.cli.sharedflags import add_shared_crawl_flags
from headway.errors import ExportError

_HELP = "package a crawl (its directories' WARC files, index and pages) as one WACZ file"
_DESCRIPTION = (
    "Package a crawl as a WACZ 1.1.1 file (ReplayWeb.page and pywb open it): every "
    "node's WARC files, one merged sorted index, the page list (seeds and every HTML "
    "page with its title, time and status) and datapackage.json with each file's hash. "
    "Give the crawl directory, or every node directory of a shared crawl (with --store "
    "and --crawl-id to check that they are that crawl's). The directories are only "
    "read: a running crawl, or one killed mid-run, is packaged as it stands."
)


def add_export_parser(add_parser: Any) -> None:
    """The ``export`` subcommand's arguments (``add_parser``: the subparsers' factory)."""
    p = add_parser("export", help=_HELP, description=_DESCRIPTION)
    p.add_argument("dirs", type=Path, nargs="*", metavar="DIR", help="crawl directories")
    p.add_argument("--wacz", type=Path, required=True, metavar="OUT.wacz", help="output file")
    add_shared_crawl_flags(p)
    p.add_argument("--title", default=None, help="the collection's title (datapackage.json)")
    p.add_argument("--description", default=None, help="its description (Markdown)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def export_command(args: argparse.Namespace) -> int:
    from headway.archive.sources import find_sources
    from headway.archive.wacz import write_wacz
    from headway.runtime.crawldir import CrawlIdentity

    if not str(args.wacz).endswith(".wacz"):
        raise ExportError(f"{args.wacz}: a WACZ file's name ends in .wacz")
    identity = None
    if args.store or args.crawl_id:
        if not (args.store and args.crawl_id):
            raise ExportError("a shared crawl is named by both --store and --crawl-id")
        from headway.frontier.backends import backend_for

        identity = CrawlIdentity(backend_for(args.store).shown(args.store), args.crawl_id)
        if not args.dirs:
            raise ExportError(
                "a shared crawl's WARC files stay in its nodes' directories: give them "
                f"(headway export DIR... --store {identity.store} --crawl-id {args.crawl_id})"
            )
    source = find_sources(args.dirs, identity)
    show = not args.quiet and sys.stderr.isatty()
    if not show:
        summary = write_wacz(source, args.wacz, title=args.title, description=args.description)
    else:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            DownloadColumn,
            Progress,
            TimeRemainingColumn,
            TransferSpeedColumn,
        )

        with Progress(
            "[progress.description]{task.description}",
            BarColumn(),
            DownloadColumn(),
            TransferSpeedColumn(),
            TimeRemainingColumn(),
            console=Console(stderr=True),
            transient=True,
        ) as bar:
            task = bar.add_task(f"packaging {args.wacz.name}", total=source.total_bytes())
            summary = write_wacz(
                source,
                args.wacz,
                title=args.title,
                description=args.description,
                progress=lambda n: bar.advance(task, n),
            )
    notes = []
    if summary.warc_bytes_cut:
        notes.append(f"{summary.warc_bytes_cut} bytes of partial records left out")
    if summary.index_lines_dropped:
        notes.append(f"{summary.index_lines_dropped} index lines without a packaged record")
    if summary.log_lines_unreadable:
        notes.append(f"{summary.log_lines_unreadable} unreadable crawl log lines skipped")
    print(
        f"wrote {summary.path}: {summary.bytes} bytes, {summary.warc_files} WARC files, "
        f"{summary.index_lines} index lines, {summary.pages} pages ({summary.seeds} seeds) "
        f"in {summary.seconds:.1f} s" + (f"; {'; '.join(notes)}" if notes else "")
    )
    return 0
