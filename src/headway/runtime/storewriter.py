"""The store stage's writer: WARC records, CDXJ lines and crawl-log lines for a batch of
pages, on the store thread, flushed (fsync) before the batch's URLs are settled.

Exact-duplicate payloads become revisit records against the crawl's shared payload
digests (kept by the frontier backend, so every node sees the same set): per batch, the
digests are computed, looked up in one call, and the new first captures are recorded in
one call after the records are flushed (a digest never names a record that a crash could
still cut off).

With recrawl, a ``304`` to a conditional revisit is written as a server-not-modified
revisit record referring to the earlier capture (the URL's ``FetchedPage.previous``), and
``plan`` (given at construction) decides each page's next revisit once its record is
written, so its crawl-log line carries what the fetch found."""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Awaitable, Callable, Sequence

from headway import __version__, crashpoints
from headway.crashpoints import CrashPoint
from headway.runtime.crawldir import CrawlPaths
from headway.runtime.stats import StoreStats
from headway.runtime.worker import ThreadWorker
from headway.settings import Settings
from headway.store.cdxj import CdxjWriter
from headway.store.cdxjsort import discard_leftovers, sort_index
from headway.store.crawllog import CrawlLog, CrawlLogEntry
from headway.store.recovery import recover_store
from headway.store.warc import EarlierCapture, WarcWriter, WrittenRecord, payload_digest
from headway.work.items import FetchedPage, Revisit, RobotsAnswer, SkippedUrl, Work

log = logging.getLogger(__name__)

#: Seconds between fsyncs of the WARC file, index and crawl log.
SYNC_INTERVAL = 1.0


#: Looks up payload digests: digest -> (target URI, WARC-Date) of the first capture.
FindPayloads = Callable[[Sequence[str]], Awaitable[dict[str, tuple[str, str]]]]
#: Records (digest, target URI, WARC-Date) first captures; first writer wins.
PutPayloads = Callable[[Sequence[tuple[str, str, str]]], Awaitable[None]]
#: Recrawl: the next revisit of a written page (None: not revisited); runs on the store
#: thread.
PlanRevisit = Callable[[FetchedPage, WrittenRecord | None], Revisit | None]

_SERIAL = re.compile(r"-(\d+)\.warc\.gz$")


def _newest_warc_glob(paths: CrawlPaths) -> str:
    """Only the newest WARC file can end in a partial record: the writer fills one file at
    a time and closes it (flushed) before opening the next, and every start opens a new
    one. The file written last (latest modification, then highest serial) is the one that
    was open at a crash. Checking just it keeps start-up fast however large the crawl."""
    newest: tuple[int, int, str] | None = None
    for f in paths.warc_dir.glob("*.warc.gz"):
        m = _SERIAL.search(f.name)
        key = (f.stat().st_mtime_ns, int(m.group(1)) if m else -1, f.name)
        if newest is None or key > newest:
            newest = key
    return f"warc/{newest[2]}" if newest is not None else "warc/*.warc.gz"


class StoreWriter:
    def __init__(
        self,
        paths: CrawlPaths,
        settings: Settings,
        *,
        find_payloads: FindPayloads,
        put_payloads: PutPayloads,
        plan_revisit: PlanRevisit | None = None,
    ) -> None:
        self._paths = paths
        self._settings = settings
        self._find_payloads = find_payloads
        self._put_payloads = put_payloads
        self._plan_revisit = plan_revisit
        self._worker = ThreadWorker("store")
        self._warc: WarcWriter | None = None
        self._cdxj: CdxjWriter | None = None
        self._log: CrawlLog | None = None
        self._last_sync = 0.0

    async def open(self) -> None:
        await self._worker.call(self._open)

    def _open(self) -> None:
        p = self._paths
        discard_leftovers(p.cdxj)
        report = recover_store(
            p.root,
            warc_glob=_newest_warc_glob(p),
            cdxj_name=p.cdxj.name,
            log_name=p.crawl_log.name,
        )
        cut = {k: v for k, v in report.warc_bytes_cut.items() if v}
        if cut or report.cdxj_lines_dropped or report.log_bytes_cut:
            log.warning(
                "recovered after an unclean stop: WARC bytes cut %s, index lines "
                "dropped %d, crawl-log bytes cut %d",
                cut,
                report.cdxj_lines_dropped,
                report.log_bytes_cut,
            )
        s = self._settings
        info = {
            "operator-user-agent": s.identity.user_agent,
            "robots": "obey",
            "format": "WARC File Format 1.1",
            "conformsTo": "https://iipc.github.io/warc-specifications/specifications/"
            "warc-format/warc-1.1/",
        }
        self._warc = WarcWriter(
            p.warc_dir,
            prefix=p.warc_prefix(s.store.warc_prefix),
            max_file_size=s.store.warc_max_size,
            software=f"headway/{__version__}",
            info=info,
            compress_level=s.store.warc_gzip_level,
        )
        self._cdxj = CdxjWriter(p.cdxj)
        self._log = CrawlLog(p.crawl_log)

    async def write(
        self, batch: Sequence[Work], notes: Sequence[str | None]
    ) -> list[Revisit | None]:
        """Write and flush ``batch`` (``notes``: what the crawl log says about each item);
        its new payload digests are recorded once flushed. Returns each item's planned
        revisit (recrawl; None for an item not revisited)."""
        digests = await self._worker.call(_digests_of, batch)
        wanted = list({d for d in digests if d is not None})
        known = await self._find_payloads(wanted) if wanted else {}
        payloads = dict(known)
        plans: list[Revisit | None] = await self._worker.call(
            self._write, batch, notes, digests, payloads
        )
        new = [(d, uri, date) for d, (uri, date) in payloads.items() if d not in known]
        if new:
            await self._put_payloads(new)
        return plans

    def _write(
        self,
        batch: Sequence[Work],
        notes: Sequence[str | None],
        digests: Sequence[str | None],
        payloads: dict[str, tuple[str, str]],
    ) -> list[Revisit | None]:
        assert self._warc is not None and self._cdxj is not None and self._log is not None
        plans: list[Revisit | None] = []
        for work, note, digest in zip(batch, notes, digests, strict=True):
            rec = None
            if not isinstance(work, SkippedUrl) and digest is not None:
                rec = self._warc.write_exchange(
                    work.result, payloads, digest=digest, not_modified_of=_not_modified_of(work)
                )
                self._crash_point(CrashPoint.WARC_WRITTEN)
                self._cdxj.append(work.result, rec)
                self._crash_point(CrashPoint.CDXJ_WRITTEN)
            plan = None
            if self._plan_revisit is not None and isinstance(work, FetchedPage):
                plan = self._plan_revisit(work, rec)
            plans.append(plan)
            self._log.write(log_entry(work, note, rec, plan))
            if not isinstance(work, RobotsAnswer):
                self._crash_point(CrashPoint.LOG_WRITTEN)
        # Written to the OS before the batch is settled: that is what survives kill -9.
        # fsync (power loss) at most once a second, and at rotation and close.
        now = time.monotonic()
        sync = self._settings.store.store_sync == "batch" or now - self._last_sync >= SYNC_INTERVAL
        if sync:
            self._last_sync = now
        self._warc.flush(sync=sync)
        self._cdxj.flush(sync=sync)
        self._log.flush(sync=sync)
        crashpoints.reached(CrashPoint.STORE_FLUSHED)
        return plans

    def _crash_point(self, point: CrashPoint) -> None:
        """Die here if ``point`` is armed, with everything written so far handed to the
        OS first (what a filled buffer could have written): the worst case on disk."""
        if crashpoints.hit(point):
            for w in (self._warc, self._cdxj, self._log):
                if w is not None:
                    w.flush(sync=False)
            crashpoints.crash()

    def statistics(self) -> StoreStats:
        """What the writer wrote since it was opened."""
        if self._warc is None:
            return StoreStats()
        w = self._warc.statistics()
        return StoreStats(
            warc_files=w.files, records=w.records, bytes=w.bytes_written, revisits=w.revisits
        )

    @property
    def revisits(self) -> int:
        return self._warc.statistics().revisits if self._warc is not None else 0

    @property
    def files(self) -> int:
        return self._warc.statistics().files if self._warc is not None else 0

    async def close(self) -> None:
        await self._worker.call(self._close)
        self._worker.shutdown()

    def _close(self) -> None:
        for w in (self._warc, self._cdxj, self._log):
            if w is not None:
                w.close()
        if self._cdxj is not None:
            # appended in capture order while running; sorted once here, so replay tools
            # can binary-search it as written
            sort_index(self._paths.cdxj)


def log_entry(
    work: Work, note: str | None, rec: WrittenRecord | None, plan: Revisit | None = None
) -> CrawlLogEntry:
    """The crawl-log line of one item (``rec``: its WARC record, when written; ``plan``:
    its next revisit, recrawl)."""
    if isinstance(work, SkippedUrl):
        skipped = work.lease
        return CrawlLogEntry(
            time=time.time(),
            url=work.url,
            status=None,
            outcome="skipped",
            bytes=0,
            content_type=None,
            digest=None,
            duration=0.0,
            depth=work.depth,
            outlinks=0,
            truncated=None,
            error=None,
            attempt=skipped.attempts + 1,
            revisit=False,
            warc_file=None,
            warc_offset=None,
            via=skipped.via,
            note=note,
        )
    res = work.result
    parsed = work.parsed if isinstance(work, FetchedPage) else None
    lease = work.lease if isinstance(work, FetchedPage) else None
    error = res.error
    if isinstance(work, FetchedPage):
        error = work.parse_error or error
        if error is None and parsed is not None and parsed.refused is not None:
            error = f"{parsed.kind} refused: {parsed.refused}"
    return CrawlLogEntry(
        time=res.started_at,
        url=work.url,
        status=res.status,
        outcome=res.outcome.value,
        bytes=len(res.raw_body),
        content_type=res.header("Content-Type"),
        digest=rec.payload_digest if rec is not None else None,
        duration=round(res.duration, 4),
        depth=work.depth,
        outlinks=len(parsed.links) if parsed is not None else 0,
        truncated=res.truncated,
        error=error,
        attempt=(lease.attempts + 1) if lease is not None else 1,
        revisit=rec.revisit if rec is not None else False,
        warc_file=rec.filename if rec is not None else None,
        warc_offset=rec.offset if rec is not None else None,
        via=lease.via if lease is not None else None,
        note=note,
        simhash=f"{parsed.simhash:016x}" if parsed and parsed.simhash else None,
        near_dup_of=work.near_dup_of if isinstance(work, FetchedPage) else None,
        handler=parsed.kind if parsed is not None else None,
        change=plan.change.value if plan is not None else None,
        revisit_in=round(plan.state.interval, 3) if plan is not None else None,
        sent=round(res.sent_at, 6) if res.sent_at is not None else None,
        delay=round(work.pacing.delay, 6) if work.pacing is not None else None,
        crawl_delay=work.pacing.crawl_delay if work.pacing is not None else None,
        retry_after=work.retry_after if isinstance(work, FetchedPage) else None,
    )


def _digests_of(batch: Sequence[Work]) -> list[str | None]:
    """The payload digest of each item whose exchange is written to the WARC, else None."""
    out: list[str | None] = []
    for work in batch:
        match work:
            case FetchedPage(result=res, store_body=True) if res.status is not None:
                prev = work.previous
                if res.status == 304 and prev is not None and prev.digest:
                    out.append(prev.digest)  # the payload the 304 confirms
                else:
                    out.append(payload_digest(res.raw_body))
            case RobotsAnswer(result=res) if res.status is not None:
                out.append(payload_digest(res.raw_body))
            case _:
                out.append(None)
    return out


def _not_modified_of(work: Work) -> EarlierCapture | None:
    """The earlier capture a 304 of ``work`` refers to (None: not a revisit with one)."""
    prev = work.previous if isinstance(work, FetchedPage) else None
    if prev is None or prev.capture is None:
        return None
    cap = prev.capture
    return EarlierCapture(cap.uri, cap.date, cap.record_id)
