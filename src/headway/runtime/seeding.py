"""The seeds of a shared crawl: stored once, by the first ``headway crawl``; every node
takes them from the store (they define the scope) and offers them to the frontier, whose
seen set admits each once whoever runs it, then notes in each of their shards that they
were (``offer_seeds``); after a restart of the store, the seeds of shards that lost the
note are offered again (``offer_lost_seeds``); and the scope, admission and settle rules
a crawl's seeds define (``rules_for_seeds``)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Mapping, Sequence

from headway.errors import ConfigError
from headway.frontier.store import FrontierStore, SharedCrawl
from headway.policy.quality import QualityBook
from headway.runtime.components import retry_params
from headway.settings import Settings
from headway.threads import ThreadWorker
from headway.urls.canonical import CanonOptions, host_key
from headway.urls.scope import OptOut, Scope, ScopeMode, SeedScope
from headway.work.admission import Admission
from headway.work.settle import SettleRules

log = logging.getLogger(__name__)


async def shared_seeds(
    shared: SharedCrawl,
    fw: ThreadWorker,
    crawl: str,
    seeds: Sequence[str],
    *,
    wait_limit: float,
    stopped: asyncio.Event,
) -> list[str] | None:
    """The crawl's seeds: ``seeds`` when this call stored them first, else the stored
    ones (waited for up to ``wait_limit`` seconds when none are stored yet: a
    ``ConfigError`` after it). None when ``stopped`` is set while waiting."""
    mine = json.dumps(list(seeds))
    if seeds:
        first: bool = await fw.call(shared.set_meta_once, "seeds", mine)
        if first:
            log.info("crawl %s seeded with %d seeds", crawl, len(seeds))
            return list(seeds)
    stored = await fw.call(shared.get_meta, "seeds")
    if stored is None:
        log.warning("crawl %s has no seeds yet: waiting for headway crawl SEEDS", crawl)
        limit = time.monotonic() + wait_limit
        while stored is None and not stopped.is_set():
            if time.monotonic() > limit:
                raise ConfigError(
                    "distributed.crawl_id",
                    f"crawl {crawl!r} got no seeds: start it with headway crawl SEEDS",
                )
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(0.5):
                    await stopped.wait()
            stored = await fw.call(shared.get_meta, "seeds")
        if stored is None:
            return None  # stopped while waiting
    if seeds and stored != mine:
        log.warning("crawl %s was seeded before: its own seeds are used, not these", crawl)
    return list(json.loads(stored))


async def offer_seeds(
    seeds: Sequence[str],
    admission: Admission,
    frontier: FrontierStore,
    fw: ThreadWorker,
    now: float,
) -> int:
    """Admit ``seeds`` to the frontier; in a shared crawl, then note in their shards that
    they were (``SharedCrawl.mark_seeded``). How many were new."""
    added = await fw.call(frontier.add, admission.admit(seeds, 0, None), now)
    shared = frontier.shared()
    if shared is not None and seeds:
        await fw.call(shared.mark_seeded, {host_key(u) for u in seeds})
    return added.added


async def offer_lost_seeds(
    seeds: Sequence[str],
    admission: Admission,
    frontier: FrontierStore,
    fw: ThreadWorker,
    now: float,
) -> int:
    """After a restart of the store: offer again the seeds of shards that lost the note
    ``offer_seeds`` wrote after admitting them (every seed without a shared store). A
    failover or a restart on the AOF loses about the last second of writes, and a
    shard's writes are kept in order: a shard that kept its note kept its seeds, and a
    crawl seeded before the loss is not offered every seed again. How many were
    offered (logged with the recent links the caller forgot)."""
    shared = frontier.shared()
    hosts = {host_key(u) for u in seeds}
    lost = hosts if shared is None else await fw.call(shared.seeded_hosts_lost, hosts)
    again = [u for u in seeds if host_key(u) in lost]
    if again:
        await offer_seeds(again, admission, frontier, fw, now)
    log.warning(
        "the store restarted: recently admitted links are offered again, and %d of %d "
        "seeds (their shards lost writes)",
        len(again),
        len(seeds),
    )
    return len(again)


#: The frontier's meta key of the admission rules the crawl last started with
#: (``admission_record``), read back by ``headway why``.
ADMISSION_META = "admission"


def admission_record(settings: Settings) -> str:
    """The admission rules of this run as the frontier keeps them (JSON): scope mode,
    include and exclude patterns, depth and length bounds, the canonicalization options
    and the opt-out file's path (its domains stay in the file; the opt-out controls are
    in the control log)."""
    sc = settings.scope
    return json.dumps(
        {
            "scope": sc.scope,
            "include": list(sc.include),
            "exclude": list(sc.exclude),
            "max_depth": sc.max_depth,
            "max_url_length": sc.max_url_length,
            "strip_params": sorted(settings.canon.strip_params),
            "sort_query": settings.canon.sort_query,
            "optout_file": str(sc.optout_file) if sc.optout_file is not None else None,
            "at": time.time(),
        }
    )


def rules_for_seeds(
    seeds: Sequence[str],
    settings: Settings,
    *,
    optout: OptOut | None,
    canon: CanonOptions,
    quality: QualityBook | None,
    seed_scopes: Mapping[str, SeedScope] | None = None,
) -> tuple[Scope, Admission, SettleRules]:
    """The scope, admission and settle rules of a crawl with ``seeds`` (``quality``
    None: depth-only priority; ``seed_scopes``: seeds' own scope options)."""
    sc = settings.scope
    scope = Scope.for_seeds(
        list(seeds),
        mode=ScopeMode(sc.scope),
        include=sc.include,
        exclude=sc.exclude,
        max_depth=sc.max_depth,
        max_url_length=sc.max_url_length,
        optout=optout,
        seed_scopes=seed_scopes,
        include_surts=sc.include_surt,
        exclude_surts=sc.exclude_surt,
        extra_hops=sc.extra_hops,
    )
    admission = Admission(
        scope,
        trap_check=sc.trap_check,
        recent_urls=sc.recent_urls,
        current_year=time.gmtime().tm_year,
        quality=quality,
    )
    rules = SettleRules(
        admission=admission,
        canon=canon,
        retry=retry_params(settings),
        quota_status=settings.fetch.quota_status,
    )
    return scope, admission, rules
