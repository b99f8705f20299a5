"""When a request reached a test server's socket, as the kernel stamped it.

A test server that shares its process or event loop with a busy crawler starts its
handlers late: a request handled late looks, in the server's log, closer to the next one
than it was on the wire, and a politeness check read from that log fails although the
crawler kept its gap. ``StampedListener`` is a listening socket whose connections ask the
kernel for the receive time of the bytes they read (``SO_TIMESTAMPNS``, Linux); a
handler reads it with ``arrived(transport)`` and logs how late it started
(``late_by``). A politeness check then measures the gaps the site saw on its socket,
not the server's own delays.

Elsewhere (no ``SO_TIMESTAMPNS``, or a transport that is not a socket of this listener)
the arrival is unknown (None) and checks fall back to the handler's start.
"""

from __future__ import annotations

import asyncio
import socket
import struct
import sys
import weakref
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

__all__ = ["StampedListener", "StampedSocket", "late_by", "stamped_listener"]

#: ``SO_TIMESTAMPNS`` (also the control message's type), which the socket module does not
#: name: 35 in Linux's generic socket constants (x86, ARM and most others)
_SO_TIMESTAMPNS: int | None = getattr(
    socket, "SO_TIMESTAMPNS", 35 if sys.platform.startswith("linux") else None
)
_TIMESPEC = struct.Struct("@qq")  # struct timespec on 64-bit Linux
_ANCILLARY = socket.CMSG_SPACE(_TIMESPEC.size)


class StampedSocket(socket.socket):
    """A connected socket that keeps the kernel's receive time of the last bytes it read
    (``arrived``: wall-clock seconds, None until known)."""

    __slots__ = ("arrived",)
    arrived: float | None

    def _note(self, ancillary: list[tuple[int, int, bytes]]) -> None:
        for level, kind, data in ancillary:
            if level == socket.SOL_SOCKET and kind == _SO_TIMESTAMPNS:
                sec, nsec = _TIMESPEC.unpack(data[: _TIMESPEC.size])
                self.arrived = sec + nsec / 1e9

    def recv(self, bufsize: int, flags: int = 0, /) -> bytes:
        data, ancillary, _, _ = self.recvmsg(bufsize, _ANCILLARY, flags)
        self._note(ancillary)
        return data

    def recv_into(self, buffer: WriteableBuffer, nbytes: int = 0, flags: int = 0, /) -> int:
        view = memoryview(buffer)
        if nbytes:
            view = view[:nbytes]
        got, ancillary, _, _ = self.recvmsg_into([view], _ANCILLARY, flags)
        self._note(ancillary)
        return got


class StampedListener(socket.socket):
    """A listening socket whose accepted connections are ``StampedSocket``s, found again
    by file descriptor (``connection``)."""

    __slots__ = ("_accepted",)
    _accepted: weakref.WeakValueDictionary[int, StampedSocket]

    def accept(self) -> tuple[socket.socket, object]:
        fd, addr = self._accept()  # type: ignore[attr-defined]
        conn = StampedSocket(self.family, self.type, self.proto, fileno=fd)
        conn.arrived = None
        self._accepted[fd] = conn
        return conn, addr

    def connection(self, fd: int) -> StampedSocket | None:
        return self._accepted.get(fd)


def stamped_listener(host: str, port: int, backlog: int = 512) -> StampedListener:
    """A non-blocking listening socket on ``host:port`` (0: a free port), address reuse on,
    whose connections read kernel receive times where the platform stamps them."""
    family, kind, proto, _, addr = socket.getaddrinfo(
        host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )[0]
    sock = StampedListener(family, kind, proto)
    sock._accepted = weakref.WeakValueDictionary()
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if _SO_TIMESTAMPNS is not None:
            # inherited by every accepted connection
            sock.setsockopt(socket.SOL_SOCKET, _SO_TIMESTAMPNS, 1)
        sock.bind(addr)
        sock.listen(backlog)
        sock.setblocking(False)
    except BaseException:
        sock.close()
        raise
    return sock


def late_by(
    listener: StampedListener | None, transport: asyncio.BaseTransport | None, wall: float
) -> float | None:
    """How late (seconds, at least 0) a handler that started at ``wall`` (``time.time()``)
    runs after its request's last bytes reached the socket; None when unknown."""
    if listener is None or transport is None:
        return None
    raw = transport.get_extra_info("socket")
    if raw is None:
        return None
    conn = listener.connection(raw.fileno())
    if conn is None or conn.arrived is None:
        return None
    return max(0.0, wall - float(conn.arrived))
