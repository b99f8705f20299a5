"""A plain aiohttp client that reaches the simulated web's host names on loopback."""

from __future__ import annotations

import socket
from typing import Any

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult

TIMEOUT = aiohttp.ClientTimeout(total=10)


class LoopbackResolver(AbstractResolver):
    """Resolves every name to 127.0.0.1, as the crawler's resolver override does."""

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        return [
            ResolveResult(
                hostname=host,
                host="127.0.0.1",
                port=port,
                family=socket.AF_INET,
                proto=0,
                flags=socket.AI_NUMERICHOST,
            )
        ]

    async def close(self) -> None:
        return None


def session(**kwargs: Any) -> aiohttp.ClientSession:
    """A client session whose every host name resolves to 127.0.0.1."""
    connector = aiohttp.TCPConnector(resolver=LoopbackResolver())
    return aiohttp.ClientSession(connector=connector, timeout=TIMEOUT, **kwargs)
