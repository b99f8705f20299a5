"""A prototype parse hand-over for measurement, never part of headway: the node's
``ParsePool`` with its ``ProcessPoolExecutor`` replaced by one duplex pipe per parser
process, written by the event loop and read through ``add_reader`` (no manager or
queue-feeder threads between the loop and the processes). The gate, batches and
statistics are the pool's own; what the prototype leaves out: time-outs of a stuck
parser, a crashed process's replacement, the lifeline. ``parse_ab/sitecustomize.py``
puts it in place in a crawl run with that folder first on ``PYTHONPATH``:

    .venv/bin/python -m headway.cli bench --before-src "$PWD/benchmarks/parse_ab:$PWD/src" \\
        --scheme https --gaps 1 --pages-mix real --server-idle 0.5 --http-client curl --repeat 3

runs each case with the pipes ("before") and then with the executor.
"""

from __future__ import annotations

import asyncio
import os
import pickle
import socket
import struct
from collections.abc import Sequence
from multiprocessing import forkserver
from multiprocessing.connection import Connection
from typing import Any

from headway.parse.page import ParsedPage, ParseTask
from headway.runtime import parsepool
from headway.runtime.lifeline import start_deaf_to_stop


def _pipe_worker(conn: Connection, node_pid: int, parse_sleep: float) -> None:
    """A parser process: a list of tasks in, (pages, pid, cpu) out, until EOF."""
    parsepool._init_parser(node_pid, parse_sleep)
    while True:
        try:
            data = conn.recv_bytes()
        except EOFError:
            return
        tasks = pickle.loads(data)
        conn.send_bytes(pickle.dumps(parsepool._timed_parse(tasks), pickle.HIGHEST_PROTOCOL))


def _recv_exactly(sock: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise EOFError("parser process gone")
        buf += chunk
    return bytes(buf)


class _Worker:
    """One parser process and the loop's end of its socket pair (the framing is
    ``multiprocessing.Connection``'s, which the process's end uses: a 4-byte length)."""

    def __init__(self, pool: Any) -> None:
        ours, theirs = socket.socketpair()
        self.sock = ours
        child = Connection(theirs.detach())
        self.proc = pool._ctx.Process(
            target=_pipe_worker, args=(child, os.getpid(), pool._parse_sleep), daemon=True
        )
        start_deaf_to_stop(forkserver.ensure_running)
        self.proc.start()
        child.close()
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    def call_blocking(self, payload: bytes) -> bytes:
        """Before the loop's streams exist (warm-up)."""
        self.sock.sendall(struct.pack("!i", len(payload)) + payload)
        (n,) = struct.unpack("!i", _recv_exactly(self.sock, 4))
        return _recv_exactly(self.sock, n)

    async def call(self, payload: bytes) -> bytes:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(sock=self.sock)
        assert self.reader is not None
        self.writer.writelines((struct.pack("!i", len(payload)), payload))
        await self.writer.drain()
        (n,) = struct.unpack("!i", await self.reader.readexactly(4))
        return await self.reader.readexactly(n)


def install_pipe_pool() -> None:
    cls = parsepool.ParsePool

    def _new_pool(self: Any) -> None:
        self._workers = [_Worker(self) for _ in range(self.workers)]
        self._idle = None

    def _idle_queue(self: Any) -> asyncio.Queue[_Worker]:
        if self._idle is None:
            self._idle = asyncio.Queue()
            for w in self._workers:
                self._idle.put_nowait(w)
        return self._idle  # type: ignore[no-any-return]

    async def _run(self: Any, tasks: Sequence[ParseTask]) -> list[ParsedPage | str]:
        idle = _idle_queue(self)
        worker = await idle.get()
        try:
            data = await worker.call(pickle.dumps(list(tasks), pickle.HIGHEST_PROTOCOL))
        finally:
            idle.put_nowait(worker)
        pages, pid, cpu = pickle.loads(data)
        self._worker_cpu[pid] = cpu
        return pages  # type: ignore[no-any-return]

    def warm_up(self: Any) -> None:
        for w in self._workers:
            _, pid, cpu = pickle.loads(w.call_blocking(pickle.dumps([])))
            self._worker_base.setdefault(pid, cpu)

    def close(self: Any) -> None:
        for w in self._workers:
            if w.writer is not None:
                w.writer.close()
            else:
                w.sock.close()
        for w in self._workers:
            w.proc.join(5)
            if w.proc.is_alive():
                w.proc.kill()

    cls._new_pool = _new_pool  # type: ignore[method-assign,assignment]
    cls._run = _run  # type: ignore[method-assign]
    cls.warm_up = warm_up  # type: ignore[method-assign]
    cls.close = close  # type: ignore[method-assign]
