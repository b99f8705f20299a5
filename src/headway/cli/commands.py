"""The command line: ``headway demo``, ``headway crawl``, ``headway node``,
``headway status``, ``headway console``, ``headway report``, ``headway export``, the
controls (``headway pause``, ``resume``, ``stop``, ``seed``, ``opt-out``, ``host``),
``headway simweb``, ``headway bench``: what each one does (their arguments are ``parsers.py``)."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from headway.cli.parsers import (
    BENCH_CHILD,
    CONTROLS,
    bench_child_parser,
    build_parser,
    unknown_flag_hint,
)
from headway.errors import ConfigError, HeadwayError
from headway.settings import KEYS, Settings, settings_from_sources
from headway.settings.sources import named_as_given

if TYPE_CHECKING:
    from headway.cli.stopping import StopSignals
    from headway.urls.seeds import SeedList

log = logging.getLogger("headway")

#: Exit code of a crawl that ended without reaching any host of its seeds (README).
EXIT_UNREACHABLE = 3


class _StderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to whatever ``sys.stderr`` is at the time: while the live progress display
    runs it redirects stderr, and log lines then print above it instead of into it."""

    @property
    def stream(self) -> Any:
        return sys.stderr

    @stream.setter
    def stream(self, value: Any) -> None:
        pass


def _setup_logging(fmt: str, quiet: bool) -> None:
    handler = _StderrHandler()
    if fmt == "json":
        handler.setFormatter(_JsonFormatter())
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s", "%H:%M:%S"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.WARNING if quiet else logging.INFO)


class _JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return json.dumps(
            {
                "time": record.created,
                "level": record.levelname,
                "logger": record.name,
                "message": record.getMessage(),
            }
        )


def _parse(argv: list[str]) -> argparse.Namespace | int:
    """The command's arguments, or the exit status when there is none to run: bare
    ``headway`` prints the help (the usage and every command) and exits 2; an argument a
    command does not take is that command's usage and error, not the top level's."""
    parser = build_parser()
    if argv[:1] == [BENCH_CHILD]:
        return bench_child_parser().parse_args(argv[1:], argparse.Namespace(command=BENCH_CHILD))
    args, extras = parser.parse_known_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    if extras:
        sub = _subparser(parser, args.command)
        sub.error(unknown_flag_hint(sub, extras))
    return args


def _subparser(parser: argparse.ArgumentParser, command: str) -> argparse.ArgumentParser:
    for action in parser._subparsers._group_actions if parser._subparsers else ():
        if isinstance(action, argparse._SubParsersAction):
            found: argparse.ArgumentParser = action.choices[command]
            return found
    return parser


def main(argv: list[str] | None = None) -> int:
    parsed = _parse(sys.argv[1:] if argv is None else argv)
    if isinstance(parsed, int):
        return parsed
    args = parsed
    try:
        code = _run_command(args)
        # what is still buffered goes out here, where a reader gone away is caught,
        # not at the interpreter's exit
        sys.stdout.flush()
        return code
    except HeadwayError as exc:
        if isinstance(exc, ConfigError):  # a check after the settings were built
            exc = named_as_given(exc, _flags_given(args))
        print(f"headway: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BaseException as exc:
        if all(isinstance(leaf, BrokenPipeError) for leaf in _leaves(exc)):
            return _reader_went_away()
        return _report_failure(exc, getattr(args, "out", None))


def _flags_given(args: argparse.Namespace) -> dict[str, Any]:
    """The settings the command line gave (setting name -> value; a flag not given leaves
    no attribute)."""
    return {k.name: getattr(args, k.name) for k in KEYS if hasattr(args, k.name)}


def _run_command(args: argparse.Namespace) -> int:
    """Run the command ``args`` names; its exit status."""
    if args.command in ("crawl", "node"):
        return _crawl(args)
    if args.command == "status":
        return _status(args)
    if args.command == "console":
        from headway.cli.console import console_command

        return console_command(args)
    if args.command == "report":
        from headway.cli.report import report_command

        return report_command(args)
    if args.command == "export":
        from headway.cli.export import export_command

        return export_command(args)
    if args.command == "extract":
        from headway.cli.extract import extract_command

        return extract_command(args)
    if args.command == "why":
        from headway.cli.why import why_command

        return why_command(args)
    if args.command == "drop-crawl":
        from headway.cli.dropcrawl import drop_command

        return drop_command(args)
    if args.command in CONTROLS:
        from headway.cli.control import control_command

        return control_command(args)
    if args.command == "demo":
        from headway.cli.demo import demo_command

        return demo_command(args, run_node=_run_node, setup_logging=_setup_logging)
    if args.command == "simweb":
        from headway.testing.serve import simweb_command

        return simweb_command(args)
    if args.command == "bench":
        return _bench(args)
    if args.command == BENCH_CHILD:
        from headway.bench.harness import crawl_child

        print(json.dumps(crawl_child(json.loads(args.config))), flush=True)
        return 0
    return 2


#: Exit status when the reader of the output went away (``| head``): a shell's status
#: for a command that SIGPIPE ended (128 + 13).
EXIT_BROKEN_PIPE = 141


def _reader_went_away() -> int:
    """The output's reader closed it (``headway report | head``): nothing is wrong with
    the crawl, so no message and nothing in error.log. What is still buffered for stdout
    goes nowhere, so that the interpreter's last flush does not fail in turn."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # stdout without a descriptor (a test's capture)
        pass
    return EXIT_BROKEN_PIPE


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for sub in exc.exceptions for leaf in _leaves(sub)]
    return [exc]


def _is_io_failure(exc: BaseException) -> bool:
    """An operating-system failure: a file or the disk (SQLite reports a full or
    read-only disk as its own error type)."""
    if isinstance(exc, OSError):
        return True
    import sqlite3

    text = str(exc).lower()
    return isinstance(exc, sqlite3.Error) and any(
        word in text for word in ("disk", "readonly", "read-only", "i/o")
    )


def _write_error_log(out: Path | None, text: str) -> str:
    """Append ``text`` to ``<out>/error.log``; what to tell the operator about it. Never
    raises: the disk may be the very thing that failed."""
    if out is None:
        return ""
    log_path = Path(out) / "error.log"
    try:
        if not Path(out).is_dir():
            return ""
        with log_path.open("a", encoding="utf-8") as fh:
            fh.write(f"--- {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}\n{text}")
    except OSError as exc:
        return f" (the details could not be written to {log_path}: {exc.strerror or exc})"
    return (
        f" (details in {log_path}; the crawl directory is consistent and the same command "
        "resumes it)"
    )


def _report_failure(exc: BaseException, out: Path | None) -> int:
    """A failure inside a running crawl: one clear line per cause, the last one saying
    where the full traceback went (``<crawl directory>/error.log``; stderr when there is
    no directory). Writing error.log into a full or read-only directory fails quietly."""
    import traceback

    if isinstance(exc, SystemExit):
        raise exc
    leaves = _leaves(exc)
    lines = []
    for leaf in leaves:
        if isinstance(leaf, HeadwayError):
            lines.append(f"headway: error: {leaf}")
        elif _is_io_failure(leaf):
            lines.append(f"headway: error: I/O failure: {leaf}")
        else:
            lines.append(f"headway: internal error: {type(leaf).__name__}: {leaf}")
    text = "".join(traceback.format_exception(exc))
    where = _write_error_log(out, text)
    lines[-1] += where
    print("\n".join(lines), file=sys.stderr)
    if not where:
        print(text, file=sys.stderr)
    return 2 if all(isinstance(e, HeadwayError) or _is_io_failure(e) for e in leaves) else 1


def _status(args: argparse.Namespace) -> int:
    if args.out is None:
        if not args.store or args.crawl_id is None:
            print(
                "headway: error: give a crawl directory, or --store and --crawl-id of a shared"
                " crawl",
                file=sys.stderr,
            )
            return 2
        from headway.cli.status import print_shared_status

        return print_shared_status(args.store, args.crawl_id, as_json=args.json)
    from headway.cli.status import print_status

    return print_status(args.out, as_json=args.json, store=args.store, crawl_id=args.crawl_id)


def _crawl(args: argparse.Namespace) -> int:
    from headway import crashpoints

    if crashpoints.ENV_ERROR is not None:
        print(f"headway: error: {crashpoints.ENV_ERROR}", file=sys.stderr)
        return 2
    settings = settings_from_sources(args.config, os.environ, _flags_given(args))
    _setup_logging(settings.output.log_format, settings.output.quiet)
    from headway.runtime.components import canon_options
    from headway.urls.scope import load_optout
    from headway.urls.seeds import load_seeds

    seeds: list[str] = []
    scopes: dict[str, Any] = {}
    if args.command == "node":
        if not settings.frontier.store:
            print(
                "headway: error: a node joins a shared crawl: give --store and --crawl-id",
                file=sys.stderr,
            )
            return 2
    else:
        loaded = load_seeds(
            args.seeds,
            default_scheme=settings.crawl.seed_scheme,
            options=canon_options(settings),
            max_length=settings.scope.max_url_length,
        )
        seeds = loaded.urls
        scopes = loaded.scopes
        _report_seed_problems(args.seeds, loaded)
        if scopes and settings.frontier.store:
            print(
                "headway: error: seeds with scope options of their own (scope=, depth=, "
                "extra-hops=) are for a crawl with its own frontier; a shared crawl (--store) "
                "does not keep them yet",
                file=sys.stderr,
            )
            return 2
    optout = None
    if settings.scope.optout_file is not None:
        optout, oproblems = load_optout(settings.scope.optout_file)
        for msg in oproblems:
            log.warning("%s: %s", settings.scope.optout_file, msg)
    return asyncio_run_crawl(settings, seeds, optout, seed_scopes=scopes)


#: Unusable seed lines listed one by one; the rest are counted.
SEED_PROBLEMS_LISTED = 10


def _report_seed_problems(path: Path, loaded: SeedList) -> None:
    """Warn about the first ``SEED_PROBLEMS_LISTED`` unusable seed lines (line number,
    reason, the start of the line) and count the rest."""
    listed = loaded.problems[:SEED_PROBLEMS_LISTED]
    for p in listed:
        shown = f" ({p.line!r})" if p.line else ""
        log.warning("%s line %d skipped: %s%s", path, p.line_no, p.reason, shown)
    if loaded.unusable > len(listed):
        log.warning(
            "%s: %d unusable lines skipped in all (%d listed); %d seeds kept",
            path,
            loaded.unusable,
            len(listed),
            len(loaded.urls),
        )


def asyncio_run_crawl(
    settings: Settings, seeds: list[str], optout: Any, *, seed_scopes: Any = None
) -> int:
    from headway.cli.stopping import EXIT_INTERRUPTED, StopSignals

    runner: Callable[..., Any]
    try:
        import uvloop

        runner = uvloop.run
    except ImportError:  # pragma: no cover - uvloop is a dependency; plain asyncio works
        runner = asyncio.run
    from headway.cli.progress import print_summary
    from headway.runtime.summary import StopReason

    stop = StopSignals()
    with stop.held():  # a stop signal is a clean stop until the summary is out
        summary = runner(_run_node(settings, seeds, optout, stop, seed_scopes=seed_scopes))
        print_summary(summary, settings, quiet=settings.output.quiet)
    if summary.stopped_by is StopReason.INTERRUPTED:
        return EXIT_INTERRUPTED
    # exit 3 is for a crawl that ended by itself or at a limit; a stop control is 0
    if summary.seeds_unreached and summary.stopped_by is not StopReason.STOP_CONTROL:
        return EXIT_UNREACHABLE
    return 0


async def _run_node(
    settings: Settings, seeds: list[str], optout: Any, stop: StopSignals, *, seed_scopes: Any = None
) -> Any:
    from headway.cli.console import announce
    from headway.cli.progress import Progress
    from headway.console.serve import node_console
    from headway.runtime.node import Node
    from headway.runtime.summary import StopReason

    progress = Progress(enabled=not settings.output.quiet)
    every = progress.interval  # the monitor builds readings only for a display
    on_stats = progress.update if every is not None else None
    node: Node | None = None
    console = node_console(settings, lambda: getattr(node, "console", None))
    node = Node(
        settings,
        seeds,
        optout=optout,
        on_stats=on_stats,
        stats_interval=every,
        seed_scopes=seed_scopes,
        on_started=console[0].store_token if console is not None else None,
    )
    if console is not None:
        await console[0].start()
        announce(console[0], log.warning)
    loop = asyncio.get_running_loop()
    stop.set_request(lambda: node.request_stop(StopReason.INTERRUPTED))
    stop.attach(loop)
    loop.add_signal_handler(signal.SIGUSR1, node.resume_quota)
    progress.start()
    try:
        return await node.run()
    finally:
        progress.stop()
        loop.remove_signal_handler(signal.SIGUSR1)
        stop.detach(loop)
        if console is not None:
            await console[0].stop()
            await loop.run_in_executor(None, console[1])


def _bench(args: argparse.Namespace) -> int:
    from headway.bench.harness import BenchCase, parse_size, run_bench
    from headway.bench.report import report_lines

    try:
        sizes = [parse_size(s) for s in args.size]
    except ValueError as exc:
        print(f"headway: error: --size: {exc}", file=sys.stderr)
        return 2
    if args.hosts < 1 or args.pages < 1 or args.links < 1 or min(args.gaps) < 0:
        print("headway: error: --hosts, --pages, --links must be >= 1, gaps >= 0", file=sys.stderr)
        return 2
    if not 1 <= args.repeat <= 100:
        print("headway: error: --repeat must be 1..100", file=sys.stderr)
        return 2
    if not 0 <= args.server_idle <= 86_400:
        print("headway: error: --server-idle must be 0..86400 seconds", file=sys.stderr)
        return 2
    from headway.errors import ConfigError
    from headway.fetch.clients import check_client

    try:
        for client in args.http_client:
            check_client(client)
    except ConfigError as exc:
        print(f"headway: error: --http-client: {exc}", file=sys.stderr)
        return 2
    cases = [
        BenchCase(
            scheme=scheme,
            gap=gap,
            size=size,
            hosts=args.hosts * size,
            pages=args.pages,
            links=args.links,
            page_kb=args.page_kb,
            parsers=args.parsers,
            seconds=args.seconds,
            src=src,
            mix=args.pages_mix,
            idle=args.server_idle,
            resumption=resumption == "on",
            round=n,
            client=client,
            text=text,
        )
        for n in range(args.repeat)
        for size in sizes
        for scheme in args.scheme
        for resumption in (dict.fromkeys(args.tls_resumption) if scheme == "https" else ["on"])
        for gap in args.gaps
        for client in dict.fromkeys(args.http_client)
        for text in dict.fromkeys(args.text)
        for src in ([args.before_src, None] if args.before_src else [None])
    ]
    results = run_bench(cases)
    for line in report_lines(results):
        print(line, flush=True)
    failed = [r for r in results if r.error]
    if failed:
        print(f"headway: {len(failed)} of {len(results)} runs failed (see above)", file=sys.stderr)
        return 1
    return 0
