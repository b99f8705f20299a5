"""``headway why URL (DIR | --store URL --crawl-id ID)``: why a URL was or was not
crawled, from the crawl's own records: its frontier, its crawl logs and its control log
(the verdict itself: ``report/why.py``). Read-only, also while the crawl runs."""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from headway.cli.sharedflags import add_shared_crawl_flags
from headway.control.target import CrawlRef, frontier_file
from headway.errors import ControlError, HeadwayError, StoreError
from headway.frontier.store import FoundUrl
from headway.report.why import WhyRecords, explain
from headway.runtime.seeding import ADMISSION_META
from headway.urls.canonical import DEFAULT_TRACKING_PARAMS, CanonOptions, canonicalize, host_key
from headway.urls.fingerprint import fingerprint


def add_why_parser(add_parser: Any) -> None:
    p = add_parser(
        "why",
        help="say why a URL was or was not crawled, from the crawl's own records",
        description="Say why a URL was or was not crawled: fetched (when, with what "
        "status), disallowed by robots.txt (which version), queued (depth, priority), in "
        "flight, opted out, out of scope (the rule), or never seen; from the crawl's "
        "frontier, crawl logs and control log, also while it runs.",
    )
    p.add_argument("url", help="the URL, as found or as canonical")
    p.add_argument("out", type=Path, nargs="?", default=None, help="crawl directory")
    add_shared_crawl_flags(p)
    p.add_argument(
        "--logs",
        type=Path,
        action="append",
        default=[],
        metavar="DIR",
        help="a shared crawl: a node's crawl directory whose crawl log to read (repeat)",
    )


def _lines(dirs: list[Path], urls: set[str]) -> Iterator[dict[str, Any]]:
    """Crawl log lines (in file order) whose URL is one of ``urls``; a cheap text test
    first, since a crawl log has a line per fetch of the whole crawl."""
    from headway.cli.report import _crawl_logs

    needles = [f'"url":"{u}"' for u in urls] + [f'"url": "{u}"' for u in urls]
    for d in dirs:
        for path in _crawl_logs(d):
            try:
                with path.open(encoding="utf-8", errors="replace") as fh:
                    for line in fh:
                        if not any(n in line for n in needles):
                            continue
                        try:
                            entry = json.loads(line)
                        except ValueError:
                            continue
                        if isinstance(entry, dict) and entry.get("url") in urls:
                            yield entry
            except OSError as exc:
                raise ControlError(f"cannot read {path}: {exc.strerror or exc}") from None


def _controls(ref: CrawlRef) -> list[Any]:
    from headway.cli.report import _controls as read_controls

    return read_controls(ref)


def _optout_file(admission: dict[str, Any] | None) -> frozenset[str] | None:
    name = (admission or {}).get("optout_file")
    if not name:
        return None
    from headway.urls.scope import load_optout

    try:
        optout, _ = load_optout(Path(name))
    except (OSError, HeadwayError):  # gone or unreadable since: the file is not judged
        return None
    return optout.domains


def _canonical(url: str, admission: dict[str, Any] | None) -> str:
    rules = admission or {}
    strip = frozenset(str(p) for p in rules.get("strip_params", ())) | DEFAULT_TRACKING_PARAMS
    options = CanonOptions(strip_params=strip, sort_query=bool(rules.get("sort_query", True)))
    canonical = canonicalize(url.strip(), None, options)
    if canonical is None:
        raise ControlError(f"{url!r} is not a URL the crawl could admit (http or https)")
    return canonical


def why_command(args: argparse.Namespace) -> int:
    ref = CrawlRef(args.out, args.store, args.crawl_id)
    if args.store and args.out is not None:
        raise ControlError("give a crawl directory or --store and --crawl-id, not both")
    ref.check()
    if ref.store:
        admission, seeds, found_of, shed = _shared(ref)
        dirs = list(args.logs)
    else:
        assert ref.directory is not None
        admission, seeds, found_of, shed = _embedded(frontier_file(ref.directory))
        dirs = [ref.directory, *args.logs]
    url = _canonical(args.url, admission)
    host = host_key(url)
    found = found_of(url, host, fingerprint(url))
    scheme_hosts = {f"{s}://{host}/robots.txt" for s in ("http", "https")}
    lines: tuple[dict[str, Any], ...] = ()
    robots: tuple[dict[str, Any], ...] = ()
    if dirs:
        got = list(_lines(dirs, {url, args.url.strip()} | scheme_hosts))
        lines = tuple(e for e in got if e.get("url") not in scheme_hosts)
        robots = tuple(e for e in got if e.get("url") in scheme_hosts)
    notes: list[str] = []
    if url != args.url.strip():
        notes.append(f"(canonical form: {url})")
    records = WhyRecords(
        url=url,
        host=host,
        found=found,
        lines=lines,
        robots=robots,
        admission=admission,
        seeds=seeds,
        controls=_controls(ref),
        optout_file=_optout_file(admission),
        logs_read=bool(dirs),
        shed=shed,
        notes=tuple(notes),
    )
    print("\n".join(explain(records)))
    return 0


def _admission(text: str | None) -> dict[str, Any] | None:
    try:
        value = json.loads(text) if text else None
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _embedded(path: Path) -> tuple[dict[str, Any] | None, list[str], Any, int]:
    from headway.frontier.sqlite.status import find_url, meta_values, read_counts, seed_hosts

    admission = _admission(meta_values(path, ADMISSION_META).get(ADMISSION_META))
    shed = sum(read_counts(path).shed.values())

    def found_of(url: str, host: str, fp: int) -> FoundUrl:
        return find_url(path, url, fp)

    return admission, seed_hosts(path), found_of, shed


def _shared(ref: CrawlRef) -> tuple[dict[str, Any] | None, list[str], Any, int]:
    import redis

    from headway.control.target import connect_shared
    from headway.frontier.redis.lookup import crawl_facts, find_url

    crawl = ref.crawl_id or ""
    client, where = connect_shared(ref)
    try:
        meta, shed = crawl_facts(client, crawl)
    except redis.RedisError as exc:
        client.close()
        raise StoreError(f"cannot read {where}: {exc}") from None
    try:
        seeds = [str(s) for s in json.loads(meta.get("m:seeds") or "[]")]
    except ValueError:
        seeds = []

    def found_of(url: str, host: str, fp: int) -> FoundUrl:
        try:
            return find_url(client, crawl, url, host, fp)
        except redis.RedisError as exc:
            raise StoreError(f"cannot read {where}: {exc}") from None
        finally:
            client.close()

    return _admission(meta.get("m:" + ADMISSION_META)), seeds, found_of, shed
