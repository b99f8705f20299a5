"""Admission into the SQLite frontier: the seen check and the budgets, inside the
transaction of ``add`` or ``complete`` (see ``store.py`` for the contract).

A batch is deduplicated, checked against the Bloom filter (a positive is confirmed in
the exact ``seen`` table, so a false positive costs a look-up, never a URL), marked
seen, then fitted into each host's budget and the global ``max_queued``: past either
cap the best entries of old and new are kept and the rest shed, counted by reason.
"""

from __future__ import annotations

from collections.abc import Sequence

from headway.frontier.bloom import BloomFilter
from headway.frontier.sqlite.rows import QUEUED, HostRow, Tx, by_priority, chunks
from headway.frontier.store import (
    SHED_FRONTIER_FULL,
    SHED_HOST_BUDGET,
    SHED_REASONS,
    AddResult,
    FrontierLimits,
    UrlEntry,
)


def admit(
    tx: Tx, bloom: BloomFilter, limits: FrontierLimits, queued: int, entries: Sequence[UrlEntry]
) -> AddResult:
    """Admit ``entries`` in ``tx``; ``queued``: QUEUED URLs before the transaction."""
    unique: dict[int, UrlEntry] = {}
    for e in entries:
        unique.setdefault(e.fp, e)
    dups = len(entries) - len(unique)
    fps = list(unique)
    maybe = [fp for fp, hit in zip(fps, bloom.contains_many(fps), strict=True) if hit]
    for part in chunks(maybe):
        marks = ",".join("?" * len(part))
        for (fp,) in tx.conn.execute(f"SELECT fp FROM seen WHERE fp IN ({marks})", part):
            del unique[fp]
            dups += 1
    # the rest are new unless the filter missed them (it was loaded from a checkpoint
    # older than the table): the table decides, and the filter learns what it missed
    missed: list[int] = []
    for part in chunks(list(unique)):
        marks = ",".join("(?)" for _ in part)
        sql = f"INSERT INTO seen(fp) VALUES {marks} ON CONFLICT DO NOTHING RETURNING fp"
        inserted = {fp for (fp,) in tx.conn.execute(sql, part)}
        missed.extend(fp for fp in part if fp not in inserted)
    for fp in missed:
        del unique[fp]
    dups += len(missed)
    bloom.add_many([*unique, *missed])  # before COMMIT: a rollback only leaves false positives
    shed = dict.fromkeys(SHED_REASONS, 0)
    if not unique:
        return AddResult(0, dups, shed)
    new = list(unique.values())
    tx.totals["seen"] += len(new)
    groups: dict[str, list[UrlEntry]] = {}
    for e in new:
        groups.setdefault(e.host, []).append(e)
    tx.hosts_named(groups, create=True)
    accepted: list[UrlEntry] = []
    evicted = 0
    for name, group in groups.items():
        h = tx.by_name[name]
        room = limits.host_budget - h.admitted
        if len(group) > room:
            where = ("host_id = ? AND ", (h.id,))
            group, _, n = _fit(tx, group, room, where, SHED_HOST_BUDGET, shed)
            evicted += n
        accepted.extend(group)
        h.admitted += len(group)
    room = limits.max_queued - (queued + tx.totals["queued"])
    if len(accepted) > room:
        accepted, dropped, n = _fit(tx, accepted, room, ("", ()), SHED_FRONTIER_FULL, shed)
        evicted += n
        for e in dropped:
            tx.by_name[e.host].admitted -= 1
    rows = []
    for e in accepted:
        h = tx.by_name[e.host]
        h.push(e.not_before)
        rows.append(
            (
                e.fp,
                e.url,
                h.id,
                e.depth,
                e.priority,
                e.via,
                e.attempts,
                e.not_before,
                e.validators,
                e.handler,
            )
        )
    tx.conn.executemany(
        "INSERT INTO urls(fp, url, host_id, depth, priority, via, attempts, state, not_before,"
        f" validators, handler) VALUES (?, ?, ?, ?, ?, ?, ?, {QUEUED}, ?, ?, ?)",
        rows,
    )
    tx.totals["queued"] += len(rows)
    for reason, n in shed.items():
        tx.shed[reason] += n
    return AddResult(len(rows), dups, shed, evicted)


def _fit(
    tx: Tx,
    group: list[UrlEntry],
    room: int,
    where: tuple[str, tuple[int, ...]],
    reason: str,
    shed: dict[str, int],
) -> tuple[list[UrlEntry], list[UrlEntry], int]:
    """Split ``group`` into (kept, shed, evicted count): the best ``room`` entries are
    kept, and each next one evicts the worst queued URL matching ``where`` while it is
    strictly better. Sorted candidates and a worst that only improves make the kept
    set exactly the best of old and new."""
    group.sort(key=by_priority)
    take = max(room, 0)
    kept = group[:take]
    rest = group[take:]
    sql = (
        f"SELECT id, priority, host_id FROM urls WHERE {where[0]}state = {QUEUED}"
        " ORDER BY priority DESC, id DESC LIMIT 1"
    )
    for i, e in enumerate(rest):
        worst = tx.conn.execute(sql, where[1]).fetchone()
        if worst is None or e.priority >= worst[1]:
            shed[reason] += len(rest) - i
            return kept, rest[i:], i
        _evict(tx, worst[0], tx.host(worst[2]))
        shed[reason] += 1
        kept.append(e)
    return kept, [], len(rest)


def _evict(tx: Tx, url_id: int, h: HostRow) -> None:
    tx.conn.execute("DELETE FROM urls WHERE id = ?", (url_id,))
    h.pop()
    h.admitted -= 1
    tx.totals["queued"] -= 1
