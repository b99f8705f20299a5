"""How many TLS handshakes each HTTP client of the fetch stage resumes when it goes
round more hosts than a session cache may hold.

Run: ``.venv/bin/python benchmarks/bench_tls_resumption.py [--hosts 10 30 60 200]
[--rounds 3] [--clients aiohttp curl]``. A ``headway simweb`` over HTTPS (a test
certificate authority, connections closed after 0.1 s idle, so every fetch opens a new
connection) serves the hosts; each client fetches one page of every host in turn, for
``--rounds`` rounds. Printed from the server's own count: connections, resumed and
full handshakes (the best is one full handshake per host, every later one resumed),
and this process's CPU per fetch. libcurl's needs the ``curl`` extra.
"""

from __future__ import annotations

import argparse
import asyncio
import ssl
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from headway.bench.harness import free_port, server_counts, wait_port
from headway.fetch.client import FetchConfig
from headway.fetch.clients import open_fetcher
from headway.testing.tls import make_test_pki

SUFFIX = "sim.test"


async def _go_round(client: str, hosts: int, rounds: int, port: int, ca: Path) -> None:
    config = FetchConfig(
        user_agent="headway-bench/0.1",
        allow_loopback=True,
        resolve={f"*.{SUFFIX}": "127.0.0.1"},
        ca_file=ca,
        client=client,
    )
    async with open_fetcher(config) as fetcher:
        for n in range(rounds):
            for host in range(hosts):
                result = await fetcher.fetch(f"https://site{host}.{SUFFIX}:{port}/p/{n}")
                if result.status != 200:
                    raise SystemExit(f"{client}: site{host}: {result.outcome} {result.error}")
            await asyncio.sleep(0.3)  # every connection closed by the server meanwhile


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--hosts", type=int, nargs="+", default=[10, 30, 60, 200])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--clients", nargs="+", default=["aiohttp", "curl"])
    args = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="headway-tls-") as tmp:
        pki = make_test_pki(Path(tmp), SUFFIX)
        port = free_port()
        argv = [sys.executable, "-m", "headway.cli", "simweb", "--port", str(port)]
        argv += ["--hosts", str(max(args.hosts)), "--pages", str(args.rounds + 1)]
        argv += ["--suffix", SUFFIX, "--idle-timeout", "0.1"]
        argv += ["--tls-cert", str(pki.cert_file), "--tls-key", str(pki.key_file)]
        server = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        context = ssl.create_default_context(cafile=str(pki.ca_file))
        try:
            wait_port(port)
            for hosts in args.hosts:
                for client in args.clients:
                    conns, resumed, full = server_counts("https", port, context)
                    cpu = time.process_time()
                    asyncio.run(_go_round(client, hosts, args.rounds, port, pki.ca_file))
                    cpu = time.process_time() - cpu
                    after = server_counts("https", port, context)
                    # less the connection of the second reading (a full handshake)
                    print(
                        f"{hosts} hosts, {client}: {after[0] - conns - 1} connections,"
                        f" {after[1] - resumed} resumed, {after[2] - full - 1} full;"
                        f" {cpu * 1000 / (hosts * args.rounds):.2f} CPU ms a fetch",
                        flush=True,
                    )
        finally:
            server.terminate()
            server.wait(10)


if __name__ == "__main__":
    main()
