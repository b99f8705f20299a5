"""``headway extract PATH...``: the text output (and with ``--index`` the Parquet index)
of existing WARC files, in parallel processes, with a progress bar, resumable (a file
whose output exists is skipped). What one file gives is in ``headway.extract.files``."""

from __future__ import annotations

import argparse
import os
import sys
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from headway.extract.files import ExtractJob, ExtractResult

_SUFFIXES = (".warc.gz", ".warc")


def add_extract_parser(add_parser: object) -> None:
    parser = add_parser(  # type: ignore[operator]
        "extract",
        help="write the text output (and index) of existing WARC files",
        description="Write each HTML page's text as WARC conversion records (and with "
        "--index a Parquet index) from existing WARC files, headway's or any other "
        "tool's; files already done are skipped (docs/outputs.md).",
    )
    parser.add_argument(
        "paths", nargs="+", type=Path, metavar="PATH", help="WARC files or directories"
    )
    parser.add_argument("--out", "-o", type=Path, required=True, help="directory for the output")
    parser.add_argument("--text-mode", choices=["main", "all", "accurate"], default="main")
    parser.add_argument(
        "--text-use", choices=["ai-train", "ai-input", "search", "any"], default="ai-train"
    )
    parser.add_argument("--index", action="store_true", help="also write a Parquet index")
    parser.add_argument(
        "--workers", type=int, default=0, help="processes (0: cores - 1, at least 1)"
    )
    parser.add_argument("--quiet", "-q", action="store_true", help="no progress bar")


def _inputs(paths: list[Path]) -> list[Path] | str:
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found += sorted(
                p for p in path.rglob("*") if p.is_file() and p.name.endswith(_SUFFIXES)
            )
        elif path.is_file():
            found.append(path)
        else:
            return f"{path}: no such file or directory"
    return list(dict.fromkeys(found))


def extract_command(args: argparse.Namespace) -> int:
    from headway.extract.files import ExtractJob
    from headway.runtime.factory import check_text_packages
    from headway.settings import Settings, TextSettings

    check_text_packages(
        Settings(text=TextSettings(text=True, text_mode=args.text_mode, parquet_index=args.index))
    )
    files = _inputs(args.paths)
    if isinstance(files, str):
        print(f"headway: error: {files}", file=sys.stderr)
        return 2
    if not files:
        print(
            "headway: error: no WARC files (*.warc.gz, *.warc) in the paths given", file=sys.stderr
        )
        return 2
    if args.workers < 0:
        print("headway: error: --workers must be >= 0", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    jobs = [
        ExtractJob(f.resolve(), args.out.resolve(), args.text_mode, args.text_use, args.index)
        for f in files
    ]
    workers = args.workers or max(1, (os.cpu_count() or 2) - 1)
    results = _run(jobs, min(workers, len(jobs)), quiet=args.quiet)
    failed = [r for r in results if r.error]
    for r in failed:
        print(f"headway: {r.source}: {r.error}", file=sys.stderr)
    done = [r for r in results if not r.error]
    print(
        f"{len(done)} of {len(results)} files done ({sum(r.skipped for r in done)} skipped, "
        f"already there): {sum(r.records for r in done)} responses, "
        f"{sum(r.written for r in done)} text records, {sum(r.reserved for r in done)} "
        f"held back by their AI-use signals ({args.text_use}), "
        f"{sum(r.rows for r in done)} index rows; in {args.out}"
    )
    return 1 if failed else 0


def _run(jobs: list[ExtractJob], workers: int, *, quiet: bool) -> list[ExtractResult]:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    from headway.extract.files import extract_file

    results: list[ExtractResult] = []
    with (
        ProcessPoolExecutor(max_workers=workers) as pool,
        Progress(
            "[progress.description]{task.description}",
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            disable=quiet,
            transient=True,
        ) as progress,
    ):
        task = progress.add_task("extracting", total=len(jobs))
        for future in as_completed([pool.submit(extract_file, job) for job in jobs]):
            results.append(future.result())
            progress.advance(task)
    return sorted(results, key=lambda r: str(r.source))
