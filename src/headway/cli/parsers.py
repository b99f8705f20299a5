"""The command line's parser: every command, its arguments and its help, and every
setting of ``headway.settings`` as a flag of ``crawl`` and ``node``. What a command
does is in ``commands.py`` and the modules it names."""

from __future__ import annotations

import argparse
import functools
from pathlib import Path
from typing import Any

from headway import __version__
from headway.cli.sharedflags import add_shared_crawl_flags
from headway.settings import KEYS, Key

_SHORT = {"out": "-o", "quiet": "-q"}
#: The control commands (``cli/control.py``).
CONTROLS = ("pause", "resume", "stop", "seed", "opt-out", "exclude", "host")
#: The commands ``headway --help`` lists. ``bench-crawl`` (the measured crawl process of
#: ``headway bench``) is internal: ``main`` reads it before this parser (``bench_child_parser``).
COMMANDS = (
    "demo",
    "crawl",
    "node",
    "status",
    "console",
    "report",
    "export",
    "extract",
    "why",
    *CONTROLS,
    "drop-crawl",
    "simweb",
    "bench",
)
#: The internal command, never listed, never offered as a choice.
BENCH_CHILD = "bench-crawl"


def _add_setting_flags(parser: argparse.ArgumentParser) -> None:
    groups: dict[str, argparse._ArgumentGroup] = {}
    for key in KEYS:
        group = groups.get(key.section)
        if group is None:
            group = groups[key.section] = parser.add_argument_group(f"{key.section} settings")
        names = [key.flag] + ([_SHORT[key.name]] if key.name in _SHORT else [])
        help_text = f"{key.help} (default: {_default_text(key)}; env {key.env})"
        if key.choices:
            help_text += f"; one of: {', '.join(key.choices)}"
        help_text = help_text.replace("%", "%%")  # argparse reads % as a format code
        kwargs: dict[str, Any] = {"dest": key.name, "default": argparse.SUPPRESS, "help": help_text}
        if key.kind == "bool":
            kwargs["action"] = argparse.BooleanOptionalAction
        elif key.kind == "list":
            kwargs["action"] = "append"
            kwargs["metavar"] = "VALUE"
        else:
            kwargs["metavar"] = key.kind.removeprefix("opt").upper()
        group.add_argument(*names, **kwargs)


def _default_text(key: Key) -> str:
    if key.name == "parsers":
        return "cores - 1, at least 1"
    if key.default in ((), None, ""):
        return "none"
    return str(key.default)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="headway",
        description="A polite, fast, crash-safe web crawler writing WARC/1.1.",
        epilog="First time? `headway demo` crawls a simulated web on this machine, no "
        "internet needed, and says what to look at.",
        allow_abbrev=False,
    )
    parser.add_argument("--version", action="version", version=f"headway {__version__}")
    # not required: bare ``headway`` prints the help instead of an argparse error (main)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands")
    # no abbreviations: "--max-page 5" must be an error, not --max-pages
    add_parser = functools.partial(sub.add_parser, allow_abbrev=False)
    from headway.cli.demo import add_demo_parser

    add_demo_parser(add_parser)
    crawl = add_parser(
        "crawl",
        usage="%(prog)s SEEDS --user-agent UA [--out DIR] [--config TOML] [SETTING FLAGS]",
        help="crawl outward from seeds into a crawl directory",
        description="Crawl outward from the seeds, politely, into the crawl directory (--out). "
        "Running the same command again continues an interrupted crawl. Settings come from "
        "defaults < --config TOML < HEADWAY_* environment < flags.",
    )
    crawl.add_argument(
        "seeds",
        type=Path,
        help="file of seeds (- for standard input): one URL or bare domain a line, # comments",
    )
    crawl.add_argument("--config", type=Path, default=None, help="TOML settings file")
    _add_setting_flags(crawl)
    node = add_parser(
        "node",
        usage="%(prog)s --store URL --crawl-id ID --user-agent UA [--out DIR] [SETTING FLAGS]",
        help="join a shared crawl (--store, --crawl-id) as one more node, without seeds",
        description="Run one more node of a shared crawl: it takes its share of the crawl's "
        "shards from the store (--store, --crawl-id) and writes its own WARC files, index and "
        "crawl log into --out. Settings as for crawl.",
    )
    node.add_argument("--config", type=Path, default=None, help="TOML settings file")
    _add_setting_flags(node)
    status = add_parser(
        "status",
        help="show the state of a crawl directory, or of a shared crawl (--store, --crawl-id)",
        description="Show the state of a crawl directory or of a shared crawl (--store, "
        "--crawl-id), running or finished: the frontier's counts, the last run, live nodes.",
    )
    status.add_argument("out", type=Path, nargs="?", default=None, help="crawl directory")
    status.add_argument("--json", action="store_true", help="machine-readable output")
    add_shared_crawl_flags(status)
    from headway.cli.console import add_console_parser
    from headway.cli.control import add_control_parsers
    from headway.cli.report import add_report_parser

    add_console_parser(add_parser)

    add_report_parser(add_parser)
    from headway.cli.export import add_export_parser

    add_export_parser(add_parser)
    from headway.cli.extract import add_extract_parser

    add_extract_parser(add_parser)
    from headway.cli.why import add_why_parser

    add_why_parser(add_parser)
    add_control_parsers(add_parser)
    from headway.cli.dropcrawl import add_drop_parser

    add_drop_parser(add_parser)
    sim = add_parser(
        "simweb",
        help="serve the simulated web for trying configurations",
        description="Serve the simulated web on 127.0.0.1 (hosts site0.sim, site1.sim, ...) "
        "until interrupted, for trying configurations against it.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    sim.add_argument("--hosts", type=int, default=10, help="number of virtual hosts")
    sim.add_argument("--pages", type=int, default=50, help="pages per host")
    sim.add_argument("--port", type=int, default=8300, help="port on 127.0.0.1")
    sim.add_argument("--links", type=int, default=8, help="links per page")
    sim.add_argument("--seed", type=int, default=0, help="seed of the link graph")
    sim.add_argument("--suffix", default="sim", help="host names are site<N>.<suffix>")
    sim.add_argument("--page-kb", type=int, default=0, help="pad pages with text to this size")
    sim.add_argument("--tls-cert", type=Path, default=None, help="serve HTTPS with this PEM")
    sim.add_argument("--tls-key", type=Path, default=None, help="private key of --tls-cert")
    sim.add_argument(
        "--pages-mix",
        choices=["fixed", "real"],
        default="fixed",
        help="fixed: every page --page-kb and --links; real: sizes drawn from a long-tailed "
        "mix (median 138 KB, mean 242 KB), links growing with size",
    )
    sim.add_argument(
        "--idle-timeout",
        type=float,
        default=0.0,
        help="close connections idle this many seconds (0: aiohttp's default, an hour)",
    )
    sim.add_argument(
        "--no-resumption",
        action="store_true",
        help="with --tls-cert: refuse TLS session resumption (every handshake a full one)",
    )
    sim.add_argument(
        "--features",
        default="",
        help="comma-separated host features, e.g. sitemaps,near-dups (sitemaps: robots.txt "
        "names a sitemap index and the home page a feed; see headway.testing.graph.Feature)",
    )
    sim.add_argument(
        "--validators",
        action="store_true",
        help="pages carry ETag and Last-Modified and answer 304 to conditional GETs",
    )
    sim.add_argument(
        "--change-every",
        type=int,
        default=0,
        help="with --validators: /p/i with i %% N == 0 change (0: no page changes)",
    )
    sim.add_argument(
        "--change-period",
        type=float,
        default=0.0,
        help="with --change-every: seconds between content versions of a changing page",
    )
    bench = add_parser(
        "bench",
        help="crawl the simulated web and print speed figures",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
        description="Crawl the simulated web once per case (scheme x gap x size) and print "
        "the CPU per page of the crawler's whole process tree.",
    )
    bench.add_argument("--hosts", type=int, default=50, help="hosts at size 1x")
    bench.add_argument("--pages", type=int, default=40, help="pages per host")
    bench.add_argument("--links", type=int, default=280, help="links per page")
    bench.add_argument("--page-kb", type=int, default=64, help="KiB of text on a page")
    bench.add_argument("--parsers", type=int, default=0, help="0: the crawler's default")
    bench.add_argument(
        "--gaps",
        type=float,
        nargs="+",
        default=[0.0, 1.0],
        help="politeness gaps in seconds (0: none, 8 per host); one case each",
    )
    bench.add_argument(
        "--scheme", nargs="+", choices=["http", "https"], default=["http"], help="one case each"
    )
    bench.add_argument("--size", nargs="+", default=["1x"], help="hosts multipliers: 1x 10x")
    bench.add_argument("--seconds", type=float, default=20.0, help="each run stops after this")
    bench.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="run every case this many times, in rounds (each round runs every case once); "
        "the ratios are then the median of the rounds, each round's figure listed",
    )
    bench.add_argument(
        "--pages-mix",
        choices=["fixed", "real"],
        default="fixed",
        help="fixed: every page --page-kb and --links; real: sizes drawn from a long-tailed "
        "mix (median 138 KB, mean 242 KB; pages over max_body cut), links growing with size",
    )
    bench.add_argument(
        "--server-idle",
        type=float,
        default=0.0,
        help="the server closes connections idle this many seconds (below the gap: a new "
        "connection per fetch); 0: aiohttp's default, an hour",
    )
    bench.add_argument(
        "--tls-resumption",
        nargs="+",
        choices=["on", "off"],
        default=["on"],
        help="over https: the server accepts (on) or refuses (off) TLS session "
        "resumption; one case each",
    )
    bench.add_argument(
        "--http-client",
        nargs="+",
        choices=["aiohttp", "curl"],
        default=["aiohttp"],
        help="the crawler's HTTP client (curl needs the curl extra); one case each, and "
        "the ratio aiohttp / curl",
    )
    bench.add_argument(
        "--text",
        nargs="+",
        choices=["off", "main", "all", "accurate"],
        default=["off"],
        help="the text output (--text, in this mode; docs/outputs.md); one case each",
    )
    bench.add_argument(
        "--before-src",
        default=None,
        help="source tree (its src/ folder) of an earlier headway: each case runs first "
        "with it, then with this one, on the same server (before/after figures)",
    )
    return parser


def bench_child_parser() -> argparse.ArgumentParser:
    """The internal ``headway bench-crawl CONFIG`` (the crawl process ``headway bench``
    measures): read by ``main`` before the public parser, so no listing or choice names it."""
    parser = argparse.ArgumentParser(prog=f"headway {BENCH_CHILD}", allow_abbrev=False)
    parser.add_argument("config", help="the case, as JSON")
    return parser


def unknown_flag_hint(parser: argparse.ArgumentParser, extras: list[str]) -> str:
    """The message for arguments ``parser`` did not take: them, and the nearest flag of
    that command for the first unknown flag (a typo, most often)."""
    import difflib

    message = f"unrecognized arguments: {' '.join(extras)}"
    flags = [opt for action in parser._actions for opt in action.option_strings]
    first = next((e.split("=", 1)[0] for e in extras if e.startswith("--")), None)
    close = difflib.get_close_matches(first, flags, n=1, cutoff=0.75) if first else []
    if close:
        message += f" (did you mean {close[0]}?)"
    return message
