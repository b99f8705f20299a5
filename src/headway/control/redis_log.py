"""The control log of a shared crawl in Redis (or Redis Cluster).

Contract: implements ``ControlLog`` on the key ``hw:{C}:controls`` (see
``frontier/redis/keys.py``), a LIST of JSON records ``{"at", "kind", "node", "args",
"origin"}`` appended with RPUSH: the list's length after the push is the control's
``seq``, so concurrent writers (nodes, CLIs, consoles) each get their own and a
control's ``seq`` is its 1-based position. Nothing is ever removed. The key carries the
crawl's hash tag (one slot with the crawl's other small keys), so it works unchanged
on Redis Cluster. Redis errors become ``StoreError`` naming the store with its password
masked.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import redis

from headway.control.log import Control, ControlKind, control_from_json, encode_record
from headway.errors import StoreError
from headway.frontier.redis.keys import CrawlKeys


class RedisControlLog:
    """The control log of crawl ``crawl_id`` through ``client`` (closed with the log
    when ``owns_client``); ``where`` names the store in errors (masked)."""

    def __init__(self, client: Any, crawl_id: str, *, where: str, owns_client: bool = True) -> None:
        self._client = client
        self._key = CrawlKeys(crawl_id).controls
        self._where = where
        self._owns = owns_client

    def append(
        self,
        kind: ControlKind,
        args: Mapping[str, Any],
        *,
        node: str | None,
        origin: str,
        at: float,
    ) -> Control:
        text = encode_record(kind, args, node, origin, at)
        try:
            seq = int(self._client.rpush(self._key, text))
        except redis.RedisError as exc:
            raise StoreError(f"cannot record the control in {self._where}: {exc}") from exc
        return Control(seq, ControlKind(kind), node, dict(args), origin, at)

    def read_after(self, seq: int, limit: int = 1000) -> list[Control]:
        start = max(0, seq)
        try:
            texts = self._client.lrange(self._key, start, start + max(0, limit) - 1)
        except redis.RedisError as exc:
            raise StoreError(f"cannot read the control log in {self._where}: {exc}") from exc
        found = (control_from_json(start + i + 1, text) for i, text in enumerate(texts))
        return [c for c in found if c is not None]

    def close(self) -> None:
        if self._owns:
            self._client.close()
