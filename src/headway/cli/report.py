"""``headway report``: the end-of-crawl report of a crawl directory or a shared crawl,
read without disturbing a running crawl.

- A crawl directory: its crawl logs (``crawl.log.jsonl``, and ``crawl-<node>.log.jsonl``
  of a shared crawl's node directory), its frontier's counts and control log (read-only)
  and the URLs its opt-out controls dropped. Its seeds are the crawl log's depth-0 URLs
  that no page led to (the seeds file itself is not kept in the directory).
- A shared crawl (``--store``, ``--crawl-id``): what Redis holds: the crawl's stored
  seeds (and those add-seeds controls gave, as given), the frontier's counts, the
  control log, the URLs opt-out controls dropped, and the statistics each live node
  last published (nodes that stopped publish nothing).
  The crawl logs stay in each node's directory: hosts, MIME types, response codes and
  the seeds' first fetches and reach come from the node directories given with
  ``--logs DIR`` (those on this machine), and the report says when none is given.

``--politeness``: the politeness ledger instead (``headway.report.politeness``), from the
crawl logs alone: a crawl directory's, and those of the directories given with ``--logs``
(which a shared crawl needs: without one it is a one-line error).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from headway.cli.control import add_crawl_args
from headway.control.log import Control, ControlKind, read_all
from headway.control.target import CrawlRef, frontier_file, open_control_log
from headway.errors import ControlError, StoreError
from headway.frontier.store import FrontierCounts
from headway.report.build import NodeRow, ReportBuilder
from headway.report.ledger_render import to_json as ledger_json
from headway.report.ledger_render import to_text as ledger_text
from headway.report.politeness import Ledger, LedgerBuilder
from headway.report.render import FORMATS, render
from headway.store.crawllog import CrawlLogEntry, parse_entry

NEEDS_LOGS = (
    "the politeness ledger is read from the nodes' crawl logs, kept in each node's"
    " directory: give them with --logs DIR (repeat for each node)"
)
OPTOUT_META = "optout-dropped:"
OPTOUT_FIGURE = "URLs dropped by opt-out controls"


def add_report_parser(add_parser: Any) -> None:
    p = add_parser(
        "report",
        help="report on a crawl: seeds, hosts, MIME types, response codes, frontier, controls",
        description="Report on a crawl directory or a shared crawl (--store, --crawl-id), "
        "running or finished: seeds, hosts, MIME types, response codes, the frontier and the "
        "control log.",
    )
    add_crawl_args(p)
    p.add_argument("--format", choices=FORMATS, default="text", help="output format")
    p.add_argument(
        "--politeness",
        action="store_true",
        help="the politeness ledger instead: per host, requests, the smallest gap and the "
        "delay in force, robots.txt versions and the URLs they disallowed, Crawl-delay and "
        "Retry-After waits (from the crawl logs; docs/politeness.md)",
    )
    p.add_argument("--json", action="store_true", help="the same as --format json")
    p.add_argument(
        "--logs",
        type=Path,
        action="append",
        default=[],
        metavar="DIR",
        help="a shared crawl: a node's crawl directory whose crawl log to include (repeat)",
    )


def report_command(args: argparse.Namespace) -> int:
    ref = CrawlRef(args.out, args.store, args.crawl_id)
    if args.store and args.out is not None:
        raise ControlError("give a crawl directory or --store and --crawl-id, not both")
    fmt = "json" if args.json else args.format
    if args.politeness and fmt == "csv":
        raise ControlError("the politeness ledger is text or JSON (--json), not CSV")
    if args.politeness and args.store and not args.logs:
        raise ControlError(NEEDS_LOGS)
    ref.check()
    if args.politeness:
        ledger = read_ledger(ref, logs=args.logs)
        if fmt == "json":
            text = json.dumps(ledger_json(ledger), indent=2) + "\n"
        else:
            text = ledger_text(ledger)
    else:
        text = render(read_report(ref, logs=args.logs), fmt)
    sys.stdout.write(text)
    return 0


def read_ledger(ref: CrawlRef, *, logs: list[Path] | None = None) -> Ledger:
    """The politeness ledger of the crawl ``ref`` names, from its crawl logs: a crawl
    directory's own, or (a shared crawl) those of the node directories in ``logs``."""
    dirs = list(logs or [])
    if ref.store:
        if not dirs:
            raise ControlError(NEEDS_LOGS)
    else:
        assert ref.directory is not None
        dirs.insert(0, ref.directory)
    source = ref.shown()
    builder = LedgerBuilder()
    lines, bad = _read_logs(builder, dirs)
    notes = []
    if lines == 0:
        notes.append("no crawl log lines found")
    if bad:
        notes.append(f"{bad} crawl log lines could not be read and were skipped")
    ledger = builder.build(source, ())
    if ledger.estimated:
        notes.append(
            f"{ledger.estimated} requests from crawl logs written before send times were"
            " recorded: their start times stand in (to the millisecond)"
        )
    notes.append(
        "requests a node sent but had not logged when it was killed are not in its crawl log"
    )
    return dataclasses.replace(ledger, notes=tuple(notes))


def read_report(ref: CrawlRef, *, logs: list[Path] | None = None) -> Any:
    """The report of the crawl ``ref`` names (see the module docstring)."""
    builder = ReportBuilder()
    notes: list[str] = []
    if not ref.store:
        assert ref.directory is not None
        path = frontier_file(ref.directory)
        lines, bad = _read_logs(builder, [ref.directory])
        counts, extra = _sqlite_figures(path)
        controls = _controls(ref)
        seeds = builder.root_urls()
        if bad:
            notes.append(f"{bad} crawl log lines could not be read and were skipped")
        notes.append("seeds: the crawl log's depth-0 URLs no page led to")
        return builder.build(
            source=str(ref.directory),
            seeds=seeds,
            frontier=counts,
            controls=controls,
            extra=extra,
            notes=notes,
        )
    shared = _shared_figures(ref)
    dirs = list(logs or [])
    lines, bad = _read_logs(builder, dirs)
    if not dirs:
        notes.append(
            "hosts, MIME types, response codes and the seeds' first fetches come from the"
            " nodes' crawl logs, kept in each node's directory: give them with --logs DIR"
        )
    elif lines == 0:
        notes.append("no crawl log lines in the directories given with --logs")
    if bad:
        notes.append(f"{bad} crawl log lines could not be read and were skipped")
    notes.append("nodes: the live nodes' last published statistics (stopped nodes publish none)")
    controls = _controls(ref)
    shared_seeds = [str(s) for s in shared["seeds"]]
    for c in controls:  # seeds added by controls, as given
        if c.kind is ControlKind.ADD_SEEDS:
            shared_seeds += [u for u in c.args.get("urls", ()) if u not in shared_seeds]
    return builder.build(
        source=shared["source"],
        seeds=shared_seeds,
        frontier=shared["counts"],
        controls=controls,
        extra=shared["extra"],
        notes=notes,
        nodes=shared["nodes"],
        logs_read=bool(dirs),
    )


def _crawl_logs(directory: Path) -> list[Path]:
    if not directory.is_dir():
        raise ControlError(f"{directory}: not a directory")
    return sorted(
        p
        for p in directory.iterdir()
        if p.name == "crawl.log.jsonl"
        or (p.name.startswith("crawl-") and p.name.endswith(".log.jsonl"))
    )


def _entries(path: Path) -> Iterator[CrawlLogEntry | None]:
    try:
        with path.open(encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if not line.strip():
                    continue
                try:
                    yield parse_entry(line)
                except ValueError:
                    yield None
    except OSError as exc:
        raise ControlError(f"cannot read {path}: {exc.strerror or exc}") from None


def _read_logs(builder: ReportBuilder | LedgerBuilder, dirs: list[Path]) -> tuple[int, int]:
    """Every entry of the crawl logs of ``dirs`` into ``builder``: (entries read, lines
    that were not entries)."""
    lines = bad = 0
    for d in dirs:
        for path in _crawl_logs(d):
            for e in _entries(path):
                if e is None:
                    bad += 1
                else:
                    lines += 1
                    builder.add(e)
    return lines, bad


def _controls(ref: CrawlRef) -> list[Control]:
    log = open_control_log(ref, read_only=True)
    try:
        return read_all(log)
    finally:
        log.close()


def _sqlite_figures(path: Path) -> tuple[FrontierCounts, dict[str, int]]:
    from headway.frontier.sqlite.status import meta_values, read_counts

    counts = read_counts(path)
    dropped = meta_values(path, OPTOUT_META)
    return counts, {OPTOUT_FIGURE: sum(int(v) for v in dropped.values() if v.isdigit())}


def _shared_figures(ref: CrawlRef) -> dict[str, Any]:
    import redis

    from headway.cli.status import decode_record
    from headway.frontier.redis.status import crawl_meta, read_crawl_status

    crawl = ref.crawl_id or ""
    status = read_crawl_status(ref.store, crawl)
    from headway.control.target import connect_shared

    client, where = connect_shared(ref)
    try:
        meta = crawl_meta(client, crawl)
    except redis.RedisError as exc:
        raise StoreError(f"cannot read {where}: {exc}") from None
    finally:
        client.close()
    try:
        seeds = [str(s) for s in json.loads(meta.get("m:seeds") or "[]")]
    except ValueError:
        seeds = []
    dropped = sum(
        int(v) for k, v in meta.items() if k.startswith("m:" + OPTOUT_META) and v.isdigit()
    )
    now = time.time()
    nodes = []
    for row in status.nodes:
        st = decode_record(row.record).stats
        nodes.append(
            NodeRow(
                node=row.node,
                heartbeat_age=max(0.0, now - row.last_heartbeat),
                shards=row.shards_held,
                fetches=st.fetch.fetches,
                bytes=st.fetch.bytes,
                errors=st.fetch.errors,
                pages_per_second=st.fetch.pages_per_second,
            )
        )
    return {
        "source": f"crawl {crawl} in {status.store}",
        "seeds": seeds,
        "counts": status.frontier,
        "extra": {OPTOUT_FIGURE: dropped},
        "nodes": nodes,
    }
