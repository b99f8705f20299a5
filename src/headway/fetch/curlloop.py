"""libcurl on the crawler's event loop (``CurlLoop``), the sockets libcurl holds
(``Sockets``, ``HandedSocket``) and where it keeps TLS sessions (``SessionShares``), for the libcurl
client (``fetch/curl.py``). pycurl is the ``curl`` extra: this module is imported only
where it is installed."""

from __future__ import annotations

import asyncio
import select
import socket
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import pycurl

__all__ = ["CurlLoop", "Ends", "HandedSocket", "SessionShares", "Sockets"]


Ends = tuple[str, int, str, int]  # local address and port, peer address and port


class HandedSocket:
    """A socket handed to libcurl from the open-socket callback: pycurl keeps a
    duplicate of its descriptor and lets go of this object at once, which then closes
    its own (a socket object let go of unclosed would be closed too, but through a
    ``ResourceWarning`` formatted for every connection)."""

    __slots__ = ("_sock",)

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock

    def fileno(self) -> int:
        return self._sock.fileno()

    def __del__(self) -> None:
        self._sock.close()


class SessionShares:
    """Share handles holding libcurl's TLS sessions, each host's in one of them.

    libcurl keeps the sessions of a share (or of a multi handle) for a fixed number of
    hosts, about 25 (not configurable; measured in ``docs/performance.md``, *libcurl in
    the crawl*), so with one share a crawl going round more hosts than that resumes
    hardly any handshake. Here each host (``host:port``) is given a share that holds at
    most ``per_share`` hosts, shares are made as hosts come, and at most ``max_hosts``
    hosts are kept, the least recently used given up first (its place in its share goes
    to the next new host), as the crawler's own client keeps one session per host
    (``fetch/tls.py``)."""

    def __init__(self, max_hosts: int, per_share: int = 20) -> None:
        self._max_hosts = max(1, max_hosts)
        self._per_share = per_share
        self._hosts: OrderedDict[str, int] = OrderedDict()  # host -> its share's index
        self._shares: list[Any] = []
        self._load: list[int] = []  # hosts given each share
        self._room: list[int] = []  # shares with fewer than per_share hosts

    def __len__(self) -> int:
        return len(self._shares)

    def share_for(self, host: str) -> Any:
        """The share that keeps ``host``'s TLS sessions."""
        index = self._hosts.get(host)
        if index is not None:
            self._hosts.move_to_end(host)
            return self._shares[index]
        if len(self._hosts) >= self._max_hosts:
            _, given_up = self._hosts.popitem(last=False)
            if self._load[given_up] == self._per_share:
                self._room.append(given_up)
            self._load[given_up] -= 1
        if not self._room:
            share = pycurl.CurlShare()
            share.setopt(pycurl.SH_SHARE, pycurl.LOCK_DATA_SSL_SESSION)
            self._shares.append(share)
            self._load.append(0)
            self._room.append(len(self._shares) - 1)
        index = self._room[-1]
        self._load[index] += 1
        if self._load[index] == self._per_share:
            self._room.pop()
        self._hosts[host] = index
        return self._shares[index]

    def close(self) -> None:
        """Close every share (after the handles that used them)."""
        for share in self._shares:
            share.close()
        self._shares.clear()
        self._load.clear()
        self._room.clear()
        self._hosts.clear()


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
