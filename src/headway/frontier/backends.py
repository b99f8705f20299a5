"""Which frontier backend a crawl uses: the ``store`` setting names it, this module finds
it. Contract:

- ``""`` (the default) is the embedded SQLite file in the crawl directory.
- ``redis://``, ``rediss://`` and ``redis+cluster://`` name the shared Redis backend; it
  is looked up lazily (``BACKEND_MODULES``), so an installation without it gives a clear
  "not available" error naming the setting, never an import traceback.
- A backend module exposes ``BACKEND``, an object with ``open`` and ``read_counts`` (the
  ``FrontierBackend`` protocol). ``open`` builds the store for one node; ``read_counts``
  reads the totals without disturbing a running crawl (``headway status``).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from headway.errors import ConfigError
from headway.frontier.store import FrontierCounts, FrontierLimits, FrontierStore
from headway.settings import Settings

#: Scheme of the ``store`` setting -> module that provides its ``BACKEND``.
BACKEND_MODULES: dict[str, str] = {
    "sqlite": "headway.frontier.sqlite",
    "redis": "headway.frontier.redis",
    "rediss": "headway.frontier.redis",
    "redis+cluster": "headway.frontier.redis",
}


@dataclass(frozen=True, slots=True)
class StoreTarget:
    """Where one node's frontier lives: the ``store`` setting, the node's crawl directory
    (its own files; for SQLite also the frontier), its node id and all settings (each
    backend reads its own keys)."""

    store: str
    crawl_dir: Path
    node_id: str
    settings: Settings


class FrontierBackend(Protocol):
    def open(self, target: StoreTarget) -> FrontierStore:
        """The frontier of ``target`` for its node (created when new)."""
        ...

    def read_counts(self, target: StoreTarget) -> FrontierCounts | None:
        """The frontier's totals read without disturbing a running crawl; None when the
        crawl has no frontier yet."""
        ...


def limits_from_settings(settings: Settings) -> FrontierLimits:
    """The frontier's caps from the frontier section of the settings."""
    f = settings.frontier
    return FrontierLimits(
        host_budget=f.host_budget, max_queued=f.max_queued, bloom_capacity=f.bloom_capacity
    )


def store_scheme(store: str) -> str:
    """The backend scheme of a ``store`` value; ConfigError when it names none."""
    if not store:
        return "sqlite"
    scheme, sep, _ = store.partition("://")
    scheme = scheme.lower()
    if not sep or scheme not in BACKEND_MODULES:
        known = ", ".join(f"{s}://" for s in BACKEND_MODULES if s != "sqlite")
        raise ConfigError(
            "frontier.store",
            f"expected nothing (the embedded SQLite store) or a URL starting with {known}",
        )
    return scheme


def backend_for(store: str) -> FrontierBackend:
    """The backend that serves ``store``; ConfigError when it is not available here."""
    scheme = store_scheme(store)
    name = BACKEND_MODULES[scheme]
    try:
        module = importlib.import_module(name)
        backend: FrontierBackend = module.BACKEND
    except (ImportError, AttributeError) as exc:
        raise ConfigError(
            "frontier.store",
            f"{scheme}:// stores are not available in this installation ({exc})",
        ) from None
    return backend
