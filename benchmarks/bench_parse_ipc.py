"""What one round trip to a parser process costs, by the way it is made, and what the
page bodies add to it.

Run: ``.venv/bin/python benchmarks/bench_parse_ipc.py [--calls 2000] [--kb 80]``.
A page body of ``--kb`` KiB goes to a worker process that answers a small result, one
page per call (as at the politeness gap, where pages arrive one at a time), through
``ProcessPoolExecutor`` (what the parse pool uses: a manager thread and a queue feeder
thread in this process between the event loop and the pipe) and through a bare pipe
watched by the event loop. CPU is this process's plus the worker's (``fork`` context,
so the worker is a child and its CPU is in ``RUSAGE_CHILDREN`` once it is reaped).

Then, through ``ProcessPoolExecutor`` with ``--batch`` pages per call (as the parse pool
sends them at gap 0) and one page per call, CPU per page when the bodies are pickled
into the call (what the parse pool does), when they are written to a shared memory
block and only their offsets are sent, and when no body is sent at all (the cost of the
call alone): the difference is what the bodies cost.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import pickle
import resource
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import shared_memory
from multiprocessing.connection import Connection

import uvloop


def _answer(body: bytes) -> list[int]:
    return [len(body)] * 3


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


async def _pool(body: bytes, calls: int) -> tuple[float, float]:
    pool = ProcessPoolExecutor(1, mp_context=mp.get_context("fork"))
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(pool, _answer, b"")
    cpu, wall = _cpu(), time.monotonic()
    for _ in range(calls):
        await loop.run_in_executor(pool, _answer, body)
    pool.shutdown()
    return _cpu() - cpu, time.monotonic() - wall


def _serve(conn: Connection) -> None:
    while msg := conn.recv_bytes():
        conn.send_bytes(pickle.dumps(_answer(msg)))


async def _pipe(body: bytes, calls: int) -> tuple[float, float]:
    ctx = mp.get_context("fork")
    here, there = ctx.Pipe()
    worker = ctx.Process(target=_serve, args=(there,))
    worker.start()
    loop = asyncio.get_running_loop()
    cpu, wall = _cpu(), time.monotonic()
    for _ in range(calls):
        here.send_bytes(body)
        ready = loop.create_future()
        loop.add_reader(here.fileno(), lambda f=ready: f.done() or f.set_result(None))
        await ready
        loop.remove_reader(here.fileno())
        pickle.loads(here.recv_bytes())
    here.send_bytes(b"")
    worker.join()
    return _cpu() - cpu, time.monotonic() - wall


_SHARED: shared_memory.SharedMemory | None = None


def _attach(name: str) -> None:
    global _SHARED
    _SHARED = shared_memory.SharedMemory(name)


def _answer_pages(bodies: list[bytes]) -> list[int]:
    return [len(b) for b in bodies]


def _answer_shared(spans: list[tuple[int, int]]) -> list[int]:
    assert _SHARED is not None
    view = _SHARED.buf
    return [len(bytes(view[start : start + size])) for start, size in spans]


async def _bodies(kind: str, body: bytes, batch: int, calls: int) -> float:
    """CPU us per page of ``calls`` calls of ``batch`` pages, bodies sent by ``kind``."""
    ctx = mp.get_context("fork")
    shm = None
    if kind == "shared memory":
        shm = shared_memory.SharedMemory(create=True, size=batch * len(body))
        pool = ProcessPoolExecutor(1, mp_context=ctx, initializer=_attach, initargs=(shm.name,))
    else:
        pool = ProcessPoolExecutor(1, mp_context=ctx)
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(pool, _answer_pages, [b""])
    cpu = _cpu()
    for _ in range(calls):
        if shm is not None:
            spans = []
            for i in range(batch):
                start = i * len(body)
                shm.buf[start : start + len(body)] = body
                spans.append((start, len(body)))
            await loop.run_in_executor(pool, _answer_shared, spans)
        elif kind == "pickled":
            await loop.run_in_executor(pool, _answer_pages, [body] * batch)
        else:
            await loop.run_in_executor(pool, _answer_pages, [b""] * batch)
    pool.shutdown()
    if shm is not None:
        shm.close()
        shm.unlink()
    return (_cpu() - cpu) / calls / batch * 1e6


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--calls", type=int, default=2000)
    p.add_argument("--kb", type=int, default=80)
    p.add_argument("--batch", type=int, default=8)
    args = p.parse_args()
    body = b"x" * (args.kb * 1024)
    print(f"one {args.kb} KiB page per call, {args.calls} calls; CPU of both processes")
    for name, run in (("ProcessPoolExecutor", _pool), ("pipe on the event loop", _pipe)):
        cpu, wall = uvloop.run(run(body, args.calls))
        per_call = cpu / args.calls * 1e6, wall / args.calls * 1e6
        print(f"{name:<24} CPU {per_call[0]:6.0f} us/call  wall {per_call[1]:6.0f} us/call")
    print("ProcessPoolExecutor, CPU us per page by how the bodies travel")
    for batch in sorted({1, args.batch}):
        cells = []
        for kind in ("pickled", "shared memory", "no body"):
            us = uvloop.run(_bodies(kind, body, batch, max(1, args.calls // batch)))
            cells.append(f"{kind} {us:5.0f}")
        print(f"{batch} page(s) per call: " + "  ".join(cells))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
