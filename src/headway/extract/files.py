"""The text output of one existing WARC file (``headway extract``).

Contract of ``extract_file(job)``:

- Reads every record of ``job.source`` (``.warc`` or ``.warc.gz``, written by any tool)
  with warcio; for each ``response`` record of an HTTP 200 with an HTML body, the body
  (transfer and content encodings removed) is parsed as the crawl's parser processes do
  (``parse_page`` with the text mode) and its AI-use signals are read from its headers
  (``tdm-reservation``, ``X-Robots-Tag``) and its meta tags; robots.txt Content-Signal
  is not known here (the WARC file may hold no robots.txt) and counts as unsaid.
- Writes the ``conversion`` records (``WARC-Refers-To`` the response record's id,
  ``WARC-Date`` and ``WARC-Target-URI`` its own) to ``<out>/text-<source name>.warc.gz``
  (and with ``index`` the rows of every response and revisit record to
  ``<out>/index/<source name>.parquet``): written aside and renamed when the file is
  done, so a file whose output exists is skipped (``resumable``) and an interrupted run
  leaves nothing half-written under the final names.
- Never raises for a bad record: a file that cannot be read at all gives a result with
  ``error`` set; pages whose text is held back by their signals are counted.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from warcio.archiveiterator import ArchiveIterator

from headway import __version__
from headway.parse.page import is_html, parse_page
from headway.parse.text import TextMode
from headway.policy.aiuse import NO_SIGNALS, AiSignals, Use, page_signals, reserved
from headway.store.crawllog import CrawlLogEntry
from headway.store.warc import WarcWriter

__all__ = ["ExtractJob", "ExtractResult", "extract_file", "output_of"]

#: Bytes of a body parsed, as the crawl's default ``max_parsed``.
MAX_PARSED = 1024 * 1024


@dataclass(frozen=True, slots=True)
class ExtractJob:
    source: Path
    out: Path
    mode: str = "main"
    use: str = "ai-train"
    index: bool = False


@dataclass(frozen=True, slots=True)
class ExtractResult:
    source: Path
    records: int = 0  # response records read
    written: int = 0  # text records written
    reserved: int = 0  # pages whose signals hold their text back
    rows: int = 0  # index rows
    skipped: bool = False  # its output was there already
    error: str | None = None


def _stem(source: Path) -> str:
    name = source.name
    for suffix in (".gz", ".warc"):
        name = name.removesuffix(suffix)
    return name


def output_of(job: ExtractJob) -> Path:
    """The text file ``job`` writes."""
    return job.out / f"text-{_stem(job.source)}.warc.gz"


def _entry(url: str, rec: Any, date: float, status: int | None, page: _Page) -> CrawlLogEntry:
    http = rec.http_headers
    return CrawlLogEntry(
        time=date,
        url=url,
        status=status,
        outcome="ok" if status is not None else "unknown",
        bytes=0,
        content_type=http.get_header("Content-Type") if http is not None else None,
        digest=rec.rec_headers.get_header("WARC-Payload-Digest"),
        duration=0.0,
        depth=0,
        outlinks=0,
        truncated=rec.rec_headers.get_header("WARC-Truncated"),
        error=None,
        revisit=rec.rec_type == "revisit",
        warc_file=None,
        languages=page.languages or None,
        ai_train=page.signals.ai_train,
        ai_input=page.signals.ai_input,
        search=page.signals.search,
    )


@dataclass(frozen=True, slots=True)
class _Page:
    """What the index row of a record takes from its page (nothing for other records)."""

    languages: tuple[str, ...] = ()
    signals: AiSignals = NO_SIGNALS


def _epoch(date: str | None) -> float:
    if not date:
        return 0.0
    from datetime import datetime

    try:
        return datetime.fromisoformat(date.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return 0.0


def extract_file(job: ExtractJob) -> ExtractResult:
    """The text (and index) of one WARC file (see the module contract)."""
    target = output_of(job)
    index_path = job.out / "index" / f"{_stem(job.source)}.parquet"
    if target.exists() and (not job.index or index_path.exists()):
        return ExtractResult(job.source, skipped=True)
    work = job.out / f".extract-{_stem(job.source)}-{os.getpid()}"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    try:
        return _extract(job, work, target, index_path)
    except Exception as exc:  # a file we cannot read is a result, not a crash
        return ExtractResult(job.source, error=str(exc) or type(exc).__name__)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _extract(job: ExtractJob, work: Path, target: Path, index_path: Path) -> ExtractResult:
    writer = WarcWriter(
        work,
        prefix="text",
        max_file_size=1 << 62,
        software=f"headway/{__version__}",
        info={"description": f"text of the HTML pages of {job.source.name} ({job.mode})"},
    )
    with open(job.source, "rb") as head:
        first = head.read(5)
    if first[:2] != b"\x1f\x8b" and first != b"WARC/":
        raise ValueError("not a WARC file (neither gzip nor WARC/ at its start)")
    mode, use = cast(TextMode, job.mode), cast(Use, job.use)
    rows: list[dict[str, Any]] = []
    records = written = held = 0
    with open(job.source, "rb") as f:
        it = ArchiveIterator(f)
        for rec in it:
            if rec.rec_type not in ("response", "revisit"):
                continue
            url = rec.rec_headers.get_header("WARC-Target-URI") or ""
            http = rec.http_headers
            status = (
                int(http.get_statuscode())
                if http is not None and http.get_statuscode().isdigit()
                else None
            )
            date = rec.rec_headers.get_header("WARC-Date") or ""
            found = _Page()
            if rec.rec_type == "response" and http is not None:
                records += 1
                ctype = http.get_header("Content-Type")
                body = rec.content_stream().read(MAX_PARSED)
                if status == 200 and is_html(ctype, body[:1024]):
                    page = parse_page(
                        url,
                        body,
                        content_type=ctype,
                        x_robots_tag=http.get_header("X-Robots-Tag"),
                        text_mode=mode,
                    )
                    signals = page_signals(
                        page, tdm_header=http.get_header("tdm-reservation"), content_signal=None
                    )
                    found = _Page(page.languages, signals)
                    if reserved(signals, use):
                        held += 1
                    elif page.text:
                        writer.write_conversion(
                            url=url,
                            date=date,
                            refers_to=rec.rec_headers.get_header("WARC-Record-ID") or "",
                            text=page.text,
                            languages=page.languages,
                        )
                        written += 1
            if job.index:
                rows.append(_row(job, rec, it, url, date, status, found))
    writer.close()
    made = sorted(work.glob("*.warc.gz"))
    if made:
        os.replace(made[0], target)
    else:
        _empty_warc(target)
    if job.index:
        from headway.store.parquetindex import write_rows

        index_path.parent.mkdir(parents=True, exist_ok=True)
        write_rows(index_path, rows)
    return ExtractResult(job.source, records, written, held, len(rows))


def _row(
    job: ExtractJob,
    rec: Any,
    it: Any,
    url: str,
    date: str,
    status: int | None,
    page: _Page,
) -> dict[str, Any]:
    from headway.store.parquetindex import row_of

    it.read_to_end(rec)
    entry = _entry(url, rec, _epoch(date), status, page)
    row = row_of(entry, int(it.get_record_length()))
    row["warc_filename"] = job.source.name  # the file read, beside which the index is
    row["warc_record_offset"] = int(it.get_record_offset())
    for key in ("depth", "outcome", "priority"):
        row[key] = None  # not known outside a crawl
    return row


def _empty_warc(target: Path) -> None:
    """An input without HTML pages still gets its (empty) output: it is done."""
    target.write_bytes(b"")
