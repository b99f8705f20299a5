"""What a shared crawl's Redis holds of one URL (``headway why``), read-only, from the
layout of ``keys.py``: the seen set of its shard, its host's queues (level lists and
waiting set), and the shard's record hash (leased and parked URLs). A URL settled DONE
or FAILED keeps only its fingerprint in the seen set: the crawl logs say the rest."""

from __future__ import annotations

import json
from typing import Any

from headway.errors import StoreError
from headway.frontier.redis.counts import read_counts
from headway.frontier.redis.keys import CrawlKeys, seen_bucket, shard_of_host
from headway.frontier.redis.status import crawl_meta
from headway.frontier.store import FoundUrl, UrlState

#: Characters of the zero-padded id that starts a queued member (``keys.member``).
_ID = 15


def _found(rec: list[Any], state: UrlState, not_before: float = 0.0, **kw: Any) -> FoundUrl:
    return FoundUrl(
        seen=True,
        state=state,
        depth=int(rec[2]),
        priority=int(rec[3]),
        via=rec[5],
        attempts=int(rec[6]),
        not_before=not_before,
        fetches=int(rec[8]) if len(rec) > 8 else 0,
        **kw,
    )


def _url_of(member: str) -> tuple[str, list[Any]] | None:
    try:
        rec = json.loads(member[_ID:])
    except ValueError:
        return None
    return (rec[0], rec) if isinstance(rec, list) and rec else None


def find_url(client: Any, crawl_id: str, url: str, host: str, fp: int) -> FoundUrl:
    """What the crawl holds of ``url`` (its host ``host``, fingerprint ``fp``); a
    ``StoreError`` when the store holds no such crawl. Redis errors pass through."""
    keys = CrawlKeys(crawl_id)
    shards, bits = client.hmget(keys.meta, ["shards", "seen_bits"])
    if shards is None:
        raise StoreError(f"no crawl {crawl_id!r} in the store")
    s = shard_of_host(host, int(shards))
    if not client.sismember(keys.seen(s, seen_bucket(fp, int(bits or 0))), fp):
        return FoundUrl(seen=False)
    levels = keys.queue(s, host)
    for level in client.zrange(levels, 0, -1):
        for member in client.lrange(f"{levels}|{level}", 0, -1):
            got = _url_of(member)
            if got is not None and got[0] == url:
                return _found(got[1], UrlState.QUEUED)
    for member, due in client.zrange(keys.waiting(s, host), 0, -1, withscores=True):
        got = _url_of(member)
        if got is not None and got[0] == url:
            return _found(got[1], UrlState.QUEUED, float(due))
    for mid, text in client.hscan_iter(keys.shard(s, "urls"), count=1000):
        try:
            rec = json.loads(text)
        except ValueError:
            continue
        if not isinstance(rec, list) or not rec or rec[0] != url:
            continue
        for lease, expires in client.zscan_iter(keys.shard(s, "leases"), match=f"{mid}|*"):
            owner = str(lease).split("|", 1)[1]
            return _found(rec, UrlState.LEASED, lease_expires=float(expires), owner=owner)
        due = client.zscore(keys.shard(s, "parked"), mid)
        return _found(rec, UrlState.PARKED, float(due or 0.0))
    return FoundUrl(seen=True)


def crawl_facts(client: Any, crawl_id: str) -> tuple[dict[str, str], int]:
    """The crawl's meta record (``set_meta`` keys as ``m:<key>``) and the URLs it shed in
    all; a ``StoreError`` when the store holds no such crawl. Redis errors pass through."""
    meta = crawl_meta(client, crawl_id)
    if "shards" not in meta:
        raise StoreError(f"no crawl {crawl_id!r} in the store")
    counts = read_counts(client, CrawlKeys(crawl_id), int(meta["shards"]))
    return meta, sum(counts.shed.values())
