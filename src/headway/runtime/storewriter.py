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
written, so its crawl-log line carries what the fetch found.

With the text output (``--text``), each HTML page answered 200 whose text the parser
processes extracted gets a ``conversion`` record in ``text/text-*.warc.gz``, right after
its response record and flushed with it; the crawl log says what became of the text
(``text``) and, with the index, the page's languages (``languages``). Revisit records
get none (their text is the earlier capture's). At start-up the newest text file's torn
tail is cut, as the WARC files' are.

With ``--parquet-index``, every record's row goes to the Parquet index in ``index/``
(``store/parquetindex.py``), cut into parts after batches are flushed; at start-up the
rows a crash kept from a part are rebuilt from the crawl log and the WARC files."""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import cast

import orjson

from headway import __version__, crashpoints
from headway.crashpoints import CrashPoint
from headway.parse.page import Outlinks
from headway.policy.aiuse import Use, reserved
from headway.runtime.crawldir import CrawlPaths
from headway.runtime.stats import StoreStats
from headway.settings import Settings
from headway.store.cdxj import CdxjWriter
from headway.store.cdxjsort import discard_leftovers, sort_index
from headway.store.crawllog import CrawlLog, CrawlLogEntry
from headway.store.parquetindex import ParquetIndex, repair_index
from headway.store.recovery import recover_store, recover_warc_files
from headway.store.warc import (
    EarlierCapture,
    WarcWriter,
    WrittenRecord,
    payload_digest,
    warc_date,
)
from headway.threads import ThreadWorker
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
        self._text: WarcWriter | None = None  # the text output, with --text
        self._index: ParquetIndex | None = None  # with --parquet-index
        self._outlinks: WarcWriter | None = None  # with --outlinks
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
        self._open_text()
        if s.text.parquet_index:
            prefix = p.warc_prefix(s.store.warc_prefix)
            repair_index(p.index_dir, prefix, p.crawl_log, p.warc_dir)
            self._index = ParquetIndex(p.index_dir, prefix)

    def _open_text(self) -> None:
        """Repair the newest text file (also without --text: a crawl may have had it),
        and open the text output when it is on."""
        p, s = self._paths, self._settings
        for directory in (p.text_dir, p.outlinks_dir):
            if directory.is_dir():
                newest = _newest(directory)
                _, cut, _ = recover_warc_files([newest] if newest is not None else [])
                if any(cut.values()):
                    log.warning("recovered %s/ after an unclean stop: cut %s", directory.name, cut)
        if s.text.outlinks:
            self._outlinks = WarcWriter(
                p.outlinks_dir,
                prefix="outlinks-" + p.warc_prefix(s.store.warc_prefix),
                max_file_size=s.store.warc_max_size,
                software=f"headway/{__version__}",
                info={"description": "links, canonical, hreflang and meta robots of HTML pages"},
                compress_level=s.store.warc_gzip_level,
            )
        if not s.text.text:
            return
        self._text = WarcWriter(
            p.text_dir,
            prefix=p.text_prefix(s.store.warc_prefix),
            max_file_size=s.store.warc_max_size,
            software=f"headway/{__version__}",
            info={"description": f"text of the HTML pages ({s.text.text_mode})"},
            compress_level=s.store.warc_gzip_level,
        )

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
            text: str | None = None
            if not isinstance(work, SkippedUrl) and digest is not None:
                rec = self._warc.write_exchange(
                    work.result, payloads, digest=digest, not_modified_of=_not_modified_of(work)
                )
                self._crash_point(CrashPoint.WARC_WRITTEN)
                text = self._write_text(work, rec)
                self._write_outlinks(work, rec)
                self._cdxj.append(work.result, rec, _languages(work))
                self._crash_point(CrashPoint.CDXJ_WRITTEN)
            plan = None
            if self._plan_revisit is not None and isinstance(work, FetchedPage):
                plan = self._plan_revisit(work, rec)
            plans.append(plan)
            entry = log_entry(work, note, rec, plan, text, priority=self._index is not None)
            self._log.write(entry)
            if self._index is not None and rec is not None:
                self._index.add(entry, rec.length)
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
        for derived in (self._text, self._outlinks):
            if derived is not None:
                derived.flush(sync=sync)
        if self._index is not None:  # a part is cut only from lines handed to the OS
            self._index.flushed(self._paths.crawl_log.stat().st_size)
        crashpoints.reached(CrashPoint.STORE_FLUSHED)
        return plans

    def _write_outlinks(self, work: Work, rec: WrittenRecord) -> None:
        """The outlinks record of an HTML page answered 200 (not a revisit)."""
        if self._outlinks is None or not isinstance(work, FetchedPage) or rec.revisit:
            return
        parsed, res = work.parsed, work.result
        if parsed is None or parsed.outlinks is None or res.status != 200:
            return
        self._outlinks.write_metadata(
            url=res.url,
            date=warc_date(res.started_at),
            refers_to=rec.record_id,
            payload=outlinks_json(parsed.outlinks),
            content_type="application/json",
        )

    def _write_text(self, work: Work, rec: WrittenRecord) -> str | None:
        """The text record of one page, when it has one to write; what became of its
        text, for the crawl log (None: no text output, or not a page it is for)."""
        if self._text is None or not isinstance(work, FetchedPage) or rec.revisit:
            return None
        parsed, res = work.parsed, work.result
        if parsed is None or parsed.kind != "html" or res.status != 200:
            return None
        use = cast("Use", self._settings.text.text_use)
        if work.signals is not None and reserved(work.signals, use):
            return f"reserved: {use}"  # the site reserves the use this text is for
        if parsed.text_error is not None:
            return parsed.text_error
        if not parsed.text:
            return "empty"
        self._text.write_conversion(
            url=res.url,
            date=warc_date(res.started_at),
            refers_to=rec.record_id,
            text=parsed.text,
            languages=parsed.languages,
        )
        self._crash_point(CrashPoint.TEXT_WRITTEN)
        return "written"

    def _crash_point(self, point: CrashPoint) -> None:
        """Die here if ``point`` is armed, with everything written so far handed to the
        OS first (what a filled buffer could have written): the worst case on disk."""
        if crashpoints.hit(point):
            for w in (self._warc, self._text, self._outlinks, self._cdxj, self._log):
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
        for w in (self._warc, self._text, self._outlinks, self._cdxj, self._log):
            if w is not None:
                w.close()
        if self._index is not None:
            self._index.flushed(self._paths.crawl_log.stat().st_size, final=True)
        if self._cdxj is not None:
            # appended in capture order while running; sorted once here, so replay tools
            # can binary-search it as written
            sort_index(self._paths.cdxj)


def log_entry(
    work: Work,
    note: str | None,
    rec: WrittenRecord | None,
    plan: Revisit | None = None,
    text: str | None = None,
    *,
    priority: bool = False,
) -> CrawlLogEntry:
    """The crawl-log line of one item (``rec``: its WARC record, when written; ``plan``:
        its next revisit, recrawl; ``text``: what became of its text, with --text; ``priority``:
    write the URL's frontier priority, for the Parquet index)."""
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
        languages=_languages(work) or None,
        text=text,
        **_signal_fields(work),
        priority=lease.priority if priority and lease is not None else None,
        sent=round(res.sent_at, 6) if res.sent_at is not None else None,
        delay=round(work.pacing.delay, 6) if work.pacing is not None else None,
        crawl_delay=work.pacing.crawl_delay if work.pacing is not None else None,
        retry_after=work.retry_after if isinstance(work, FetchedPage) else None,
    )


def outlinks_json(found: Outlinks) -> bytes:
    """The outlinks record's payload (docs/outputs.md)."""
    return orjson.dumps(
        {
            "links": [
                {"href": o.href, "url": o.url, "text": o.text, "rel": o.rel} for o in found.links
            ],
            "canonical": found.canonical,
            "hreflang": [{"lang": lang, "url": url} for lang, url in found.hreflang],
            "meta_robots": list(found.meta_robots),
        }
    )


def _signal_fields(work: Work) -> dict[str, str | None]:
    """The crawl log's ``ai_train``, ``ai_input``, ``search`` of an HTML capture (with
    --text; empty otherwise, so the keys are left out)."""
    signals = work.signals if isinstance(work, FetchedPage) else None
    if signals is None:
        return {}
    return {"ai_train": signals.ai_train, "ai_input": signals.ai_input, "search": signals.search}


def _languages(work: Work) -> tuple[str, ...]:
    """The page's languages (ISO 639-3), known with --text."""
    parsed = work.parsed if isinstance(work, FetchedPage) else None
    return parsed.languages if parsed is not None else ()


def _newest(directory: Path) -> Path | None:
    """The file of ``directory`` written last (see ``_newest_warc_glob``)."""
    newest: tuple[int, int, str] | None = None
    for f in directory.glob("*.warc.gz"):
        m = _SERIAL.search(f.name)
        key = (f.stat().st_mtime_ns, int(m.group(1)) if m else -1, f.name)
        if newest is None or key > newest:
            newest = key
    return directory / newest[2] if newest is not None else None


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
