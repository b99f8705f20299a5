"""Pages waiting for their revisit set aside and put back (SQLite frontier), for a run
without ``--recrawl`` and the next run with it: each a whole transaction, ``Tx``'s host
counts and totals kept in step (see ``backend.py``)."""

from __future__ import annotations

from headway.frontier.sqlite.rows import PARKED, QUEUED, Tx
from headway.frontier.store import REVISIT_PRIORITY


def park_revisits(tx: Tx) -> int:
    """Move every queued page waiting for its revisit to PARKED (due time and validators
    kept); how many."""
    # a page waiting for its revisit has REVISIT_PRIORITY: read through the queue's
    # priority index, not by a scan of every queued URL
    waiting = (
        f"FROM urls INDEXED BY urls_queue WHERE state = {QUEUED} AND priority = ? AND fetches > 0"
    )
    rows = tx.conn.execute(
        f"SELECT host_id, count(*) {waiting} GROUP BY host_id", (REVISIT_PRIORITY,)
    ).fetchall()
    if not rows:
        return 0
    tx.conn.execute(
        f"UPDATE urls SET state = {PARKED} WHERE id IN (SELECT id {waiting})",
        (REVISIT_PRIORITY,),
    )
    parked = 0
    for host_id, n in rows:
        tx.host(host_id).pop(n)
        parked += n
    tx.totals["queued"] -= parked
    tx.totals["parked"] += parked
    return parked


def unpark_revisits(tx: Tx) -> int:
    """Put every PARKED page back in its host queue with the due time it was parked
    with; how many."""
    rows = tx.conn.execute(
        f"SELECT host_id, not_before FROM urls INDEXED BY urls_parked WHERE state = {PARKED}"
    ).fetchall()
    if not rows:
        return 0
    tx.conn.execute(f"UPDATE urls SET state = {QUEUED} WHERE state = {PARKED}")
    for host_id, not_before in rows:
        tx.host(host_id).push(not_before)
    tx.totals["parked"] -= len(rows)
    tx.totals["queued"] += len(rows)
    return len(rows)
