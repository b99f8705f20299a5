"""Settling leased URLs in the SQLite frontier: each completion of a URL this frontier
has LEASED becomes its next state (DONE, FAILED, QUEUED for a retry or a requeue, or
QUEUED for its revisit), with ``Tx``'s host counts and totals kept in step (see
``backend.py``). A completion of a URL not leased (settled already, reclaimed) is
ignored."""

from __future__ import annotations

from collections.abc import Mapping

from headway.frontier.sqlite.rows import DONE, FAILED, LEASED, QUEUED, Tx, chunks
from headway.frontier.store import REVISIT_PRIORITY, Completion, Settle


def settle(tx: Tx, wanted: Mapping[int, Completion]) -> None:
    """Settle in ``tx`` each leased URL of ``wanted`` (URL id -> its completion)."""
    ids = list(wanted)
    for part in chunks(ids):
        marks = ",".join("?" * len(part))
        rows = tx.conn.execute(
            f"SELECT id, host_id FROM urls WHERE state = {LEASED} AND id IN ({marks})", part
        ).fetchall()
        for url_id, host_id in rows:
            c = wanted[url_id]
            tx.totals["leased"] -= 1
            if c.settle is Settle.DONE and c.revisit_at is not None:
                tx.conn.execute(
                    f"UPDATE urls SET state = {QUEUED}, attempts = 0, not_before = ?,"
                    " lease_expires = NULL, owner = NULL, fetches = fetches + 1,"
                    " priority = ?, validators = coalesce(?, validators) WHERE id = ?",
                    (c.revisit_at, REVISIT_PRIORITY, c.validators, url_id),
                )
                tx.host(host_id).push(c.revisit_at)
                tx.totals["queued"] += 1
                tx.totals["fetched"] += 1
            elif c.settle is Settle.RETRY or c.settle is Settle.REQUEUE:
                bump = 1 if c.settle is Settle.RETRY else 0
                tx.conn.execute(
                    f"UPDATE urls SET state = {QUEUED}, attempts = attempts + ?,"
                    " not_before = ?, lease_expires = NULL, owner = NULL WHERE id = ?",
                    (bump, c.not_before, url_id),
                )
                tx.host(host_id).push(c.not_before)
                tx.totals["queued"] += 1
            else:
                final = DONE if c.settle is Settle.DONE else FAILED
                tx.conn.execute(
                    "UPDATE urls SET state = ?, lease_expires = NULL, owner = NULL,"
                    " fetches = fetches + ?, validators = coalesce(?, validators)"
                    " WHERE id = ?",
                    (final, int(final == DONE), c.validators, url_id),
                )
                tx.totals["done" if final == DONE else "failed"] += 1
                tx.totals["fetched"] += int(final == DONE)
