"""A politeness ``Ledger`` as text or JSON (pure).

- text: a summary table (one row per host: requests, smallest gap and the delay then,
  delays in force, short gaps, robots.txt versions, URLs robots.txt disallowed,
  Crawl-delay and Retry-After waits kept), then per host the robots.txt fetches, the
  URLs they disallowed (at most ``shown`` each; JSON has all) and the Retry-After waits.
- json: one object: ``source``, ``tolerance``, ``estimated``, ``notes``, ``hosts`` (every
  field of every host, times as epoch seconds and as ISO-8601 UTC).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from headway.report.politeness import TOLERANCE, HostLedger, Ledger
from headway.store.crawllog import format_time


def _s(v: float | None, digits: int = 3) -> str:
    return "-" if v is None else f"{v:.{digits}f}"


def _when(t: float | None) -> str:
    if t is None:
        return "-"
    try:
        return format_time(t)
    except (ValueError, OverflowError, OSError):  # a time no calendar holds: as written
        return f"{t:.3f}"


def _range(lo: float | None, hi: float | None) -> str:
    if lo is None or hi is None:
        return "-"
    return _s(lo) if abs(hi - lo) < 1e-9 else f"{_s(lo)}-{_s(hi)}"


def _kept(h: HostLedger) -> tuple[str, str]:
    cd = "-" if h.crawl_delay is None else f"{h.crawl_delay_kept}/{h.crawl_delay_waits}"
    judged = [w for w in h.retry_after if w.kept is not None]
    ra = "-" if not h.retry_after else f"{sum(bool(w.kept) for w in judged)}/{len(judged)}"
    return cd, ra


def to_text(ledger: Ledger, *, shown: int = 20) -> str:
    head = (
        "host",
        "requests",
        "smallest gap s",
        "delay then s",
        "delay s",
        "short gaps",
        "robots.txt",
        "disallowed",
        "Crawl-delay kept",
        "Retry-After kept",
    )
    rows = [head]
    for h in ledger.hosts:
        cd, ra = _kept(h)
        gap = h.smallest_gap
        rows.append(
            (
                h.host,
                str(h.requests),
                _s(gap.seconds if gap else None),
                _s(gap.delay if gap else None),
                _range(h.delay_min, h.delay_max),
                str(h.short_gaps),
                f"{len(h.robots)} fetches, {h.robots_versions} versions",
                str(len(h.skipped)),
                cd if h.crawl_delay is None else f"{cd} ({h.crawl_delay:g} s)",
                ra,
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    out = [f"Politeness ledger: {ledger.source}", ""]
    for r in rows:
        out.append("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
    out.append("")
    out.append(
        f"gaps: between consecutive requests to a host as the crawler sent them; a short gap"
        f" is one under the delay in force, less {TOLERANCE * 1000:.0f} ms"
    )
    for h in ledger.hosts:
        out.extend(_host_text(h, shown))
    for n in ledger.notes:
        out.append(f"note: {n}")
    return "\n".join(out) + "\n"


def _host_text(h: HostLedger, shown: int) -> list[str]:
    out = ["", f"{h.host}: {h.requests} requests, {_when(h.first_sent)} to {_when(h.last_sent)}"]
    if h.smallest_gap is not None:
        g = h.smallest_gap
        out.append(f"  smallest gap {g.seconds:.3f} s: {g.before} -> {g.after}")
    for r in h.robots:
        status = "no answer" if r.status is None else str(r.status)
        out.append(f"  robots.txt {_when(r.time)} {status} {r.digest or '-'} ({r.verdict})")
    for s in h.skipped[:shown]:
        out.append(f"  disallowed {_when(s.time)} {s.url} (robots.txt {s.robots_digest or '-'})")
    if len(h.skipped) > shown:
        out.append(f"  ... {len(h.skipped) - shown} more disallowed URLs (--format json lists all)")
    for w in h.retry_after:
        then = "no later request" if w.waited is None else f"waited {w.waited:.3f} s"
        out.append(f"  Retry-After {w.asked:g} s at {_when(w.answered_at)} ({w.url}): {then}")
    return out


def to_json(ledger: Ledger) -> dict[str, Any]:
    hosts = []
    for h in ledger.hosts:
        row = dataclasses.asdict(h)
        row["robots_versions"] = h.robots_versions
        row["first_sent_iso"] = _when(h.first_sent) if h.first_sent is not None else None
        row["last_sent_iso"] = _when(h.last_sent) if h.last_sent is not None else None
        for r in row["robots"]:
            r["time_iso"] = _when(r["time"])
        for s in row["skipped"]:
            s["time_iso"] = _when(s["time"])
        for w, wait in zip(row["retry_after"], h.retry_after, strict=True):
            w["kept"] = wait.kept
        hosts.append(row)
    return {
        "source": ledger.source,
        "tolerance": TOLERANCE,
        "estimated": ledger.estimated,
        "notes": list(ledger.notes),
        "hosts": hosts,
    }
