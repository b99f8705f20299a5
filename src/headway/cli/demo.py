"""``headway demo``: a first crawl without the internet. The simulated web
(``testing/simweb.py``) is started on a free loopback port, crawled into a new crawl
directory through the resolver override (``*.sim`` names to 127.0.0.1), and stopped;
the command then says where the output is and what to look at."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from headway.cli.stopping import EXIT_INTERRUPTED, StopSignals
from headway.runtime.crawldir import CrawlPaths
from headway.settings import Settings, build_settings

#: How a node is run and its summary returned (``commands._run_node``: settings, seeds,
#: opt-out list, the stop signals' rule), handed in by the command line.
RunNode = Callable[[Settings, list[str], Any, StopSignals], Awaitable[Any]]
#: The demo crawler's User-Agent: only the local simulated web ever sees it.
DEMO_USER_AGENT = "headway-demo/1.0 (+https://example.org/bot)"
#: The demo crawl stops after this many seconds whatever happens.
DEMO_MAX_SECONDS = 120.0


def add_demo_parser(add_parser: Any) -> None:
    """The ``demo`` subcommand's arguments (``add_parser``: the subparsers' factory)."""
    demo = add_parser(
        "demo",
        help="crawl a simulated web on this machine (no internet) and show the output",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
        description="Start the simulated web on 127.0.0.1 (hosts site0.sim, site1.sim, ...), "
        "crawl it into a new crawl directory, stop it, and say where the output is and what "
        "to look at.",
    )
    demo.add_argument("--out", "-o", type=Path, default=Path("headway-demo"), help="crawl dir")
    demo.add_argument("--hosts", type=int, default=5, help="simulated hosts (1..50)")
    demo.add_argument("--pages", type=int, default=20, help="pages per host (1..500)")
    demo.add_argument(
        "--delay", type=float, default=0.25, help="seconds between two requests to one host"
    )


def demo_problem(args: argparse.Namespace) -> str:
    """What is wrong with the demo's arguments ('' when nothing is)."""
    if not 1 <= args.hosts <= 50 or not 1 <= args.pages <= 500:
        return f"--hosts must be 1..50 and --pages 1..500; got {args.hosts} and {args.pages}"
    if not 0 <= args.delay <= 10:
        return f"--delay must be from 0 to 10 seconds; got {args.delay:g}"
    out: Path = args.out
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        return (
            f"{out} already exists: the demo makes a new crawl directory; give another "
            "--out, or delete it"
        )
    return ""


def demo_settings(out: Path, delay: float) -> Settings:
    return build_settings(
        {
            "user_agent": DEMO_USER_AGENT,
            "out": out,
            "resolve": ("*.sim=127.0.0.1",),
            "allow_loopback": True,
            "delay": delay,
            "max_duration": DEMO_MAX_SECONDS,
            "scope": "seed-hosts",
        }
    )


async def _crawl_simweb(
    args: argparse.Namespace, run_node: RunNode, stop: StopSignals
) -> tuple[Any, Settings, list[str]]:
    from headway.testing.simweb import HostSpec, SimWeb, SimWebSpec

    spec = SimWebSpec(hosts=args.hosts, host_spec=HostSpec(pages=args.pages))
    async with SimWeb(spec, log_limit=0) as web:
        settings = demo_settings(args.out, args.delay)
        print(
            f"headway demo: a simulated web of {args.hosts} hosts ({web.hosts[0]} ...) "
            f"serves on 127.0.0.1:{web.port}; crawling it into {args.out}/ "
            f"(--delay {args.delay:g}, Ctrl-C stops)",
            flush=True,
        )
        summary = await run_node(settings, web.seeds(), None, stop)
        return summary, settings, web.seeds()


def demo_command(
    args: argparse.Namespace, *, run_node: RunNode, setup_logging: Callable[..., None]
) -> int:
    """``headway demo``: 0 after a crawl, 130 when interrupted, 2 and one line on
    stderr for bad arguments."""
    problem = demo_problem(args)
    if problem:
        print(f"headway: error: {problem}", file=sys.stderr)
        return 2
    from headway.cli.progress import print_summary
    from headway.runtime.summary import StopReason

    setup_logging("text", quiet=False)
    stop = StopSignals()
    with stop.held():  # a stop signal is a clean stop until the summary is out
        summary, settings, seeds = asyncio.run(_crawl_simweb(args, run_node, stop))
        print_summary(summary, settings, quiet=False)
    for line in what_to_look_at(args.out, summary.fetches, len(seeds)):
        print(line)
    return EXIT_INTERRUPTED if summary.stopped_by is StopReason.INTERRUPTED else 0


def what_to_look_at(out: Path, pages: int, hosts: int) -> list[str]:
    """The lines that end the demo: where the output is and how to read it."""
    paths = CrawlPaths(out)
    return [
        "",
        f"The demo fetched {pages} pages from {hosts} simulated hosts; the simulated web "
        "is stopped. The crawl directory:",
        f"  {paths.warc_dir}/   the pages as WARC/1.1 files "
        f"(zcat {paths.warc_dir}/*.warc.gz | less)",
        f"  {paths.cdxj}   one index line per stored page (URL, time, offset in the WARC)",
        f"  {paths.crawl_log}   one JSON line per URL: status, outcome, where it was found",
        f"  {paths.metrics}   the crawl's statistics every 10 s (docs/metrics.md)",
        f"  {paths.frontier}   the frontier: what was queued, done and failed",
        f"Look at it with: headway status {out}",
        "Crawl real sites with: headway crawl examples/seeds.txt --out mycrawl "
        '--user-agent "mybot/1.0 (+https://example.org/bot)"',
    ]
