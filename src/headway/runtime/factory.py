"""The one factory of a node: every component built from the settings before anything
runs, so the node only runs them.

Contract of ``build_node_parts``: the inputs the settings name are checked first
(``check_inputs``), and the metrics port taken, before anything is written to disk. On
success every part is built and opened (crawl directory locked, frontier open for this
node, store recovered, parser processes warm, metrics outputs open); on failure whatever
was already built is closed again, a crawl directory this start created is removed, and
the error propagates (a ``ConfigError`` for a store that is not available or cannot be
reached, a ``CrawlDirError`` for a frontier that cannot be opened). The node closes the parts at its
end (``NodeParts`` names them; the node owns their order of shutdown).
"""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import math
from collections.abc import Callable, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path

from headway.errors import ConfigError, CrawlDirError, HeadwayError
from headway.fetch.client import FetchConfig, tls_context
from headway.frontier.backends import backend_for, store_scheme
from headway.frontier.store import FrontierStore
from headway.policy.robots import RobotsCache
from headway.runtime.components import fetch_config, host_limit_params, store_target
from headway.runtime.crawldir import CrawlDir, CrawlIdentity, CrawlPaths
from headway.runtime.dedup import dedup_indexes, import_earlier_payloads
from headway.runtime.leases import LeaseBook
from headway.runtime.metrics import MetricsFile, PrometheusExporter
from headway.runtime.parsepool import ParsePool
from headway.runtime.recrawl import Recrawl, recrawl_for
from headway.runtime.scheduler import Scheduler, SkipHook
from headway.runtime.stage import Stage
from headway.runtime.storewriter import StoreWriter
from headway.runtime.weights import page_host, page_weight, parse_cost, settle_weight
from headway.settings import MIB, Settings, parse_host_limits
from headway.store.cdxj import load_digests
from headway.threads import ThreadWorker
from headway.urls.scope import OptOut
from headway.work.items import FetchedPage, SettleItem, Work

log = logging.getLogger(__name__)

#: Pages sent to a parser process in one round trip (when that many are waiting) ...
PARSE_BATCH = 8
#: ... while their parse cost (``weights.parse_cost``) adds up to at most this: a costly
#: page goes alone, so a cheap page never waits behind several of them in one call.
PARSE_BATCH_COST = 1 * MIB


@dataclass(slots=True)
class NodeParts:
    """The built components of one node."""

    crawldir: CrawlDir
    paths: CrawlPaths
    node_id: str
    fw: ThreadWorker  # the frontier's one worker thread
    frontier: FrontierStore
    store: StoreWriter
    scheduler: Scheduler
    leases: LeaseBook  # the leases the node holds (taken by the scheduler)
    parse_stage: Stage[FetchedPage]
    store_stage: Stage[Work]
    settle_stage: Stage[SettleItem]
    pool: ParsePool
    metrics_file: MetricsFile
    exporter: PrometheusExporter | None
    page_budget: float  # page fetches this run may still make (--max-pages)
    fetch_config: FetchConfig
    recrawl: Recrawl  # NoRecrawl without --recrawl


def check_inputs(settings: Settings) -> FetchConfig:
    """Everything the settings name that can be checked without touching the crawl
    directory: name overrides, the hosts file, the certificate authorities, the frontier
    backend, the earlier crawls to dedup against. Returns the fetch configuration;
    raises ``ConfigError`` naming the key."""
    fetch = fetch_config(settings)  # fetch.resolve, fetch.hosts_file
    tls_context(fetch.ca_file)  # fetch.ca_file
    backend_for(settings.frontier.store)  # frontier.store
    dedup_indexes(settings.store.dedup_from)  # store.dedup_from
    check_text_packages(settings)  # text.text, text.text_mode
    return fetch


#: What the text output needs installed, by mode (docs/outputs.md).
_TEXT_PACKAGES: dict[str, tuple[str, ...]] = {
    "main": ("resiliparse",),
    "all": ("resiliparse",),
    "accurate": ("resiliparse", "trafilatura"),
}


def check_text_packages(settings: Settings) -> None:
    """``ConfigError`` naming the extra to install when ``--text`` (in its mode) needs a
    package that is missing: a clear line at start, not an error on every page."""
    text = settings.text
    if text.parquet_index and importlib.util.find_spec("pyarrow") is None:
        raise ConfigError(
            "text.parquet_index", "the Parquet index needs pyarrow: pip install 'headway[text]'"
        )
    if not text.text:
        return
    for name in _TEXT_PACKAGES[text.text_mode]:
        if importlib.util.find_spec(name) is None:
            extra = "accurate" if name == "trafilatura" else "text"
            raise ConfigError(
                "text.text_mode" if extra == "accurate" else "text.text",
                f"the text output needs {name}: pip install 'headway[{extra}]'",
            )


def crawl_identity(settings: Settings) -> CrawlIdentity:
    """The crawl a node's directory belongs to: its own frontier, or the shared crawl of
    ``--store`` (password masked) and ``--crawl-id``."""
    store = settings.frontier.store
    if store_scheme(store) == "sqlite":
        return CrawlIdentity()
    return CrawlIdentity(backend_for(store).shown(store), settings.distributed.crawl_id)


def start_exporter(port: int) -> PrometheusExporter:
    """The Prometheus exporter, listening; ``ConfigError`` when the port is taken."""
    exporter = PrometheusExporter()
    try:
        exporter.start(port)
    except OSError as exc:
        raise ConfigError(
            "runtime.metrics_port", f"cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}"
        ) from None
    return exporter


def lease_seconds(settings: Settings) -> float:
    """How long a lease lasts: longer than the slowest normal fetch."""
    return settings.fetch.total_timeout + settings.frontier.lease_margin


async def open_frontier(
    settings: Settings, crawl_dir: Path, node_id: str, fw: ThreadWorker
) -> FrontierStore:
    """The frontier the ``store`` setting names, opened for ``node_id`` on ``fw``."""
    backend = backend_for(settings.frontier.store)  # ConfigError when not available
    target = store_target(settings, crawl_dir, node_id)
    try:
        return await fw.call(backend.open, target)
    except HeadwayError:
        raise
    except Exception as exc:
        # the message names no store URL: it may hold a password
        raise CrawlDirError(f"cannot open the frontier: {exc}") from exc


async def build_node_parts(
    settings: Settings,
    *,
    optout: OptOut | None,
    on_skip: SkipHook,
    clock: Callable[[], float],
    extra_gap: Callable[[str], float] | None = None,
    inlinks: Callable[[str], int] | None = None,
    quality: Callable[[str], float] | None = None,
) -> NodeParts:
    s = settings
    fetch = check_inputs(s)
    async with AsyncExitStack() as stack:
        exporter: PrometheusExporter | None = None
        if s.runtime.metrics_port:
            exporter = start_exporter(s.runtime.metrics_port)
            stack.callback(exporter.close)
        crawldir = CrawlDir(s.crawl.out, crawl_identity(s))
        paths = crawldir.open()
        stack.callback(crawldir.discard_if_new)  # runs last: a failed start leaves no new dir
        stack.callback(crawldir.close)
        fw = ThreadWorker("frontier")
        stack.callback(fw.shutdown)
        frontier = await open_frontier(s, paths.root, crawldir.node_id, fw)
        stack.push_async_callback(fw.call, frontier.close)
        if s.frontier.store:
            # a node of a shared crawl names its output files after itself
            paths = paths.for_node(crawldir.node_id)

        async def find_payloads(digests: Sequence[str]) -> dict[str, tuple[str, str]]:
            return await fw.call(frontier.find_payloads, digests)

        async def put_payloads(items: Sequence[tuple[str, str, str]]) -> None:
            await fw.call(frontier.put_payloads, items)

        recrawl = recrawl_for(s)
        store = StoreWriter(
            paths,
            s,
            find_payloads=find_payloads,
            put_payloads=put_payloads,
            plan_revisit=lambda work, rec: recrawl.plan(work, rec, clock()),
        )
        await store.open()
        stack.push_async_callback(store.close)
        if s.store.dedup_from:
            earlier = dedup_indexes(s.store.dedup_from)
            read = await fw.call(import_earlier_payloads, frontier, earlier)
            if read:
                log.info("dedup: %d payload digests of earlier crawls recorded", read)
        if crawldir.upgrade_from is not None:
            moved = await fw.call(import_index_payloads, frontier, paths.cdxj)
            crawldir.finish_upgrade()
            log.info("crawl directory upgraded: %d payload digests moved to the frontier", moved)
        page_budget = math.inf
        if s.crawl.max_pages:
            counts = await fw.call(frontier.counts)
            # the crawl's page fetches so far: URLs ended (done or failed) and, in a
            # recrawl, every fetch of a page now waiting for its revisit (``fetched``
            # counts DONE settlements; a store written before it was kept has only done)
            used = max(counts.fetched, counts.done) + counts.failed
            page_budget = max(0, s.crawl.max_pages - used)
        parse_stage: Stage[FetchedPage] = Stage(
            "parse-queue",
            s.runtime.parse_queue,
            max_bytes=s.runtime.parse_queue_mib * MIB,
            weight=page_weight,
            key=page_host,
            cost=parse_cost,
        )
        scheduler = Scheduler(
            frontier,
            fw,
            limits=host_limit_params(s),
            robots=RobotsCache(),
            robots_ttl=s.politeness.robots_ttl,
            crawl_delay_max=s.politeness.crawl_delay_max,
            lease_seconds=lease_seconds(s),
            optout=optout,
            on_skip=on_skip,
            robots_give_up=s.politeness.robots_give_up,
            host_ceilings=parse_host_limits(s.politeness.host_limit),
            clock=clock,
            user_agent=s.identity.user_agent,
            page_budget=page_budget,
            extra_gap=extra_gap,
            leases=LeaseBook(lease_seconds(s), guard=s.frontier.lease_margin / 2),
            revisits_first=recrawl.revisits_first,
            # a host whose last page waits for a parser waits for its next fetch
            waits_for_parser=parse_stage.holds,
            inlinks=inlinks if s.frontier.host_order == "importance" else None,
            quality=quality,
        )
        parse_stage.on_leave = scheduler.parser_took  # ... and goes when its page leaves
        pool = ParsePool(s.parsers, s.parsers * 2, PARSE_BATCH, s.runtime.parse_timeout)
        loop = asyncio.get_running_loop()
        stack.push_async_callback(loop.run_in_executor, None, pool.close)
        await loop.run_in_executor(None, pool.warm_up)
        metrics_file = MetricsFile(paths.metrics)
        stack.callback(metrics_file.close)
        parts = NodeParts(
            crawldir=crawldir,
            paths=paths,
            node_id=crawldir.node_id,
            fw=fw,
            frontier=frontier,
            store=store,
            scheduler=scheduler,
            leases=scheduler.leases,
            parse_stage=parse_stage,
            store_stage=Stage(
                "store",
                s.runtime.store_queue,
                max_bytes=s.runtime.store_queue_mib * MIB,
                weight=page_weight,
            ),
            settle_stage=Stage(
                "settle",
                s.runtime.settle_batch * 4,
                max_bytes=s.runtime.store_queue_mib * MIB,
                weight=settle_weight,
            ),
            pool=pool,
            metrics_file=metrics_file,
            exporter=exporter,
            page_budget=page_budget,
            fetch_config=fetch,
            recrawl=recrawl,
        )
        stack.pop_all()
        return parts
    raise AssertionError("unreachable")  # pragma: no cover - the stack never swallows


def import_index_payloads(frontier: FrontierStore, cdxj: Path, batch: int = 10_000) -> int:
    """Move the payload digests of a crawl directory's index into the frontier (the
    upgrade from crawl format 1, which read them from the index at every start)."""
    items = [(d, uri, date) for d, (uri, date) in load_digests(cdxj).items()]
    for i in range(0, len(items), batch):
        frontier.put_payloads(items[i : i + batch])
    return len(items)
