"""The fetch stage's HTTP clients, by the name ``fetch.http_client`` gives them:
``"aiohttp"`` (``Fetcher``, the default) and ``"curl"`` (``CurlFetcher``: libcurl through
pycurl, installed with the ``curl`` extra; ``docs/architecture.md``, Fetch). Siblings,
not a subclass and its base: each implements ``HttpClient`` around the shared
``FetchCore`` with its own ``Transport``."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable

from headway.errors import ConfigError
from headway.fetch.client import FetchConfig, Fetcher, HttpClient

__all__ = ["CLIENTS", "INSTALL_CURL", "check_client", "fetcher_class", "open_fetcher"]

CLIENTS = ("aiohttp", "curl")
#: How to get libcurl's client.
INSTALL_CURL = (
    "install the curl extra (pip install '.[curl]' in headway's source tree, or "
    "pip install 'pycurl>=7.46,<8' into headway's environment), or leave the client at aiohttp"
)


def check_client(name: str) -> None:
    """A ``ConfigError`` naming ``fetch.http_client`` (--http-client,
    HEADWAY_HTTP_CLIENT) when the client ``name`` cannot be had here; checked with
    the settings, before anything is made."""
    if name not in CLIENTS:
        raise ConfigError("fetch.http_client", f"unknown client {name!r} (one of {CLIENTS})")
    if name == "curl" and importlib.util.find_spec("pycurl") is None:
        raise ConfigError(
            "fetch.http_client",
            f"'curl' (--http-client, HEADWAY_HTTP_CLIENT) needs pycurl, which is not "
            f"installed: {INSTALL_CURL}",
        )


def fetcher_class(name: str) -> Callable[[FetchConfig], HttpClient]:
    """The client called ``name``; an unknown name is a ``ConfigError`` naming
    ``fetch.http_client``."""
    check_client(name)
    if name == "curl":
        from headway.fetch.curl import CurlFetcher

        return CurlFetcher
    return Fetcher


def open_fetcher(config: FetchConfig) -> HttpClient:
    """The client ``config.client`` names, made for ``config`` (use it as ``async with``).
    A client that cannot be had (libcurl without pycurl) is a ``ConfigError`` naming
    ``fetch.http_client``."""
    return fetcher_class(config.client)(config)
