"""Store URLs of the shared Redis backend (the ``store`` setting), parsed and masked
without a Redis client, so that an embedded crawl and the commands reading one never
import redis-py.

Store URL forms (the ``store`` setting):

- ``redis://[[user]:password@]host:port[/db]``: one Redis server (db defaults to 0).
- ``rediss://...``: the same over TLS.
- ``redis+cluster://[[user]:password@]host1:port1,host2:port2,...``: a Redis Cluster,
  reached through any of the listed nodes (``rediss+cluster://`` for TLS). A cluster has
  only db 0.

``mask_store_url`` is the only form of a store URL that may be printed or logged: the
password is replaced by ``***``.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from headway.errors import StoreError

SCHEMES = ("redis", "rediss", "redis+cluster", "rediss+cluster")


@dataclass(frozen=True, slots=True)
class StoreUrl:
    """A parsed ``redis://``, ``rediss://`` or ``redis+cluster://`` store URL."""

    tls: bool
    cluster: bool
    nodes: tuple[tuple[str, int], ...]
    db: int
    username: str | None
    password: str | None

    def masked(self) -> str:
        scheme = ("rediss" if self.tls else "redis") + ("+cluster" if self.cluster else "")
        auth = ""
        if self.username or self.password:
            auth = f"{self.username or ''}{':***' if self.password else ''}@"
        where = ",".join(f"{h}:{p}" for h, p in self.nodes)
        tail = "" if self.cluster else f"/{self.db}"
        return f"{scheme}://{auth}{where}{tail}"


def is_redis_url(text: str) -> bool:
    return text.split("://", 1)[0].lower() in SCHEMES and "://" in text


def parse_store_url(text: str) -> StoreUrl:
    """Parse a store URL; a clear ``StoreError`` (with the password masked) when bad."""
    scheme, sep, rest = text.partition("://")
    scheme = scheme.lower()
    if not sep or scheme not in SCHEMES:
        raise StoreError(f"store URL must start with one of {', '.join(SCHEMES)}://")
    cluster = scheme.endswith("+cluster")
    tls = scheme.startswith("rediss")
    auth, at, hostpart = rest.rpartition("@")
    username = password = None
    if at:
        user, colon, pw = auth.partition(":")
        username = unquote(user) or None
        password = unquote(pw) if colon else None
        if not colon:  # redis://secret@host: the lone part is the password
            username, password = None, unquote(user)
    where, _, path = hostpart.partition("/")
    shown = mask_store_url(text)
    nodes: list[tuple[str, int]] = []
    for part in where.split(","):
        parsed = urlsplit(f"//{part}")
        try:
            port = parsed.port or 6379
        except ValueError:
            raise StoreError(f"bad port in store URL {shown}") from None
        if not parsed.hostname:
            raise StoreError(f"missing host in store URL {shown}")
        nodes.append((parsed.hostname, port))
    if not cluster and len(nodes) != 1:
        raise StoreError(f"{shown}: several hosts need redis+cluster://")
    db = 0
    if path.strip("/"):
        if cluster:
            raise StoreError(f"{shown}: a Redis Cluster has no database number")
        try:
            db = int(path.strip("/"))
        except ValueError:
            raise StoreError(f"{shown}: the path must be a database number") from None
    return StoreUrl(tls, cluster, tuple(nodes), db, username, password)


def mask_store_url(text: str) -> str:
    """``text`` with any password replaced by ``***`` (safe to print and log)."""
    scheme, sep, rest = text.partition("://")
    if not sep:
        return text
    auth, at, hostpart = rest.rpartition("@")
    if not at:
        return text
    user, colon, _ = auth.partition(":")
    shown = f"{user}:***" if colon else "***"
    return f"{scheme}://{shown}@{hostpart}"
