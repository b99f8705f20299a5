"""The node's side of the control stage: ``NodeControls`` carries out what the control
task (``control/applier.py``) decides, through the node's parts it is handed (the
scheduler, the frontier and its worker thread, the admission, the opt-out list), and
``start_controls`` opens the crawl's control log and starts applying it.

- Seeds added are read like a seeds file's lines (the crawl's ``--seed-scheme``,
  canonicalized), their hosts join the scope as a seed's, and they are admitted.
- An exclusion (a regular expression) joins the scope's exclusions: admission refuses
  the links it matches from now on, and the scheduler drops the queued URLs it matches
  when they are leased (every node, those it leases), without a fetch.
- An opt-out domain joins the opt-out list (admission refuses its URLs from now on, the
  scheduler drops a host of it when it comes up) and the queued URLs of its hosts that
  this node may schedule are dropped (marked failed) at once; each node drops those of
  its own shards. The count is kept in the frontier's meta ``optout-dropped:<node>``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from headway.control.applier import ControlApplier
from headway.control.log import ControlLog
from headway.control.target import CrawlRef, open_control_log
from headway.frontier.store import FrontierStore
from headway.policy.overrides import HostOverride
from headway.runtime.components import canon_options
from headway.runtime.factory import NodeParts
from headway.runtime.scheduler import Scheduler
from headway.runtime.summary import StopReason
from headway.settings import Settings
from headway.threads import ThreadWorker
from headway.urls.canonical import CanonOptions
from headway.urls.scope import OptOut
from headway.urls.seeds import parse_seeds
from headway.work.admission import Admission

log = logging.getLogger(__name__)

#: The frontier meta key counting the URLs a node's opt-out controls dropped.
OPTOUT_DROPPED_META = "optout-dropped:"
#: A ready time later than any real one: ``ready_hosts`` with it lists every host.
_EVER = 1e18


class NodeControls:
    """``ControlHooks`` of one running node."""

    def __init__(
        self,
        *,
        scheduler: Scheduler,
        frontier: FrontierStore,
        fw: ThreadWorker,
        admission: Admission,
        optout: OptOut,
        request_stop: Callable[[StopReason], None],
        settings: Settings,
        canon: CanonOptions,
        clock: Callable[[], float],
    ) -> None:
        self._scheduler = scheduler
        self._frontier = frontier
        self._fw = fw
        self._admission = admission
        self._optout = optout
        self._request_stop = request_stop
        self._settings = settings
        self._canon = canon
        self._clock = clock

    def pause(self) -> None:
        self._scheduler.pause("control")

    def resume(self) -> None:
        self._scheduler.resume("control")

    def request_stop(self, reason: str) -> None:
        self._request_stop(StopReason(reason))

    async def add_seeds(self, urls: Sequence[str]) -> int:
        s = self._settings
        loaded = parse_seeds(
            urls,
            default_scheme=s.crawl.seed_scheme,
            options=self._canon,
            max_length=s.scope.max_url_length,
        )
        for p in loaded.problems:
            log.warning("seed %r of a control skipped: %s", p.line, p.reason)
        scope = self._admission.scope
        for url in loaded.urls:
            scope.add_seed(url)
        entries = self._admission.admit(loaded.urls, 0, None)
        if not entries:
            return 0
        added = await self._fw.call(self._frontier.add, entries, self._clock())
        if added.added:
            self._scheduler.wake()
        return added.added

    async def opt_out(self, domains: Sequence[str]) -> int:
        for domain in domains:
            self._optout.add(domain)
        self._admission.scope.opted_out()
        these = OptOut(domains)
        hosts = await self._fw.call(self._frontier.ready_hosts, _EVER, 10**9)
        dropped = 0
        for host, _ in hosts:
            if these.blocks(host):
                dropped += await self._fw.call(self._frontier.drop_host, host, "opted-out")
        if dropped:
            key = OPTOUT_DROPPED_META + self._frontier.node_id
            before = await self._fw.call(self._frontier.get_meta, key)
            total = int(before or 0) + dropped
            await self._fw.call(self._frontier.set_meta, key, str(total))
        self._scheduler.wake()
        return dropped

    def exclude(self, regexes: Sequence[str]) -> None:
        for regex in regexes:
            self._admission.scope.add_exclude(regex)
        self._scheduler.wake()

    def set_host_overrides(self, overrides: Mapping[str, HostOverride]) -> None:
        self._scheduler.set_overrides(overrides)


def control_log_for_node(settings: Settings, crawl_dir: Path) -> ControlLog:
    """The control log of the crawl a node runs (its frontier file, or the shared
    crawl's key in the store)."""
    store = settings.frontier.store
    crawl = settings.distributed.crawl_id
    if store:
        return open_control_log(CrawlRef(crawl_dir, store, crawl), must_exist=False)
    return open_control_log(CrawlRef(crawl_dir))


async def start_controls(
    parts: NodeParts,
    settings: Settings,
    admission: Admission,
    optout: OptOut,
    request_stop: Callable[[StopReason], None],
    started_at: float,
) -> ControlApplier:
    """The control task of the node built as ``parts``, with the crawl's control log as
    it stands applied (``applier.start``); ``started_at``: the node's start (unix time)."""
    sched = parts.scheduler
    sched.core.refuse_urls(admission.scope.url_refusal)
    hooks = NodeControls(
        scheduler=sched,
        frontier=parts.frontier,
        fw=parts.fw,
        admission=admission,
        optout=optout,
        request_stop=request_stop,
        settings=settings,
        canon=canon_options(settings),
        clock=sched.clock,
    )
    control_log = await parts.fw.call(control_log_for_node, settings, parts.paths.root)
    applier = ControlApplier(control_log, hooks, node=parts.node_id, started_at=started_at)
    try:
        await applier.start()
    except BaseException:
        applier.close()
        raise
    return applier
