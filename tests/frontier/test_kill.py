"""Crash safety: a writer killed with SIGKILL loses no URL whose add() returned."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from headway.frontier.sqlite import SqliteFrontier
from headway.frontier.store import FrontierLimits
from tests.frontier.conftest import entry

BATCH = 200

WRITER = f"""
import sys
from pathlib import Path
from headway.frontier.sqlite import SqliteFrontier
from headway.frontier.store import FrontierLimits
from tests.frontier.conftest import entry

store = SqliteFrontier(Path(sys.argv[1]), FrontierLimits(bloom_capacity=100_000), node_id="n")
batch = 0
while True:
    store.add([entry(f"http://h{{i % 37}}.test/{{batch}}/{{i}}", i % 5)
               for i in range({BATCH})], now=batch)
    if batch % 3 == 2:
        (u, *_) = store.lease_many([("h1.test", 2)], now=batch, lease_seconds=5)
    batch += 1
    sys.stdout.write(f"{{batch}}\\n")
    sys.stdout.flush()
"""


def test_sigkill_mid_write_loses_no_returned_batch(tmp_path: Path) -> None:
    db = tmp_path / "frontier.db"
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root)}
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(db)],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        cwd=root,
    )
    assert proc.stdout is not None
    deadline = time.monotonic() + 15
    done = 0
    while done < 25 and time.monotonic() < deadline:
        line = proc.stdout.readline()
        assert line, "writer exited early"
        done = int(line)
    time.sleep(0.05)  # let it be inside a later transaction when killed
    proc.send_signal(signal.SIGKILL)
    rest = proc.stdout.read()
    proc.wait(timeout=10)
    if rest.split():
        done = int(rest.split()[-1])
    assert done >= 25

    with sqlite3.connect(db) as raw:
        assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        by_state = dict(raw.execute("SELECT state, count(*) FROM urls GROUP BY state"))
        seen = raw.execute("SELECT count(*) FROM seen").fetchone()[0]
        host_queued = raw.execute("SELECT coalesce(sum(queued), 0) FROM hosts").fetchone()[0]
        admitted = raw.execute("SELECT coalesce(sum(admitted), 0) FROM hosts").fetchone()[0]
    store = SqliteFrontier(db, FrontierLimits(bloom_capacity=100_000), node_id="n")
    try:
        c = store.counts()
        assert (c.queued, c.leased) == (by_state.get(0, 0), by_state.get(1, 0))
        assert c.queued == host_queued
        assert c.seen == seen == admitted >= done * BATCH
        offered = [
            entry(f"http://h{i % 37}.test/{b}/{i}", i % 5)
            for b in range(done)
            for i in range(BATCH)
        ]
        res = store.add(offered, now=1e6)
        assert (res.added, res.duplicates) == (0, len(offered))
        assert store.release_own_leases() == c.leased
        assert store.counts().queued == c.queued + c.leased
    finally:
        store.close()
