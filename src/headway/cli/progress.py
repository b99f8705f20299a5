"""Live progress line and the end-of-crawl summary (the CLI's view of ``NodeStats``)."""

from __future__ import annotations

import dataclasses
import json
import logging
import time
from typing import TYPE_CHECKING

from rich.console import Console
from rich.live import Live
from rich.table import Table
from rich.text import Text

from headway.runtime.reach import UNREACHABLE_LISTED

if TYPE_CHECKING:
    from headway.runtime.stats import NodeStats
    from headway.runtime.summary import CrawlSummary
    from headway.settings import Settings

log = logging.getLogger(__name__)

#: Seconds between two updates of the live line on a terminal.
LIVE_EVERY = 0.25
#: Seconds between two log lines of progress when the console is not a terminal.
LOG_EVERY = 10.0


def _size(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"


def _seconds(t: float) -> str:
    return f"{t * 1000:.0f} ms" if t < 1 else f"{t:.1f} s"


def _lag_forms(stats: NodeStats) -> list[str]:
    """The event loop's lag: the worst of the last seconds, and of the run when larger."""
    lag = stats.loop_lag
    recent = _seconds(lag.recent)
    if lag.worst > lag.recent:
        return [f"loop lag {recent} (worst {_seconds(lag.worst)})", f"lag {recent}"]
    return [f"loop lag {recent}", f"lag {recent}"]


def _fields(stats: NodeStats) -> list[list[str]]:
    """The live line's fields, most important first, each with its forms, longest first."""
    f = stats.fetch
    sch = stats.scheduler
    fr = stats.frontier
    queued = fr.queued if fr is not None else 0
    with_urls = fr.hosts_queued if fr is not None else 0
    parked = f", {sch.parked} parked" if sch.parked else ""
    rc = stats.recrawl
    revisits = (
        [
            f"revisits fetched {rc.revisits} (changed {rc.changed} unchanged {rc.unchanged},"
            f" 304 {rc.not_modified})",
            f"revisited {rc.revisits}",
        ]
        if rc.revisits
        else []
    )
    fields = [
        [f"{f.fetches} page{'' if f.fetches == 1 else 's'}"],
        _paused_forms(sch.paused_for) if sch.paused else [],
        [f"{f.pages_per_second:.1f} pages/s", f"{f.pages_per_second:.1f}/s"],
        [f"{queued} URLs queued", f"{queued} queued"],
        [
            f"hosts: {with_urls} with URLs, {sch.waiting} waiting for their turn{parked}",
            f"hosts {with_urls} with URLs, {sch.waiting} waiting{parked}",
            f"{with_urls} hosts, {sch.waiting} waiting",
        ],
        [f"errors {f.errors}", f"err {f.errors}"],
        [f"retries {f.retry_ratio:.0%}"],
        _lag_forms(stats),
        revisits,
        [_size(f.bytes)],
        [
            "  ".join(f"{s.name} {s.depth}/{s.capacity}" for s in stats.stages),
            "stages " + " ".join(f"{s.depth}/{s.capacity}" for s in stats.stages),
        ],
    ]
    return [forms for forms in fields if forms]


def fit_fields(fields: list[list[str]], width: int | None, sep: str = "  ") -> str:
    """The fields joined by ``sep`` in at most ``width`` characters (None: no limit).
    Each field lists its forms, longest first. Until the line fits, fields take their
    shorter forms, the least important (last) first; then the least important are left
    out; the first field is always kept (cut short if need be)."""
    chosen = [0] * len(fields)
    kept = len(fields)

    def line() -> str:
        return sep.join(fields[i][chosen[i]] for i in range(kept))

    def fits() -> bool:
        return width is None or len(line()) <= width

    for i in reversed(range(len(fields))):
        while not fits() and chosen[i] + 1 < len(fields[i]):
            chosen[i] += 1
    while not fits() and kept > 1:
        kept -= 1
    text = line()
    if width is not None and len(text) > width:
        text = text[: max(width - 1, 0)] + "…"
    return text


#: What lifts each pause, in the live line's words.
_RESUMES = {"control": "headway resume continues", "quota": "SIGUSR1 resumes"}


def _paused_forms(reasons: tuple[str, ...]) -> list[str]:
    """The live line's PAUSED field: why, and what resumes it."""
    known = [r for r in reasons if r in _RESUMES]
    if not known:
        return ["PAUSED"]
    if known == ["control"]:
        return ["PAUSED (headway resume continues)", "PAUSED"]
    why = ", ".join(known)
    how = " and ".join(_RESUMES[r] for r in known)
    return [f"PAUSED ({why}): {how}", "PAUSED"]


def progress_text(stats: NodeStats, width: int | None = None) -> str:
    """The live line: pages, rate, queued URLs, hosts with queued URLs and hosts
    waiting for their politeness gap, errors, retries, the event loop's lag, bytes and
    the fill of each stage, fitted into ``width`` characters (None: all of it)."""
    return fit_fields(_fields(stats), width)


class Progress:
    """A live line on a terminal (``console``, default stderr), never wider than the
    terminal, with up to three throttled hosts under it; a log line every 10 s when the
    console is not a terminal."""

    def __init__(self, enabled: bool, console: Console | None = None) -> None:
        self.enabled = enabled
        self._console = console if console is not None else Console(stderr=True)
        self._tty = self._console.is_terminal
        self._live: Live | None = None
        self._last_log = 0.0
        self.shown = Text("")  # what the live display shows

    @property
    def interval(self) -> float | None:
        """Seconds between the readings this display needs (None: it needs none)."""
        if not self.enabled:
            return None
        return LIVE_EVERY if self._tty else LOG_EVERY

    def start(self) -> None:
        if self.enabled and self._tty:
            self._live = Live(
                Text("starting..."),
                console=self._console,
                refresh_per_second=4,
                transient=True,
            )
            self._live.start()

    def update(self, stats: NodeStats) -> None:
        if not self.enabled:
            return
        if self._live is not None:
            width = max(self._live.console.width - 1, 20)
            throttled = [h for h in stats.scheduler.throttled if h.gap > 0][:3]
            lines = [progress_text(stats, width)]
            for h in throttled:
                row = [
                    [f"  {h.host}:"],
                    [f"gap {h.gap:.1f}s"],
                    [f"limit {h.limit:.1f}"],
                    [f"retry {h.retry_ratio:.0%}"],
                    [f"health {h.health:.2f}"],
                ]
                lines.append(fit_fields(row, width, sep=" "))
            self.shown = Text("\n".join(lines), no_wrap=True, overflow="ellipsis")
            self._live.update(self.shown)
        elif time.monotonic() - self._last_log >= LOG_EVERY:
            self._last_log = time.monotonic()
            log.info("%s", progress_text(stats))

    def stop(self) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None


def _recrawl_row(summary: CrawlSummary) -> str:
    """What the recrawl did this run, and what waits for a revisit."""
    fr, rc = summary.frontier, summary.recrawl
    if rc is None:
        waiting = fr.revisits_parked
        if waiting:
            return f"off; {waiting} pages wait for their revisit (--recrawl continues them)"
        return "off"
    return (
        f"{rc.revisits} revisits fetched this run: {rc.changed} changed, {rc.unchanged} "
        f"unchanged ({rc.not_modified} of them 304 Not Modified); {rc.scheduled} pages given "
        "their next due time"
    )


def _failed_text(summary: CrawlSummary, settings: Settings) -> str:
    """The frontier's failed URLs, robots-disallowed ones apart where they can be told
    apart: the frontier counts them as failed over the whole crawl, the node only this
    run's, so they are subtracted only for a first run on the embedded store."""
    failed, disallowed = summary.frontier.failed, summary.robots_disallowed
    if not disallowed:
        return f"failed {failed}"
    if summary.resumed or settings.frontier.store:
        return f"failed {failed} (robots-disallowed ones included)"
    return f"failed {max(failed - disallowed, 0)}, robots-disallowed {disallowed}"


def summary_json(summary: CrawlSummary, settings: Settings) -> str:
    """The summary as one JSON line (``--log-format json``): every field of
    ``CrawlSummary``, and the crawl directory."""
    body = dataclasses.asdict(summary)
    body["crawl_directory"] = str(settings.crawl.out)
    line = {"time": time.time(), "level": "INFO", "message": "crawl summary", "summary": body}
    return json.dumps(line, separators=(",", ":"))


def _unreachable_row(summary: CrawlSummary) -> str:
    """The hosts no request of this run reached, each with why (the first listed)."""
    hosts = summary.unreachable
    shown = [f"{u.host} ({u.reason.split(';')[0]})" for u in hosts[:UNREACHABLE_LISTED]]
    more = f"; and {len(hosts) - len(shown)} more" if len(hosts) > len(shown) else ""
    return f"{len(hosts)}: " + "; ".join(shown) + more


def print_summary(summary: CrawlSummary, settings: Settings, quiet: bool) -> None:
    if settings.output.log_format == "json":
        print(summary_json(summary, settings), flush=True)
        return
    console = Console(stderr=False)
    fr = summary.frontier
    ended = str(summary.stopped_by)
    if summary.seeds_unreached:
        ended += " (no host of the seeds could be reached)"
    rows = [
        ("stopped by", ended + (" (resumed crawl)" if summary.resumed else "")),
        ("crawl directory", str(settings.crawl.out)),
        (
            "pages fetched (this run)",
            str(summary.fetches)
            + (
                f" ({summary.requeued_at_stop} of them not parsed at the stop: kept in the "
                "WARC files and queued again, fetched again by the next run)"
                if summary.requeued_at_stop
                else ""
            ),
        ),
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
            f"queued {fr.queued}, done {fr.done}, {_failed_text(summary, settings)}, "
            + (f"parked for a revisit {fr.revisits_parked}, " if fr.revisits_parked else "")
            + f"seen {fr.seen}, hosts queued {fr.hosts_queued}",
        ),
        (
            "robots-disallowed",
            f"{summary.robots_disallowed} URLs not fetched this run: robots.txt disallows them"
            if summary.robots_disallowed
            else "none",
        ),
        ("shed", ", ".join(f"{k} {v}" for k, v in sorted(fr.shed.items()) if v) or "none"),
        (
            "dropped by exclusions",
            f"{summary.excluded_dropped} queued URLs (--exclude, exclude controls)"
            if summary.excluded_dropped
            else "none",
        ),
        (
            "dropped by opt-out",
            f"{summary.optout_dropped} queued URLs (opt-out controls)"
            if summary.optout_dropped
            else "none",
        ),
        (
            "not admitted",
            ", ".join(f"{k} {v}" for k, v in sorted(summary.admission_rejected.items())) or "none",
        ),
        (
            "WARC",
            f"{summary.warc_files} file(s) written this run, {summary.revisits} revisit "
            "records (payload already stored, or 304)",
        ),
        ("recrawl", _recrawl_row(summary)),
        ("peak RSS", f"{summary.peak_rss_mib:.0f} MiB"),
    ]
    if summary.unreachable:
        rows.insert(5, ("unreachable hosts", _unreachable_row(summary)))
    if quiet:
        console.print(
            f"headway: {ended}: {summary.fetches} "
            f"page{'' if summary.fetches == 1 else 's'} in "
            f"{summary.seconds:.1f}s, queued {fr.queued}, {_failed_text(summary, settings)}"
            + (
                f", {fr.revisits_parked} waiting for a revisit (--recrawl)"
                if fr.revisits_parked
                else ""
            )
            + (
                f", {summary.requeued_at_stop} not parsed at the stop and queued again"
                if summary.requeued_at_stop
                else ""
            )
            + (f", unreachable hosts {_unreachable_row(summary)}" if summary.unreachable else "")
            + (
                f", {summary.optout_dropped} dropped by opt-out controls"
                if summary.optout_dropped
                else ""
            )
        )
        return
    table = Table(title="headway crawl summary", show_header=False)
    table.add_column(style="bold")
    table.add_column()
    for k, v in rows:
        table.add_row(k, v)
    console.print(table)
