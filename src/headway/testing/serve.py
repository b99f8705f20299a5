"""``headway simweb``: the simulated web served on loopback for trying headway by hand
(the tests start theirs in-process)."""

from __future__ import annotations

import argparse
import asyncio
import logging
import re
import sys
import time

from headway.testing.simweb import HostSpec, SimWebSpec, serve


def simweb_command(args: argparse.Namespace) -> int:
    """``headway simweb``: serve the simulated web on loopback until Ctrl-C (one line
    names the hosts and the crawl settings once it listens); 2 and one line on stderr
    for bad arguments, a port in use or an unusable certificate."""

    logging.basicConfig(level=logging.INFO, format="%(message)s")
    problem = _simweb_problem(args)
    if problem:
        print(f"headway: error: {problem}", file=sys.stderr)
        return 2
    spec = SimWebSpec(
        hosts=args.hosts,
        host_spec=HostSpec(
            pages=args.pages,
            links_per_page=args.links,
            page_bytes=args.page_kb * 1024,
            features=_simweb_features(args.features),
            validators=args.validators,
            change_every=args.change_every,
            change_period=args.change_period,
            page_mix=args.pages_mix,
        ),
        seed=args.seed,
        suffix=args.suffix,
    )
    ctx = None
    t0 = time.monotonic()
    try:
        if args.tls_cert is not None:
            from headway.testing.tls import server_context

            ctx = server_context(
                args.tls_cert, args.tls_key or args.tls_cert, resumption=not args.no_resumption
            )
        idle = args.idle_timeout or None
        asyncio.run(serve(spec, "127.0.0.1", args.port, ctx, idle))
    except KeyboardInterrupt:
        print(f"stopped after {time.monotonic() - t0:.0f}s")
    except OSError as exc:  # the port in use, a missing or bad certificate (SSLError)
        tls = f" with --tls-cert {args.tls_cert}" if args.tls_cert is not None else ""
        print(
            f"headway: error: simweb cannot serve on 127.0.0.1:{args.port}{tls}: {exc}",
            file=sys.stderr,
        )
        return 2
    return 0


def _simweb_problem(args: argparse.Namespace) -> str:
    """What is wrong with ``headway simweb``'s arguments ('' when nothing is)."""
    if not 1 <= args.hosts <= 100_000 or not 1 <= args.pages <= 1_000_000:
        return "--hosts must be 1..100000 and --pages 1..1000000"
    if not 1 <= args.links <= 10_000:
        return f"--links must be 1..10000; got {args.links}"
    if not 0 <= args.port <= 65_535:
        return f"--port must be 0..65535; got {args.port}"
    if not 0 <= args.page_kb <= 65_536:
        return f"--page-kb must be 0..65536; got {args.page_kb}"
    if not re.fullmatch(r"[a-z0-9-]+(\.[a-z0-9-]+)*", args.suffix):
        return f"--suffix must be a DNS name (letters, digits, '-', '.'); got {args.suffix!r}"
    from headway.testing.graph import FEATURES

    unknown = sorted(_simweb_features(args.features) - FEATURES)
    if unknown:
        return f"--features: unknown {', '.join(unknown)}; known: {', '.join(sorted(FEATURES))}"
    if not 0 <= args.idle_timeout <= 86_400:
        return f"--idle-timeout must be 0..86400 seconds; got {args.idle_timeout}"
    if args.no_resumption and args.tls_cert is None:
        return "--no-resumption needs --tls-cert (it is about TLS sessions)"
    if args.change_every < 0 or not 0 <= args.change_period <= 1e9:
        return "--change-every must be >= 0 and --change-period 0..1e9 seconds"
    if (args.change_every > 0) != (args.change_period > 0) or (
        args.change_every > 0 and not args.validators
    ):
        return "--change-every and --change-period go together, with --validators"
    return ""


def _simweb_features(text: str) -> frozenset[str]:
    return frozenset(f.strip() for f in text.split(",") if f.strip())
