"""In a shared crawl a page's links are admitted before its settlement is written
(docs/scaling.md): Redis restores a prefix of its history (its append-only file), so a
restored prefix that holds the page's settlement holds its links too. The test reads the
server's own AOF and checks every prefix of what one ``complete`` wrote."""

from __future__ import annotations

from pathlib import Path

from headway.frontier.redis import RedisFrontier
from headway.frontier.store import Completion, Settle
from tests.frontier.conftest import TEST_LIMITS, entry, lease
from tests.support.redisproc import RedisServer


def _aof_bytes(server: RedisServer) -> bytes:
    """The server's incremental append-only files, in order (what a restart replays
    after the base snapshot)."""
    files = sorted((server.dir / "appendonlydir").glob("*.incr.aof"))
    assert files, f"no AOF in {server.dir}"
    return b"".join(f.read_bytes() for f in files)


def _commands(data: bytes) -> list[list[str]]:
    """The commands of an AOF (RESP arrays of bulk strings), in order."""
    out: list[list[str]] = []
    i = 0
    while i < len(data):
        assert data[i : i + 1] == b"*", data[i : i + 40]
        end = data.index(b"\r\n", i)
        n = int(data[i + 1 : end])
        i = end + 2
        args = []
        for _ in range(n):
            assert data[i : i + 1] == b"$", data[i : i + 40]
            end = data.index(b"\r\n", i)
            size = int(data[i + 1 : end])
            args.append(data[end + 2 : end + 2 + size].decode(errors="replace"))
            i = end + 2 + size + 2
        out.append(args)
    return out


def test_links_are_in_every_restored_prefix_that_holds_the_settlement(tmp_path: Path) -> None:
    server = RedisServer(tmp_path, appendonly=True)
    server.start()
    store = RedisFrontier(server.url, "order", "n1", TEST_LIMITS, shards=8, handover_gap=0.0)
    try:
        store.add([entry("http://a.test/")], now=0)
        (page,) = lease(store, "a.test", 1, now=0, lease_seconds=60)
        before = len(_aof_bytes(server))
        # links on many hosts: several shards, several admission scripts
        links = [f"http://h{i}.test/p{i}" for i in range(12)]
        result = store.complete(
            [Completion(page.id, Settle.DONE)], [entry(u, depth=1) for u in links], now=1
        )
        assert result.added == len(links)
    finally:
        store.close()
        server.stop()  # a clean stop: the AOF has every write
    written = _commands(_aof_bytes(server)[before:])
    lease_member = f"|{store.node_id}"
    settled_at = [
        i
        for i, cmd in enumerate(written)
        if cmd[0].upper() == "ZREM" and any(a.endswith(lease_member) for a in cmd[2:])
    ]
    assert settled_at, written  # the settlement was written
    first_settlement = settled_at[0]
    for link in links:
        admitted_at = [i for i, cmd in enumerate(written) if any(link in a for a in cmd[1:])]
        assert admitted_at, link  # the link was written
        # every prefix that holds (a part of) the settlement holds the link
        assert admitted_at[0] < first_settlement, (link, admitted_at[0], first_settlement)
