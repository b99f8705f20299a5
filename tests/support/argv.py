"""The command line of one headway run against the simulated web on loopback, for the
tests and benchmarks that run crawls and nodes as processes of their own."""

from __future__ import annotations

import sys
from pathlib import Path

__all__ = ["headway_argv"]


def headway_argv(
    out: Path,
    *extra: str,
    user_agent: str,
    seeds: Path | None = None,
    store: str = "",
    crawl_id: str = "",
    resolve: tuple[str, ...] = ("*.sim=127.0.0.1",),
) -> list[str]:
    """``headway crawl SEEDS`` (``seeds`` given) or ``headway node`` (a node of the shared
    crawl ``crawl_id`` in ``store``), writing into ``out``, quiet, with one parser
    process, the ``resolve`` overrides and loopback allowed; ``extra`` flags last (they
    win over the defaults here)."""
    head = ["crawl", str(seeds)] if seeds is not None else ["node"]
    argv = [sys.executable, "-m", "headway.cli", *head, "--out", str(out)]
    if store:
        argv += ["--store", store, "--crawl-id", crawl_id]
    argv += ["--user-agent", user_agent]
    for rule in resolve:
        argv += ["--resolve", rule]
    return [*argv, "--allow-loopback", "--quiet", "--parsers", "1", *extra]
