"""The calls of settling and leasing in one shard (``settle.lua``, ``lease.lua``): their
KEYS and ARGV built from a batch, and the leased URLs read back from ``lease.lua``'s
replies (the key layout is in ``keys.py``)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

from headway.frontier.redis.admission import Call
from headway.frontier.redis.keys import CrawlKeys, member
from headway.frontier.redis.records import leased_from_record
from headway.frontier.store import Completion, LeasedUrl, Settle

#: A URL to settle: (lease member, host, kind, not_before, bound, "=validators" or "").
SettleItem = tuple[str, str, str, str, str, str]

_KIND = {
    Settle.DONE: "done",
    Settle.FAILED: "failed",
    Settle.RETRY: "retry",
    Settle.REQUEUE: "requeue",
}
_LEASE_MODE = {None: "", True: "revisits", False: "new"}


def settle_item(url_id: int, c: Completion, host: str, node: str) -> SettleItem:
    """The settlement of URL ``url_id`` of ``host`` that node ``node`` leased."""
    kind = _KIND[c.settle]
    not_before = c.not_before
    revisit_at: float | None = getattr(c, "revisit_at", None)
    if c.settle is Settle.DONE and revisit_at is not None:
        kind, not_before = "revisit", revisit_at
    validators: str | None = getattr(c, "validators", None)
    v = "" if validators is None else "=" + validators
    return f"{member(url_id)}|{node}", host, kind, repr(float(not_before)), "", v


def settle_call(keys: CrawlKeys, shard: int, items: Sequence[SettleItem]) -> Call:
    """A settle.lua call of ``items``, all of ``shard``."""
    hosts: dict[str, int] = {}
    args: list[Any] = []
    for lease, host, kind, not_before, bound, v in items:
        args += [lease, hosts.setdefault(host, len(hosts) + 1), kind, not_before, bound, v]
    shard_keys = keys.shard_keys(shard, "urls", "ready", "hosts", "leases", "totals")
    shard_keys += keys.host_keys(shard, list(hosts))
    return "settle", shard_keys, [len(hosts), *hosts, *args]


def lease_call(
    keys: CrawlKeys,
    shard: int,
    wants: Sequence[tuple[str, int]],
    now: float,
    expires: float,
    node: str,
    revisits_first: bool | None,
) -> Call:
    """A lease.lua call for node ``node``: up to n URLs of each (host, n) of ``wants``,
    all of ``shard``, leased until ``expires``."""
    shard_keys = keys.shard_keys(
        shard, "urls", "worst", "ready", "hosts", "leases", "totals", "owner"
    )
    shard_keys += keys.host_keys(shard, [h for h, _ in wants])
    mode = _LEASE_MODE[revisits_first]
    args: list[Any] = [repr(float(now)), repr(float(expires)), node, 1, mode, len(wants)]
    for h, n in wants:
        args += [h, n]
    return "lease", shard_keys, args


def leased_from_replies(replies: Sequence[Any], expires: float) -> Iterator[LeasedUrl]:
    """The URLs that lease.lua calls leased, in the order of their replies."""
    for reply in replies:
        for i in range(0, len(reply), 3):
            yield leased_from_record(int(reply[i]), json.loads(reply[i + 1]), expires)
