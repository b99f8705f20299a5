"""What headway's fetch stage alone spends per fetch over HTTP and HTTPS, with connections
kept alive and with a new connection per fetch, on the real page mix.

Run: ``.venv/bin/python benchmarks/bench_fetch_tls.py [--profile] [--page-kb N]``
(``--page-kb N``: every page N KiB of text instead of the real mix). A ``headway simweb
--pages-mix real`` process (not counted) serves 20 hosts x 20 pages; one ``Fetcher``
(``headway.fetch.client``: the crawler's client, TLS verification on, sessions resumed)
fetches every page, 20 hosts at once, one request per host at a time with a 0.3 s pause
between a host's requests (so a server closing idle connections after ``--idle`` seconds
makes every fetch a new connection). Printed: this process's CPU ms per fetch, and the
client's count of full and resumed TLS handshakes. For each scheme: connections kept
alive, then a new connection per fetch. ``--profile`` adds a ``cProfile`` of the HTTPS
run with a new connection per fetch (the functions that cost most, by own time).

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
HOSTS, PAGES = 20, 20


async def _fetch_all(
    scheme: str, port: int, ca_file: Path, profile: bool
) -> tuple[float, int, int]:
    from headway.fetch.client import FetchConfig, Fetcher

    config = FetchConfig(
        user_agent="headway-bench/0.1",
        allow_loopback=True,
        resolve={"*.sim.test": "127.0.0.1"},
        ca_file=ca_file,
    )
    async with Fetcher(config) as fetcher:
        urls = [
            [f"{scheme}://site{h}.sim.test:{port}/p/{i}" for i in range(PAGES)]
            for h in range(HOSTS)
        ]

        failed: list[str] = []

        async def host(own: list[str]) -> None:
            for url in own:
                result = await fetcher.fetch(url)
                if result.status != 200:
                    # a connection the server closed just as it was reused (a loaded
                    # machine can delay the close past the pause): counted, not retried
                    failed.append(f"{url}: {result.outcome} {result.error}")
                await asyncio.sleep(0.3)

        await asyncio.gather(*(host(own[:3]) for own in urls))  # warms the server
        tls = fetcher._tls
        full0, resumed0 = tls.full_handshakes, tls.resumed_handshakes
        prof = cProfile.Profile() if profile else None
        cpu0 = time.process_time()
        if prof is not None:
            prof.enable()
        await asyncio.gather(*(host(own) for own in urls))
        if prof is not None:
            prof.disable()
        spent = time.process_time() - cpu0
        if prof is not None:
            pstats.Stats(prof).sort_stats("tottime").print_stats(12)
        full, resumed = tls.full_handshakes - full0, tls.resumed_handshakes - resumed0
        if len(failed) > HOSTS * PAGES // 20:
            raise RuntimeError(f"{len(failed)} fetches failed, e.g. {failed[0]}")
        return spent / (HOSTS * PAGES) * 1000, full, resumed


def fetch_cost(scheme: str, idle: float, pki_dir: Path, profile: bool, page_kb: int) -> str:
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
        ms, full, resumed = uvloop.run(_fetch_all(scheme, port, pki.ca_file, profile))
    finally:
        server.terminate()
        server.wait(10)
    conns = "kept alive" if not idle else f"server idle {idle:g} s: new connection per fetch"
    tls = f"; TLS handshakes {full} full, {resumed} resumed" if scheme == "https" else ""
    return f"{scheme:<6} {conns:<45} {ms:6.3f} ms a fetch{tls}"


def session_costs(pki_dir: Path, n: int = 300) -> list[str]:
    sys.path.insert(0, str(HERE))
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
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for line in session_costs(Path(tmp) / "s"):
            print(line, flush=True)
        for scheme in ("http", "https"):
            for idle in (0.0, args.idle):
                profile = args.profile and scheme == "https" and idle > 0
                pki = Path(tmp) / f"{scheme}{idle}"
                print(fetch_cost(scheme, idle, pki, profile, args.page_kb), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
