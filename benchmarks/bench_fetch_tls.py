"""What headway's fetch stage alone spends per fetch over HTTP and HTTPS, with connections
kept alive and with a new connection per fetch, on the real page mix; and what other
clients spend on the same fetches.

Run: ``.venv/bin/python benchmarks/bench_fetch_tls.py [--profile] [--page-kb N]
[--clients aiohttp curl] [--schemes http https]``
(``--page-kb N``: every page N KiB of text instead of the real mix). A ``headway simweb
--pages-mix real`` process (not counted) serves 20 hosts x 20 pages; a client fetches
every page, 20 hosts at once, one request per host at a time with a 0.3 s pause between a
host's requests (so a server closing idle connections after ``--idle`` seconds makes
every fetch a new connection). Printed: this process's CPU ms per fetch, and the
server's count of connections and of full and resumed TLS handshakes. For each scheme:
connections kept alive, then a new connection per fetch; within each, the clients one
after the other (compare within a run). ``--profile`` adds a ``cProfile`` of the HTTPS
runs with a new connection per fetch (the functions that cost most, by own time).

The clients are the crawler's own, by the names ``--http-client`` gives them:
``aiohttp`` (``headway.fetch.client``: TLS verification on, sessions resumed; the
default) and ``curl`` (``headway.fetch.curl``, which needs the ``curl`` extra). The
prototype clients once measured here beside them are in git history
(``docs/performance.md``, *A leaner fetch path*).

Also, by the ``ssl`` module alone: the cost of taking a connection's session
(``SSLObject.session``) and of offering one to a new connection (``wrap_bio(...,
session=...)``), what session resumption adds per connection on top of the handshake.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import pstats
import ssl
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
HOSTS, PAGES = 20, 20
USER_AGENT = "headway-bench/0.1"
MAX_BODY = 256 * 1024  # the crawler's default --max-body
CLIENTS = ("aiohttp", "curl")


class _HeadwayClient:
    """One of the crawler's own clients (``headway.fetch.clients``)."""

    def __init__(self, ca_file: Path, name: str) -> None:
        from headway.fetch.client import FetchConfig
        from headway.fetch.clients import open_fetcher

        config = FetchConfig(
            user_agent=USER_AGENT,
            allow_loopback=True,
            resolve={"*.sim.test": "127.0.0.1"},
            ca_file=ca_file,
            client=name,
        )
        self._fetcher = open_fetcher(config)

    async def start(self) -> _HeadwayClient:
        await self._fetcher.__aenter__()
        return self

    async def fetch(self, url: str) -> tuple[int, int]:
        result = await self._fetcher.fetch(url)
        if result.status is None:
            raise OSError(f"{result.outcome}: {result.error}")
        return result.status, len(result.body)

    async def close(self) -> None:
        await self._fetcher.__aexit__(None, None, None)


async def _client(name: str, ca_file: Path) -> _HeadwayClient:
    return await _HeadwayClient(ca_file, name).start()


def server_counts(scheme: str, port: int, ca_file: Path) -> tuple[int, int, int]:
    """The server's connections, resumed and full TLS handshakes so far."""
    from headway.bench.harness import server_counts as read

    return read(scheme, port, ssl.create_default_context(cafile=str(ca_file)))


async def _fetch_all(
    name: str, scheme: str, port: int, ca_file: Path, profile: bool
) -> tuple[float, int, int, int]:
    client = await _client(name, ca_file)
    try:
        urls = [
            [f"{scheme}://site{h}.sim.test:{port}/p/{i}" for i in range(PAGES)]
            for h in range(HOSTS)
        ]

        failed: list[str] = []

        async def host(own: list[str]) -> None:
            for url in own:
                try:
                    status, _ = await client.fetch(url)
                    why = f"status {status}"
                except (TimeoutError, OSError) as exc:
                    status, why = 0, str(exc)
                if status != 200:
                    # a connection the server closed just as it was reused (a loaded
                    # machine can delay the close past the pause): counted, not retried
                    failed.append(f"{url}: {why}")
                await asyncio.sleep(0.3)

        await asyncio.gather(*(host(own[:3]) for own in urls))  # warms the server
        conns0, resumed0, full0 = await asyncio.to_thread(server_counts, scheme, port, ca_file)
        prof = cProfile.Profile() if profile else None
        cpu0 = time.process_time()
        if prof is not None:
            prof.enable()
        await asyncio.gather(*(host(own) for own in urls))
        if prof is not None:
            prof.disable()
        spent = time.process_time() - cpu0
        conns, resumed, full = await asyncio.to_thread(server_counts, scheme, port, ca_file)
        if prof is not None:
            pstats.Stats(prof).sort_stats("tottime").print_stats(12)
        if len(failed) > HOSTS * PAGES // 20:
            raise RuntimeError(f"{len(failed)} fetches failed, e.g. {failed[0]}")
        # the second reading's own connection is not the client's
        return (
            spent / (HOSTS * PAGES) * 1000, conns - conns0 - 1, full - full0 - (scheme == "https"),
            resumed - resumed0,
        )  # fmt: skip
    finally:
        await client.close()


def fetch_cost(
    name: str, scheme: str, idle: float, pki_dir: Path, profile: bool, page_kb: int
) -> str:
    import uvloop

    from headway.bench.harness import free_port, wait_port
    from headway.testing.tls import make_test_pki

    pki = make_test_pki(pki_dir)
    port = free_port()
    argv = [sys.executable, "-m", "headway.cli", "simweb", "--hosts", str(HOSTS)]
    argv += ["--pages", str(PAGES), "--port", str(port), "--suffix", "sim.test"]
    argv += ["--idle-timeout", str(idle)]
    argv += ["--page-kb", str(page_kb)] if page_kb else ["--pages-mix", "real"]
    if scheme == "https":
        argv += ["--tls-cert", str(pki.cert_file), "--tls-key", str(pki.key_file)]
    server = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_port(port)
        ms, conns, full, resumed = uvloop.run(_fetch_all(name, scheme, port, pki.ca_file, profile))
    finally:
        server.terminate()
        server.wait(10)
    kept = "kept alive" if not idle else f"server idle {idle:g} s"
    tls = f"; TLS handshakes {full} full, {resumed} resumed" if scheme == "https" else ""
    fetches = f"{conns} connections for {HOSTS * PAGES} fetches"
    return f"{name:<9} {scheme:<6} {kept:<18} {ms:6.3f} ms a fetch; {fetches}{tls}"


def session_costs(pki_dir: Path, n: int = 300) -> list[str]:
    from bench_floor import _Pair

    from headway.fetch.tls import client_context
    from headway.testing.tls import make_test_pki, server_context

    pki = make_test_pki(pki_dir)
    client = client_context(pki.ca_file)
    pair = _Pair(client, server_context(pki.cert_file, pki.key_file), None)
    pair.handshake()
    pair.transfer(b"x")
    session = pair.c.session

    def ms(work: object) -> float:
        best = float("inf")
        for _ in range(5):
            cpu0 = time.process_time()
            for _ in range(n):
                work()  # type: ignore[operator]
            best = min(best, (time.process_time() - cpu0) / n * 1000)
        return best

    def wrap(with_session: bool) -> object:
        return lambda: client.wrap_bio(
            ssl.MemoryBIO(), ssl.MemoryBIO(),
            server_hostname="site0.sim.test" if with_session else "other.sim.test",
            session=session if with_session else None,
        )  # fmt: skip

    def take() -> object:
        return pair.c.session

    return [
        f"ssl {ssl.OPENSSL_VERSION}, client context of the fetch stage:",
        f"  SSLObject.session (taking a connection's session)   {ms(take):.3f} ms",
        f"  wrap_bio without a session                          {ms(wrap(False)):.3f} ms",
        f"  wrap_bio offering a session                         {ms(wrap(True)):.3f} ms",
    ]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--idle", type=float, default=0.1, help="server's idle time-out (s)")
    ap.add_argument("--profile", action="store_true", help="cProfile the HTTPS run")
    ap.add_argument("--page-kb", type=int, default=0, help="fixed pages of N KiB (0: real)")
    ap.add_argument(
        "--clients", nargs="+", choices=CLIENTS, default=["aiohttp"],
        help="the crawler's clients to measure, each case in turn",
    )  # fmt: skip
    ap.add_argument("--schemes", nargs="+", choices=("http", "https"), default=["http", "https"])
    args = ap.parse_args()
    from headway.errors import ConfigError
    from headway.fetch.clients import check_client

    try:
        for name in args.clients:
            check_client(name)
    except ConfigError as exc:
        print(f"bench_fetch_tls: {exc}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        for line in session_costs(Path(tmp) / "s"):
            print(line, flush=True)
        for scheme in args.schemes:
            for idle in (0.0, args.idle):
                for name in args.clients:  # clients side by side: their ratio is the figure
                    profile = args.profile and scheme == "https" and idle > 0
                    pki = Path(tmp) / f"{name}{scheme}{idle}"
                    line = fetch_cost(name, scheme, idle, pki, profile, args.page_kb)
                    print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
