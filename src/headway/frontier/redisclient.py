"""Whether this environment's redis-py can serve the shared Redis backend, answered from
the installed package's metadata without importing it: an old client beside headway
(pywb pins redis 2.10) must be one line naming the version needed, never an import
traceback, and an embedded crawl never touches it."""

from __future__ import annotations

from importlib import metadata

from headway.errors import StoreError

#: The redis-py releases the backend is written for (``pyproject.toml`` holds the same).
SUPPORTED = (5, 9)
NEEDED = f"redis-py >= {SUPPORTED[0]}, < {SUPPORTED[1]}"


def client_problem(installed: str | None) -> str | None:
    """Why redis-py ``installed`` (its version, or None when absent) cannot serve the
    backend; None when it can."""
    fix = (
        f"install it in headway's virtualenv (pip install 'redis>={SUPPORTED[0]},<{SUPPORTED[1]}');"
        " pywb, which pins redis 2.10, goes in a virtualenv of its own"
    )
    if installed is None:
        return f"the Redis store needs {NEEDED} and none is installed: {fix}"
    head = installed.split(".", 1)[0]
    major = int(head) if head.isdigit() else -1
    if not SUPPORTED[0] <= major < SUPPORTED[1]:
        return f"the Redis store needs {NEEDED}, this environment has redis {installed}: {fix}"
    return None


def require_client() -> None:
    """``StoreError`` (one line, naming the version needed) unless the installed redis-py
    can serve the backend."""
    try:
        installed: str | None = metadata.version("redis")
    except metadata.PackageNotFoundError:
        installed = None
    problem = client_problem(installed)
    if problem is not None:
        raise StoreError(problem)
