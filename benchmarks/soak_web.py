"""The soak's simulated web, in a process of its own: ``shaped_web(hosts, pages, seed)``
served on 127.0.0.1:PORT, its hosts' pushback windows applied on the run's clock, and
every request appended to a JSON-lines log once a second (``a`` arrival and ``e`` end on
the machine's monotonic clock, ``h`` host, ``p`` path with query, ``s`` status, ``u``
User-Agent, ``m`` whether the arrival was measured from kernel timestamps).

Usage (started by ``soak.py``): ``python benchmarks/soak_web.py --hosts N --pages N
--seed N --port P --log FILE --t0 MONOTONIC --seconds RUN``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import signal
import time
from pathlib import Path
from typing import TextIO

import checkout_path  # noqa: F401  (the checkout's src when run from a clone)

from headway.testing.simweb import SimWeb
from headway.testing.webshape import ShapedWeb, shaped_web


def _write(web: SimWeb, f: TextIO) -> None:
    batch, web.log = web.log, []
    for r in batch:
        row = {
            "a": round(r.arrival, 4),
            "e": round(r.end, 4),
            "h": r.host,
            "p": r.path,
            "s": r.status,
            "u": r.user_agent,
            "m": r.late is not None,
        }
        f.write(json.dumps(row, separators=(",", ":")) + "\n")
    f.flush()


async def _flush(web: SimWeb, out: Path) -> None:
    with out.open("a", buffering=1 << 20) as f:
        try:
            while True:
                await asyncio.sleep(1.0)
                _write(web, f)
        finally:
            _write(web, f)


async def _pushback(web: SimWeb, shape: ShapedWeb, t0: float, seconds: float) -> None:
    on: set[int] = set()
    while True:
        share = (time.monotonic() - t0) / seconds
        for p in shape.pushback:
            name = shape.web.host_name(p.host)
            if p.start <= share < p.end and p.host not in on:
                web.set_pushback(name, status=p.status, retry_after=p.retry_after)
                on.add(p.host)
            elif not p.start <= share < p.end and p.host in on:
                web.clear_pushback(name)
                on.discard(p.host)
        await asyncio.sleep(0.5)


async def main(args: argparse.Namespace) -> None:
    shape = shaped_web(args.hosts, args.pages, args.seed)
    web = SimWeb(shape.web, log_limit=10_000_000)
    await web.start("127.0.0.1", args.port)
    tasks = [
        asyncio.create_task(_flush(web, args.log)),
        asyncio.create_task(_pushback(web, shape, args.t0, args.seconds)),
    ]
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, lambda: [t.cancel() for t in tasks])
    try:
        await asyncio.gather(*tasks, return_exceptions=True)
    finally:
        await web.stop()


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--hosts", type=int, required=True)
    ap.add_argument("--pages", type=int, required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--log", type=Path, required=True)
    ap.add_argument("--t0", type=float, required=True)
    ap.add_argument("--seconds", type=float, required=True)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(main(ap.parse_args()))
