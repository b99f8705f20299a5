"""libcurl on the crawler's event loop (``CurlLoop``) and the sockets libcurl holds
(``Sockets``), for the libcurl client (``fetch/curl.py``). pycurl is the ``curl`` extra:
this module is imported only where it is installed."""

from __future__ import annotations

import asyncio
import select
import socket
from collections.abc import Callable
from typing import Any

import pycurl

__all__ = ["CurlLoop", "Ends", "Sockets"]


Ends = tuple[str, int, str, int]  # local address and port, peer address and port


class Sockets:
    """The sockets libcurl opened, known by their ends, so that a kept connection can be
    looked at before a request goes out on it (``closed``). libcurl tells of each
    socket it opens (``CURLOPT_SOCKOPTFUNCTION``, through the transfer that opens it);
    it closes them itself, unseen (pycurl cannot call back for a close made from the
    connection cache), so a socket number is looked at again when it comes back."""

    def __init__(self) -> None:
        self._new: list[int] = []  # sockets whose ends are not known yet
        self._fds: dict[int, Ends] = {}
        self._by_ends: dict[Ends, int] = {}

    def opened(self, fd: int) -> None:
        ends = self._fds.pop(fd, None)  # the number of a socket closed since
        if ends is not None:
            self._by_ends.pop(ends, None)
        self._new.append(fd)

    def closed(self, ends: Ends) -> bool:
        """Whether the kept connection ``ends`` has something to read before a request
        went out on it: the server's close (its TLS close_notify, a FIN, a 408)."""
        fd = self._by_ends.get(ends)
        if fd is None:
            self._learn()
            fd = self._by_ends.get(ends)
            if fd is None:
                return False  # not one of libcurl's sockets known here: not looked at
        poller = select.poll()
        poller.register(fd, select.POLLIN | select.POLLPRI)
        events = poller.poll(0)
        if events and events[0][1] & select.POLLNVAL:  # closed since: forget it
            self._by_ends.pop(ends, None)
            self._fds.pop(fd, None)
            return False
        return bool(events)

    def _learn(self) -> None:
        """Learn the ends of the sockets opened since (connected by now)."""
        for fd in self._new:
            try:
                with socket.socket(fileno=fd) as sock:
                    try:
                        local, peer = sock.getsockname(), sock.getpeername()
                    finally:
                        sock.detach()  # the socket stays libcurl's
            except OSError:
                continue  # closed, or not connected: unknown
            ends = (str(local[0]), int(local[1]), str(peer[0]), int(peer[1]))
            self._fds[fd] = ends
            self._by_ends[ends] = fd
        self._new.clear()


class CurlLoop:
    """libcurl's multi interface driven by an asyncio event loop: libcurl names the
    sockets to watch and when its timer is due (``add_reader``/``add_writer``,
    ``call_later``), the loop calls it back, and each transfer that ends is taken out
    of ``multi`` and handed to ``finished(handle, None or (errno, message))``."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        finished: Callable[[Any, tuple[int, str] | None], None],
    ) -> None:
        self._loop = loop
        self._finished = finished
        self._timer: asyncio.TimerHandle | None = None
        self._watched: dict[int, int] = {}
        self.multi: Any = pycurl.CurlMulti()
        self.multi.setopt(pycurl.M_SOCKETFUNCTION, self._on_socket)
        self.multi.setopt(pycurl.M_TIMERFUNCTION, self._on_timer)

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self.multi.close()

    def _on_socket(self, what: int, fd: int, multi: Any, data: Any) -> None:
        loop = self._loop
        old = self._watched.get(fd, 0)
        if what == pycurl.POLL_REMOVE:
            if old & pycurl.POLL_IN:
                loop.remove_reader(fd)
            if old & pycurl.POLL_OUT:
                loop.remove_writer(fd)
            self._watched.pop(fd, None)
            return
        if what & pycurl.POLL_IN and not old & pycurl.POLL_IN:
            loop.add_reader(fd, self._act, fd, pycurl.CSELECT_IN)
        elif old & pycurl.POLL_IN and not what & pycurl.POLL_IN:
            loop.remove_reader(fd)
        if what & pycurl.POLL_OUT and not old & pycurl.POLL_OUT:
            loop.add_writer(fd, self._act, fd, pycurl.CSELECT_OUT)
        elif old & pycurl.POLL_OUT and not what & pycurl.POLL_OUT:
            loop.remove_writer(fd)
        self._watched[fd] = what

    def _on_timer(self, ms: int) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if ms >= 0:
            self._timer = self._loop.call_later(ms / 1000, self._act, -1, 0)

    def _act(self, fd: int, events: int) -> None:
        if fd == pycurl.SOCKET_TIMEOUT:
            self._timer = None
        multi = self.multi
        while True:
            ret, _running = multi.socket_action(fd, events)
            if ret != pycurl.E_CALL_MULTI_PERFORM:
                break
        while True:
            queued, ok, failed = multi.info_read()
            for c in ok:
                multi.remove_handle(c)
                self._finished(c, None)
            for c, errno, message in failed:
                multi.remove_handle(c)
                self._finished(c, (errno, message))
            if not queued:
                break
