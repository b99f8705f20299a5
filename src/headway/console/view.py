"""The crawl as the page shows it, combined from the snapshots of its nodes (pure).

Contract: ``crawl_view(snapshots, frontier=..., beats=..., now=...)`` takes the latest
snapshot of each node (``snapshot.py``'s JSON, of any version: what is missing reads as
empty) and returns the JSON of ``/api/state`` without its ``controls`` part:

- ``now``: the crawl's figures: pages fetched over the crawl, pages/s, bytes, errors by
  kind, retry ratio, the frontier's counts, per-stage fill and blocked puts, paused;
- ``nodes``: one row per node (rate, CPU, memory, shards held, heartbeat age, state);
- ``history``: the nodes' points summed per ``HISTORY_STEP`` slot;
- ``hosts``, ``seeds``, ``problems``, ``host_problems``: merged over the nodes, bounded
  as in a snapshot.

``frontier`` (a shared crawl's counts read from the store) replaces a node's own;
``beats`` gives each node's last heartbeat (else the snapshot's time is used).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from headway.runtime.book import HISTORY_STEP, PROBLEMS
from headway.runtime.snapshot import top_lists

#: Seconds after which a snapshot that says ``running`` is shown as not answering.
STALE_AFTER = 15.0


def _num(obj: Mapping[str, Any], key: str) -> float:
    v = obj.get(key)
    return float(v) if isinstance(v, int | float) and math.isfinite(v) else 0.0


def _int(obj: Mapping[str, Any], key: str) -> int:
    v = obj.get(key)
    return int(v) if isinstance(v, int | float) and math.isfinite(v) else 0


def _dict(obj: Mapping[str, Any], key: str) -> dict[str, Any]:
    v = obj.get(key)
    return dict(v) if isinstance(v, Mapping) else {}


def _list(obj: Mapping[str, Any], key: str) -> list[Any]:
    v = obj.get(key)
    return list(v) if isinstance(v, list) else []


def node_row(snap: Mapping[str, Any], beat: float | None, now: float) -> dict[str, Any]:
    stats = _dict(snap, "stats")
    proc = _dict(snap, "process")
    at = beat if beat is not None else _num(snap, "time")
    running = bool(snap.get("running"))
    age = max(0.0, now - at) if at else None
    if running and age is not None and age > STALE_AFTER:
        state = "not answering"
    elif running:
        state = "paused" if stats.get("paused") else "running"
    else:
        state = f"stopped ({snap.get('stopped_by') or 'unknown'})"
    stages = [s for s in _list(stats, "stages") if isinstance(s, Mapping)]
    return {
        "node": str(snap.get("node", "")),
        "state": state,
        "running": running and state != "not answering",
        "paused": bool(stats.get("paused")),
        "pages_per_second": round(_num(stats, "pages_per_second"), 2),
        "fetches": _int(stats, "fetches"),
        "errors": _int(stats, "errors"),
        "in_flight": _int(stats, "in_flight"),
        "cpu_share": proc.get("cpu_share"),
        "rss_mib": proc.get("rss_mib"),
        "shards_held": proc.get("shards_held"),
        "heartbeat_age": round(age, 1) if age is not None else None,
        "stages": [
            {
                "name": str(s.get("name", "")),
                "depth": _int(s, "depth"),
                "capacity": _int(s, "capacity"),
                "blocked_puts": _int(s, "blocked_puts"),
            }
            for s in stages
        ],
    }


def _sum_counts(dicts: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for d in dicts:
        for k, v in d.items():
            if isinstance(v, int) and not isinstance(v, bool):
                out[str(k)] = out.get(str(k), 0) + v
    return out


def _history(snaps: Sequence[Mapping[str, Any]]) -> list[list[float | int]]:
    """Points of every node summed per slot (queued: the largest, as each node of a
    shared crawl reports the crawl's own count)."""
    slots: dict[int, list[float]] = {}
    for snap in snaps:
        for row in _list(snap, "history"):
            if not (isinstance(row, list) and len(row) == 4):
                continue
            try:
                at, pps, queued, errors = (float(x) for x in row)
            except (TypeError, ValueError):
                continue
            key = int(at // HISTORY_STEP)
            cur = slots.setdefault(key, [key * HISTORY_STEP, 0.0, 0.0, 0.0])
            cur[1] += pps
            cur[2] = max(cur[2], queued)
            cur[3] += errors
    return [[p[0], round(p[1], 3), int(p[2]), int(p[3])] for _, p in sorted(slots.items())]


def _seeds(snaps: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    rows: dict[str, dict[str, Any]] = {}
    total = 0
    for snap in snaps:
        seeds = _dict(snap, "seeds")
        total = max(total, _int(seeds, "total"))
        for r in _list(seeds, "rows"):
            if not isinstance(r, Mapping):
                continue
            url = str(r.get("url", ""))
            have = rows.get(url)
            if have is None or (not have.get("first_fetch") and r.get("first_fetch")):
                rows[url] = dict(r)
            elif r.get("host_pages"):
                have["host_pages"] = max(_int(have, "host_pages"), _int(r, "host_pages"))
    return {"total": total, "rows": list(rows.values())}


def _problems(snaps: Sequence[Mapping[str, Any]], key: str) -> list[dict[str, Any]]:
    """The nodes' problems under ``key``, newest first, at most ``PROBLEMS``."""
    out = [dict(p) for sn in snaps for p in _list(sn, key) if isinstance(p, Mapping)]
    out.sort(key=lambda p: -_num(p, "at"))
    return out[:PROBLEMS]


def crawl_view(
    snapshots: Sequence[Mapping[str, Any]],
    *,
    frontier: Mapping[str, Any] | None = None,
    beats: Mapping[str, float] | None = None,
    now: float,
    where: str = "",
) -> dict[str, Any]:
    """The page's JSON for the crawl (see the module docstring)."""
    snaps = [s for s in snapshots if isinstance(s, Mapping)]
    beats = beats or {}
    nodes = [node_row(s, beats.get(str(s.get("node", ""))), now) for s in snaps]
    stats = [_dict(s, "stats") for s in snaps]
    fr = dict(frontier) if frontier is not None else {}
    if not fr and stats:
        fr = _dict(stats[0], "frontier")
        fr["shed"] = _dict(stats[0], "shed")
    requests = sum(_int(s, "requests") for s in stats)
    retries = sum(_int(s, "retries") for s in stats)
    stages: dict[str, dict[str, int]] = {}
    for s in stats:
        for st in _list(s, "stages"):
            if isinstance(st, Mapping):
                cur = stages.setdefault(
                    str(st.get("name", "")), {"depth": 0, "capacity": 0, "blocked_puts": 0}
                )
                for k in cur:
                    cur[k] += _int(st, k)
    running = [n for n in nodes if n["running"]]
    queued = _int(fr, "queued")
    leased = _int(fr, "leased")
    if running:
        state = "paused" if all(n["paused"] for n in running) else "running"
    elif not snaps:
        state = "no node has reported yet"
    elif queued == 0 and leased == 0 and fr:
        state = "finished"
    else:
        reasons = sorted({str(s.get("stopped_by") or "") for s in snaps} - {""})
        state = "stopped" + (f" ({', '.join(reasons)})" if reasons else "")
    rows: list[dict[str, Any]] = []
    known = 0
    for snap in snaps:
        hosts = _dict(snap, "hosts")
        known += _int(hosts, "known")
        seen: set[str] = set()
        for name in ("busiest", "slowest", "failing"):
            for r in _list(hosts, name):
                if isinstance(r, Mapping) and r.get("host") not in seen:
                    seen.add(str(r.get("host")))
                    rows.append(dict(r))
    problems = _problems(snaps, "problems")
    host_problems = _problems(snaps, "host_problems")
    return {
        "where": where,
        "time": now,
        "state": state,
        "host_budget": max((_int(s, "host_budget") for s in snaps), default=0),
        "now": {
            "pages": _int(fr, "fetched") or _int(fr, "done"),
            "fetches": sum(_int(s, "fetches") for s in stats),
            "pages_per_second": round(sum(n["pages_per_second"] for n in running), 2),
            "bytes": sum(_int(s, "bytes") for s in stats),
            "bytes_per_second": round(sum(_num(s, "bytes_per_second") for s in stats), 1),
            "errors": sum(_int(s, "errors") for s in stats),
            "outcomes": _sum_counts([_dict(s, "outcomes") for s in stats]),
            "retry_ratio": round(retries / requests, 4) if requests else 0.0,
            "in_flight": sum(_int(s, "in_flight") for s in stats),
            "frontier": {
                "queued": queued,
                "leased": leased,
                "done": _int(fr, "done"),
                "failed": _int(fr, "failed"),
                "seen": _int(fr, "seen"),
                "parked": _int(fr, "revisits_parked"),
                "shed": _dict(fr, "shed"),
            },
            "stages": [{"name": k, **v} for k, v in stages.items()],
            "paused": bool(running) and all(n["paused"] for n in running),
        },
        "nodes": nodes,
        "history": _history(snaps),
        "hosts": {"known": known, **top_lists(rows)},
        "seeds": _seeds(snaps),
        "problems": problems,
        "host_problems": host_problems,
    }
