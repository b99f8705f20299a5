"""Live progress line and the end-of-crawl summary (the CLI's view of ``NodeStats``)."""

from __future__ import annotations

import logging
import sys
import time
from typing import TYPE_CHECKING

from rich.console import Console
from rich.live import Live
from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:
    from headway.runtime.stats import NodeStats
    from headway.runtime.summary import CrawlSummary
    from headway.settings import Settings

log = logging.getLogger(__name__)


def _size(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"


def progress_text(stats: NodeStats) -> str:
    f = stats.fetch
    hosts = stats.scheduler
    queued = stats.frontier.queued if stats.frontier is not None else 0
    stages = " ".join(f"{s.name}={s.depth}/{s.capacity}" for s in stats.stages)
    line = (
        f"{f.fetches} pages  {f.pages_per_second:.1f}/s  "
        f"{_size(f.bytes)}  hosts active {hosts.active} ready {hosts.ready}"
        f" parked {hosts.parked}  queued {queued}  errors {f.errors}"
        f"  retry {f.retry_ratio:.0%}  [{stages}]"
    )
    rc = stats.recrawl
    if rc.revisits:
        line += (
            f"  revisits {rc.revisits} (changed {rc.changed} unchanged {rc.unchanged},"
            f" 304 {rc.not_modified})"
        )
    if hosts.paused:
        line += "  PAUSED (quota)"
    return line


class Progress:
    """A one-line live display on a terminal; a log line every 10 s otherwise."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self._tty = sys.stderr.isatty()
        self._live: Live | None = None
        self._last_log = 0.0

    def start(self) -> None:
        if self.enabled and self._tty:
            self._live = Live(
                Text("starting..."),
                console=Console(stderr=True),
                refresh_per_second=4,
                transient=True,
            )
            self._live.start()

    def update(self, stats: NodeStats) -> None:
        if not self.enabled:
            return
        if self._live is not None:
            throttled = [h for h in stats.scheduler.throttled if h.gap > 0][:3]
            text = Text(progress_text(stats))
            for h in throttled:
                text.append(
                    f"\n  {h.host}: gap {h.gap:.1f}s limit {h.limit:.1f}"
                    f" retry {h.retry_ratio:.0%} health {h.health:.2f}"
                )
            self._live.update(text)
        elif time.monotonic() - self._last_log >= 10:
            self._last_log = time.monotonic()
            log.info("%s", progress_text(stats))

    def stop(self) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None


def print_summary(summary: CrawlSummary, settings: Settings, quiet: bool) -> None:
    console = Console(stderr=False)
    fr = summary.frontier
    rows = [
        ("stopped by", summary.stopped_by + (" (resumed crawl)" if summary.resumed else "")),
        ("crawl directory", str(settings.crawl.out)),
        ("pages fetched (this run)", str(summary.fetches)),
        ("requests incl. robots.txt", str(summary.requests)),
        ("bytes received", _size(summary.bytes)),
        (
            "time",
            f"{summary.seconds:.1f} s ({summary.fetches / max(summary.seconds, 1e-9):.1f} pages/s)",
        ),
        ("CPU time (node + parsers)", f"{summary.cpu_seconds:.1f} s"),
        ("outcomes", ", ".join(f"{k} {v}" for k, v in sorted(summary.outcomes.items())) or "-"),
        (
            "frontier",
            f"queued {fr.queued}, done {fr.done}, failed {fr.failed}, "
            f"seen {fr.seen}, hosts queued {fr.hosts_queued}",
        ),
        ("shed", ", ".join(f"{k} {v}" for k, v in sorted(fr.shed.items()) if v) or "none"),
        (
            "not admitted",
            ", ".join(f"{k} {v}" for k, v in sorted(summary.admission_rejected.items())) or "none",
        ),
        ("WARC", f"{summary.warc_files} file(s) written this run, {summary.revisits} revisits"),
        (
            "recrawl",
            f"revisits {summary.recrawl.revisits}: changed {summary.recrawl.changed}, "
            f"unchanged {summary.recrawl.unchanged} (304 not modified "
            f"{summary.recrawl.not_modified})"
            if summary.recrawl is not None
            else "off",
        ),
        ("peak RSS", f"{summary.peak_rss_mib:.0f} MiB"),
    ]
    if quiet:
        console.print(
            f"headway: {summary.stopped_by}: {summary.fetches} pages in "
            f"{summary.seconds:.1f}s, queued {fr.queued}, failed {fr.failed}"
        )
        return
    table = Table(title="headway crawl summary", show_header=False)
    table.add_column(style="bold")
    table.add_column()
    for k, v in rows:
        table.add_row(k, v)
    console.print(table)
