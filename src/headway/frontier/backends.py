"""Which frontier backend a crawl uses: the ``store`` setting names it, this module finds
it. Contract:

- ``""`` (the default) is the embedded SQLite file in the crawl directory.
- ``redis://``, ``rediss://`` and ``redis+cluster://`` name the shared Redis backend; it
  is looked up lazily (``BACKEND_MODULES``), so an installation without it gives a clear
  "not available" error naming the setting, never an import traceback.
- A backend module exposes ``BACKEND``, an object with ``check``, ``open``,
  ``read_counts`` and ``shown`` (the ``FrontierBackend`` protocol). ``check`` refuses a malformed
  ``store`` value (settings validation); ``open`` builds the store for one node;
  ``read_counts`` reads the totals without disturbing a running crawl (``headway status``);
  ``shown`` is the ``store`` value with its password masked (a crawl directory's record).
- A backend receives only its own options (``StoreTarget``: the frontier's caps, the
  SQLite page cache, a shared crawl's options), never the whole settings tree; the
  runtime maps the settings onto them (``headway.runtime.components.store_target``).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from headway.errors import ConfigError, StoreError
from headway.frontier.store import FrontierCounts, FrontierLimits, FrontierStore

#: Scheme of the ``store`` setting -> module that provides its ``BACKEND``.
BACKEND_MODULES: dict[str, str] = {
    "sqlite": "headway.frontier.sqlite",
    "redis": "headway.frontier.redis",
    "rediss": "headway.frontier.redis",
    "redis+cluster": "headway.frontier.redis",
}


@dataclass(frozen=True, slots=True)
class SharedOptions:
    """What a shared backend needs besides the frontier's caps: the crawl's name, its
    shards (fixed when the crawl is created), how long a dead node keeps them, the gap a
    host waits when its shard changes hands, and how long an unreachable store is
    waited for."""

    crawl_id: str | None = None
    shards: int = 64
    shard_ttl: float = 10.0
    handover_gap: float = 1.0
    outage_limit: float = 600.0


@dataclass(frozen=True, slots=True)
class StoreTarget:
    """Where one node's frontier lives and what it is built with: the ``store`` setting,
    the node's crawl directory (its own files; for SQLite also the frontier), its node
    id, the frontier's caps, the SQLite page cache and a shared crawl's options (each
    backend reads its own)."""

    store: str
    crawl_dir: Path
    node_id: str
    limits: FrontierLimits = field(default_factory=FrontierLimits)
    cache_mib: int = 16
    shared: SharedOptions = field(default_factory=SharedOptions)


class FrontierBackend(Protocol):
    def check(self, store: str) -> None:
        """``ConfigError`` naming ``frontier.store`` when ``store`` is malformed."""
        ...

    def open(self, target: StoreTarget) -> FrontierStore:
        """The frontier of ``target`` for its node (created when new)."""
        ...

    def read_counts(self, target: StoreTarget) -> FrontierCounts | None:
        """The frontier's totals read without disturbing a running crawl; None when the
        crawl has no frontier yet."""
        ...

    def shown(self, store: str) -> str:
        """``store`` as written to files and messages: its password masked."""
        ...


def store_scheme(store: str) -> str:
    """The backend scheme of a ``store`` value; ConfigError when it names none."""
    if not store:
        return "sqlite"
    scheme, sep, _ = store.partition("://")
    scheme = scheme.lower()
    if not sep or scheme not in BACKEND_MODULES or scheme == "sqlite":
        *some, last = [f"{s}://" for s in BACKEND_MODULES if s != "sqlite"]
        known = f"{', '.join(some)} or {last}"
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
    except StoreError as exc:  # the backend's own word on what this installation lacks
        raise ConfigError("frontier.store", str(exc)) from None
    except (ImportError, AttributeError) as exc:
        raise ConfigError(
            "frontier.store",
            f"{scheme}:// stores are not available in this installation ({exc})",
        ) from None
    return backend


def check_store(store: str) -> None:
    """``ConfigError`` naming ``frontier.store`` unless ``store`` names a backend of this
    installation in a form it accepts."""
    backend_for(store).check(store)
