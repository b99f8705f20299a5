"""``headway console``: ``headway console DIR`` shows a crawl directory (running or
finished), ``headway console --store URL --crawl-id ID`` a shared crawl from any machine.
It prints its address once; on an address other than loopback also the token its
controls need. The console itself (the application, where it reads a crawl from, the
console a crawling node serves) is ``headway.console``."""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from collections.abc import Callable
from pathlib import Path

from headway.cli.sharedflags import add_shared_crawl_flags
from headway.console.app import ConsoleServer
from headway.console.sources import ControlDesk, DirSource, SharedSource, Source
from headway.control import CrawlRef
from headway.threads import ThreadWorker

DEFAULT_PORT = 8787


def add_console_parser(add_parser: Callable[..., argparse.ArgumentParser]) -> None:
    p = add_parser(
        "console",
        help="serve the operator's console for a crawl directory or a shared crawl",
        description="Serve the operator's console (a web page and its JSON API) for a crawl "
        "directory, running or finished, or for a shared crawl (--store, --crawl-id) from any "
        "machine. Controls (pause, resume, stop, seeds, opt-out, host overrides) go to the "
        "crawl's control log.",
    )
    p.add_argument("out", type=Path, nargs="?", default=None, help="crawl directory")
    add_shared_crawl_flags(p)
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help="port (default: 8787)")
    p.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on (default: 127.0.0.1); any other needs the console's token "
        "for controls",
    )


def announce(server: ConsoleServer, print_line: Callable[[str], None]) -> None:
    """The console's address, once; with the token its controls need, when one is."""
    if server.token is None:
        print_line(f"console on {server.url}")
        return
    where = f" (stored in {server.token_file})" if server.token_file else ""
    print_line(
        f"console on {server.url}: controls need its token{where}; open "
        f"{server.url}#token={server.token}"
    )


def console_command(args: argparse.Namespace) -> int:
    if not 0 <= args.port <= 65535:
        print("headway: error: --port must be in 0..65535", file=sys.stderr)
        return 2
    if args.out is None and not (args.store and args.crawl_id):
        print(
            "headway: error: give a crawl directory, or --store and --crawl-id of a shared crawl",
            file=sys.stderr,
        )
        return 2
    if args.out is not None and not (args.out / "headway.json").exists():
        print(f"headway: error: {args.out} is not a headway crawl directory", file=sys.stderr)
        return 2
    try:
        import uvloop

        return uvloop.run(_serve(args))
    except KeyboardInterrupt:
        return 0


async def _serve(args: argparse.Namespace) -> int:
    worker = ThreadWorker("console")
    source: Source
    if args.out is not None:
        source = DirSource(args.out, worker)
        desk = ControlDesk(CrawlRef(directory=args.out) if _embedded(args.out) else None, worker)
    else:
        source = SharedSource(args.store, args.crawl_id, worker)
        desk = ControlDesk(CrawlRef(store=args.store, crawl_id=args.crawl_id), worker)
    server = ConsoleServer(
        source, desk, host=args.host, port=args.port, token_dir=args.out, port_name="--port"
    )
    await server.start()
    server.store_token()
    announce(server, lambda line: print(line, flush=True))
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        await server.stop()
        await worker.call(desk.close)
        if isinstance(source, SharedSource):
            await worker.call(source.close)
        worker.shutdown()
    return 0


def _embedded(directory: Path) -> bool:
    return (directory / "frontier.sqlite3").exists()
