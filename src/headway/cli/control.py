"""The control commands of the command line: ``headway pause``, ``resume``, ``stop``,
``seed``, ``opt-out``, ``exclude`` and ``host``. Each names a crawl (a crawl directory, or
``--store URL --crawl-id ID``), records one control per action in its control log and
prints one line per control recorded; a bad argument, no crawl there or an unreachable
store is one ``headway: error:`` line and exit status 2."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from headway.cli.sharedflags import add_shared_crawl_flags
from headway.control.log import Control, ControlKind, check_args, describe
from headway.control.target import MARKER, CrawlRef, cli_origin, connect_shared, open_control_log
from headway.errors import ControlError, StoreError

#: Control commands and what each asks.
CONTROL_COMMANDS = {
    "pause": "pause a running crawl (or one node, --node): no new fetch until resume",
    "resume": "resume a paused crawl (or one node, --node)",
    "stop": "stop a running crawl (or one node, --node) cleanly, as Ctrl-C does",
    "seed": "add seeds to a crawl, also a running or a shared one",
    "opt-out": "opt a domain out of a crawl: refused from now on, its queued URLs dropped",
    "exclude": "exclude the URLs a regular expression matches: refused from now on, queued "
    "ones dropped",
    "host": "override one host's delay, budget or concurrency, exclude it, or clear that",
}


def add_crawl_args(parser: argparse.ArgumentParser, *, items: str | None = None) -> None:
    """The arguments naming a crawl, as ``headway status`` takes them; ``items``: the
    help of positional items after the directory (seeds, domains, hosts)."""
    if items is None:
        parser.add_argument("out", type=Path, nargs="?", default=None, help="crawl directory")
    else:
        parser.add_argument(
            "items", nargs="+", metavar="[DIR] ITEM", help=f"crawl directory, then {items}"
        )
    add_shared_crawl_flags(parser)


def add_control_parsers(add_parser: Any) -> None:
    """The control subcommands (``add_parser``: the subparsers' factory)."""
    for name in ("pause", "resume", "stop"):
        p = add_parser(name, help=CONTROL_COMMANDS[name], description=_DESCRIPTIONS[name])
        add_crawl_args(p)
        p.add_argument("--node", default=None, help="only this node of a shared crawl")
    seed = add_parser("seed", help=CONTROL_COMMANDS["seed"], description=_SEED_TEXT)
    add_crawl_args(seed, items="the seeds: URLs or bare domains")
    optout = add_parser("opt-out", help=CONTROL_COMMANDS["opt-out"], description=_OPTOUT_TEXT)
    add_crawl_args(optout, items="the domains to opt out")
    exclude = add_parser("exclude", help=CONTROL_COMMANDS["exclude"], description=_EXCLUDE_TEXT)
    add_crawl_args(exclude, items="the regular expressions (searched in each URL)")
    host = add_parser("host", help=CONTROL_COMMANDS["host"], description=_HOST_TEXT)
    add_crawl_args(host, items="the host (as the crawl log names it, with :port if any)")
    host.add_argument("--delay", type=float, default=None, help="seconds between requests")
    host.add_argument("--budget", type=int, default=None, help="most pages fetched from now")
    host.add_argument("--concurrency", type=int, default=None, help="most requests in flight")
    host.add_argument("--exclude", action="store_true", help="fetch nothing more from it")
    host.add_argument("--clear", action="store_true", help="back to the crawl's settings")


#: What ``headway pause --help`` (``resume``, ``stop``) says: the command's help as a
#: sentence, as every command's description reads.
_DESCRIPTIONS = {
    "pause": "Pause a running crawl, or one node of it (--node): no new fetch starts until "
    "resume; the fetches under way finish.",
    "resume": "Resume a paused crawl, or one node of it (--node).",
    "stop": "Stop a running crawl, or one node of it (--node), cleanly, as Ctrl-C does: "
    "what was fetched is stored, and the same command resumes it.",
}
_SEED_TEXT = (
    "Add seeds to a crawl. A running node admits them within about a second, through the "
    "usual admission (scope, opt-out, seen); their hosts join the scope as seeds' do. "
    "A crawl that does not run takes them when it starts again."
)
_OPTOUT_TEXT = (
    "Opt a domain (and its subdomains) out of a crawl: admission refuses it from then on "
    "and the queued URLs of its hosts are dropped and counted."
)
_EXCLUDE_TEXT = (
    "Exclude the URLs a regular expression (Python syntax, searched in the URL) matches, "
    "kept in the control log: every node refuses them at admission within about a "
    "second, and drops the queued ones when it leases them (without a fetch), counting "
    "them; a crawl started again keeps the rule."
)
_HOST_TEXT = (
    "Override one host's politeness while the crawl runs, kept in the control log: "
    "--delay (never below the host's robots.txt Crawl-delay), --budget (pages fetched "
    "from now on; then its queued URLs are dropped), --concurrency, or --exclude it; "
    "--clear puts it back to the crawl's settings."
)


def control_command(args: argparse.Namespace) -> int:
    """Record the controls ``args`` ask for and print one line for each."""
    name: str = args.command
    ref, items = _target(args)
    node = getattr(args, "node", None)
    wants = _wants(name, args, items)
    if node is not None and ref.directory is not None and not ref.store:
        _check_dir_node(ref.directory, node)
    checked = [(kind, check_args(kind, a, node)) for kind, a in wants]
    log = open_control_log(ref)
    try:
        origin = cli_origin()
        live = _live_nodes(ref) if ref.store else None
        for kind, a in checked:
            c = log.append(kind, a, node=node, origin=origin, at=time.time())
            print(_recorded(c, ref, live), flush=True)
    finally:
        log.close()
    return 0


def _live_nodes(ref: CrawlRef, within: float = 60.0) -> list[str]:
    """The nodes of a shared crawl with a heartbeat in the last ``within`` seconds."""
    import redis

    from headway.frontier.redis.status import live_node_ids

    client, where = connect_shared(ref)
    try:
        return live_node_ids(client, ref.crawl_id or "", time.time() - within)
    except redis.RedisError as exc:
        raise StoreError(f"cannot read {where}: {exc}") from None
    finally:
        client.close()


def _target(args: argparse.Namespace) -> tuple[CrawlRef, list[str]]:
    items: list[str] = list(getattr(args, "items", []) or [])
    directory: Path | None = getattr(args, "out", None)
    if args.store:
        if directory is not None:
            raise ControlError("give a crawl directory or --store and --crawl-id, not both")
    elif "items" in vars(args):
        if len(items) < 2:
            raise ControlError(f"give a crawl directory and then what to {args.command}")
        directory, items = Path(items[0]), items[1:]
    ref = CrawlRef(directory, args.store, args.crawl_id)
    ref.check()
    return ref, items


Wants = list[tuple[ControlKind, dict[str, Any]]]


def _wants(name: str, args: argparse.Namespace, items: list[str]) -> Wants:
    if name in ("pause", "resume", "stop"):
        return [(ControlKind(name), {})]
    if name == "seed":
        return [(ControlKind.ADD_SEEDS, {"urls": items})]
    if name == "opt-out":
        return [(ControlKind.OPT_OUT, {"domain": d}) for d in items]
    if name == "exclude":
        return [(ControlKind.EXCLUDE, {"regex": r}) for r in items]
    if len(items) != 1:
        raise ControlError("name one host")
    # the crawl's host key: lower case, no trailing dot, ``:port`` when not the default
    host = items[0].strip().rstrip(".").lower()
    if not host or "/" in host:
        raise ControlError(f"{items[0]!r} is not a host name (host or host:port, no path)")
    sets = {k: getattr(args, k) for k in ("delay", "budget", "concurrency")}
    sets = {k: v for k, v in sets.items() if v is not None}
    chosen = bool(sets) + args.exclude + args.clear
    if chosen != 1:
        raise ControlError("give --delay, --budget and/or --concurrency, or --exclude, or --clear")
    if args.exclude:
        return [(ControlKind.HOST_EXCLUDE, {"host": host})]
    if args.clear:
        return [(ControlKind.HOST_CLEAR, {"host": host})]
    return [(ControlKind.HOST_OVERRIDE, {"host": host, **sets})]


def _check_dir_node(directory: Path, node: str) -> None:
    try:
        info = json.loads((directory / MARKER).read_text())
    except (OSError, ValueError):
        return  # open_control_log names what is wrong with the directory
    mine = info.get("node_id") if isinstance(info, dict) else None
    if mine is not None and mine != node:
        raise ControlError(f"the node of {directory} is {mine}, not {node}")


def _recorded(c: Control, ref: CrawlRef, live: list[str] | None) -> str:
    line = f"recorded {describe(c)} in {ref.shown()}"
    if live is not None:  # a shared crawl
        if not live:
            return line + " (no live node now: it applies when nodes run)"
        if c.node is not None and c.node not in live:
            return line + f" (node {c.node} is not live now; live: {', '.join(sorted(live))})"
        return line
    if ref.directory is not None:
        from headway.cli.status import _running

        if not _running(ref.directory / "lock").startswith("yes"):
            if c.kind is ControlKind.STOP:
                return line + " (no node runs there now: nothing to stop)"
            return line + " (no node runs there now: it applies when the crawl runs again)"
    return line
