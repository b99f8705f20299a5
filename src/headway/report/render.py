"""A ``CrawlReport`` as text, CSV or JSON (pure).

- text: sections for a person (the busiest ``text_hosts`` hosts; the rest counted).
- csv: one table, columns ``section,key,field,value``: one row per figure (e.g.
  ``hosts,www.example.com,fetches,12``), every host and seed included.
- json: one object: ``source``, ``totals``, ``seeds``, ``hosts``, ``mime_types``,
  ``status_codes``, ``frontier``, ``controls``, ``extra``, ``notes``.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import time
from typing import Any

from headway.control.log import describe
from headway.report.build import UNKNOWN, CrawlReport

FORMATS = ("text", "csv", "json")


def _when(t: float | None) -> str:
    return "-" if t is None else time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(t))


def _codes(m: Any) -> str:
    return " ".join(f"{k}:{v}" for k, v in m.items()) or "-"


def to_json(r: CrawlReport) -> dict[str, Any]:
    """The report as one object; without crawl logs (``logs_read`` false) the figures
    that come from them are null, not 0."""
    known = r.logs_read
    return {
        "source": r.source,
        "logs_read": known,
        "totals": {
            "lines": r.lines if known else None,
            "fetches": r.fetches if known else None,
            "bytes": r.bytes if known else None,
            "first_time": r.first_time,
            "last_time": r.last_time,
        },
        "seeds": [dataclasses.asdict(s) for s in r.seeds],
        "hosts": [
            {
                "host": h.host,
                "fetches": h.fetches,
                "bytes": h.bytes,
                "statuses": {str(k): v for k, v in h.statuses.items()},
                "errors": dict(h.errors),
            }
            for h in r.hosts
        ],
        "mime_types": [{"type": m.key, "count": m.count, "bytes": m.bytes} for m in r.mime_types],
        "status_codes": [{"code": c.key, "count": c.count} for c in r.status_codes],
        "frontier": dataclasses.asdict(r.frontier) if r.frontier is not None else None,
        "controls": [c.to_json() for c in r.controls],
        "extra": dict(r.extra),
        "notes": list(r.notes),
        "nodes": [dataclasses.asdict(n) for n in r.nodes],
    }


def render(r: CrawlReport, fmt: str, *, text_hosts: int = 50) -> str:
    """The report in ``fmt`` (one of ``FORMATS``)."""
    if fmt == "json":
        return json.dumps(to_json(r), indent=1, sort_keys=False) + "\n"
    if fmt == "csv":
        return _csv(r)
    return _text(r, text_hosts)


def _csv(r: CrawlReport) -> str:
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["section", "key", "field", "value"])
    for k, v in to_json(r)["totals"].items():
        w.writerow(["totals", "", k, "" if v is None else v])
    for s in r.seeds:
        for f in ("host", "robots", "first_status", "first_outcome", "pages"):
            v = getattr(s, f)
            w.writerow(["seeds", s.seed, f, "" if v is None else v])
    for h in r.hosts:
        w.writerow(["hosts", h.host, "fetches", h.fetches])
        w.writerow(["hosts", h.host, "bytes", h.bytes])
        for status, n in h.statuses.items():
            w.writerow(["hosts", h.host, f"status {status}", n])
        for kind, n in h.errors.items():
            w.writerow(["hosts", h.host, f"error {kind}", n])
    for m in r.mime_types:
        w.writerow(["mime_types", m.key, "count", m.count])
        w.writerow(["mime_types", m.key, "bytes", m.bytes])
    for row in r.status_codes:
        w.writerow(["status_codes", row.key, "count", row.count])
    if r.frontier is not None:
        for k, v in dataclasses.asdict(r.frontier).items():
            if isinstance(v, dict):
                for sub, n in v.items():
                    w.writerow(["frontier", "", f"{k} {sub}", n])
            else:
                w.writerow(["frontier", "", k, v])
    for k, n in r.extra.items():
        w.writerow(["extra", "", k, n])
    for nd in r.nodes:
        for k, v in dataclasses.asdict(nd).items():
            if k != "node":
                w.writerow(["nodes", nd.node, k, v])
    for c in r.controls:
        w.writerow(["controls", c.seq, "kind", c.kind])
        w.writerow(["controls", c.seq, "node", c.node or ""])
        w.writerow(["controls", c.seq, "args", json.dumps(dict(c.args), sort_keys=True)])
        w.writerow(["controls", c.seq, "origin", c.origin])
        w.writerow(["controls", c.seq, "at", c.at])
    for note in r.notes:
        w.writerow(["notes", "", "", note])
    return out.getvalue()


def _table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return [
        "  " + "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]


def _text(r: CrawlReport, text_hosts: int) -> str:
    unknown = "  unknown: no crawl log read (give the nodes' directories with --logs DIR)"
    out = [f"Crawl report: {r.source}"]
    if r.logs_read:
        out.append(
            f"  {r.lines} crawl log lines, {r.fetches} fetches, {r.bytes} bytes,"
            f" {_when(r.first_time)} to {_when(r.last_time)}"
        )
    else:
        out.append("  crawl log lines, fetches, bytes: unknown (no crawl log read)")
    out += [f"  note: {n}" for n in r.notes]
    out += ["", f"Seeds ({len(r.seeds)})"]
    if r.seeds:
        rows = [["seed", "robots.txt", "first fetch", "pages reached"]]
        for s in r.seeds:
            first = (
                s.first_outcome if s.first_status is None else f"{s.first_status} {s.first_outcome}"
            )
            pages = UNKNOWN if s.pages is None else str(s.pages)
            rows.append([s.seed, s.robots, first, pages])
        out += _table(rows)
    shown = r.hosts[:text_hosts]
    more = f", the {len(shown)} busiest shown" if len(r.hosts) > len(shown) else ""
    out += ["", f"Hosts ({len(r.hosts) if r.logs_read else UNKNOWN}{more})"]
    if not r.logs_read:
        out.append(unknown)
    if shown:
        rows = [["host", "fetches", "bytes", "response codes", "errors"]]
        rows += [
            [h.host, str(h.fetches), str(h.bytes), _codes(h.statuses), _codes(h.errors)]
            for h in shown
        ]
        out += _table(rows)
    out += ["", "MIME types"]
    if not r.logs_read:
        out.append(unknown)
    if r.mime_types:
        out += _table(
            [["type", "count", "bytes"]]
            + [[m.key, str(m.count), str(m.bytes)] for m in r.mime_types]
        )
    out += ["", "Response codes"]
    if not r.logs_read:
        out.append(unknown)
    if r.status_codes:
        out += _table([["code", "count"]] + [[c.key, str(c.count)] for c in r.status_codes])
    out += ["", "Frontier"]
    f = r.frontier
    if f is None:
        out.append("  (no frontier)")
    else:
        out.append(
            f"  queued {f.queued}, leased {f.leased}, done {f.done}, failed {f.failed},"
            f" seen {f.seen}, hosts with queued URLs {f.hosts_queued}"
        )
        shed = ", ".join(f"{k} {v}" for k, v in f.shed.items())
        out.append(f"  shed: {shed or 'none'}; parked revisits {f.revisits_parked}")
    for k, n in r.extra.items():
        out.append(f"  {k}: {n}")
    if r.nodes:
        out += ["", f"Live nodes ({len(r.nodes)})"]
        rows = [["node", "heartbeat age", "shards", "fetches", "bytes", "errors", "pages/s"]]
        rows += [
            [
                n.node,
                f"{n.heartbeat_age:.0f} s",
                str(n.shards),
                str(n.fetches),
                str(n.bytes),
                str(n.errors),
                f"{n.pages_per_second:.1f}",
            ]
            for n in r.nodes
        ]
        out += _table(rows)
    out += ["", f"Control log ({len(r.controls)})"]
    out += [f"  {_when(c.at)}  {describe(c)}" for c in r.controls]
    return "\n".join(out) + "\n"
