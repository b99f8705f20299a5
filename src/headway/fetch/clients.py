"""The fetch stage's HTTP clients, by the name ``fetch.http_client`` gives them:
``"aiohttp"`` (``Fetcher``, the default) and ``"curl"`` (``CurlFetcher``: libcurl through
pycurl, installed with the ``curl`` extra; ``docs/architecture.md``, Fetch)."""

from __future__ import annotations

from headway.errors import ConfigError
from headway.fetch.client import FetchConfig, Fetcher

__all__ = ["CLIENTS", "fetcher_class", "open_fetcher"]

CLIENTS = ("aiohttp", "curl")


def fetcher_class(name: str) -> type[Fetcher]:
    """The client called ``name``; an unknown name is a ``ConfigError`` naming
    ``fetch.http_client``."""
    if name == "curl":
        from headway.fetch.curl import CurlFetcher

        return CurlFetcher
    if name != "aiohttp":
        raise ConfigError("fetch.http_client", f"unknown client {name!r} (one of {CLIENTS})")
    return Fetcher


def open_fetcher(config: FetchConfig) -> Fetcher:
    """The client ``config.client`` names, made for ``config`` (use it as ``async with``).
    A client that cannot be had (libcurl without pycurl) is a ``ConfigError`` naming
    ``fetch.http_client``."""
    return fetcher_class(config.client)(config)
