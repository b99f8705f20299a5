"""One exchange in libcurl (``Transfer``): the callbacks that take the response as it
arrives, with the bounds of the crawler's client (header line and field limits, the body
cut at its limit, libcurl's own resend refused, a kept connection the server closed left
alone), and what the end of a transfer means (``transfer_outcome``). For the libcurl
client (``fetch/curl.py``); pycurl is the ``curl`` extra: this module is imported only
where it is installed."""

from __future__ import annotations

import asyncio
import time
from errno import ECONNREFUSED

import pycurl

from headway.fetch.client import MAX_HEADER_LINE
from headway.fetch.curlloop import Sockets
from headway.fetch.exchange import Exchange
from headway.policy.outcome import Outcome

__all__ = ["MAX_HEADER_FIELDS", "Transfer", "transfer_outcome"]

#: Most header fields of a response (more: invalid), as the crawler's client allows.
MAX_HEADER_FIELDS = 128


_TLS_ERRORS = frozenset(
    getattr(pycurl, name)
    for name in (
        "E_SSL_CONNECT_ERROR",
        "E_PEER_FAILED_VERIFICATION",
        "E_SSL_CACERT",
        "E_SSL_CERTPROBLEM",
        "E_SSL_CIPHER",
        "E_SSL_ISSUER_ERROR",
        "E_SSL_PINNEDPUBKEYNOTMATCH",
        "E_SSL_INVALIDCERTSTATUS",
        "E_SSL_SHUTDOWN_FAILED",
    )
    if hasattr(pycurl, name)
)
#: libcurl's "weird server reply", "unsupported protocol" and "malformed URL"
_INVALID = frozenset((8, pycurl.E_UNSUPPORTED_PROTOCOL, pycurl.E_URL_MALFORMAT))


def _outcome(errno: int, text: str, os_errno: int = 0) -> tuple[Outcome, str]:
    """The outcome of a transfer libcurl ended with error ``errno`` (``os_errno``: the
    system's error behind it, where libcurl kept one)."""
    message = f"libcurl: {text}" if text else f"libcurl error {errno}"
    if errno == pycurl.E_OPERATION_TIMEDOUT:
        return Outcome.TIMEOUT, message
    if errno == pycurl.E_PEER_FAILED_VERIFICATION:  # worded as Python's ssl words it
        return Outcome.TLS_ERROR, f"certificate verify failed: {message}"
    if errno in _TLS_ERRORS:
        return Outcome.TLS_ERROR, message
    if errno == pycurl.E_COULDNT_RESOLVE_HOST:
        return Outcome.DNS_ERROR, f"DNS: {message}"
    if errno in _INVALID or "too large" in text.lower():
        return Outcome.INVALID_RESPONSE, message
    if errno == pycurl.E_COULDNT_CONNECT and os_errno == ECONNREFUSED:
        return Outcome.CONNECTION_ERROR, f"connection refused: {message}"
    return Outcome.CONNECTION_ERROR, message


class Transfer:
    """One exchange in libcurl: what arrived so far, and the callbacks that take it."""

    __slots__ = (
        "_fields",
        "_loop",
        "_sockets",
        "_status",
        "connected",
        "done",
        "errno",
        "errtext",
        "ex",
        "invalid",
        "last_read",
        "max_body",
        "os_errno",
        "retried",
        "stale",
        "timer",
    )

    def __init__(
        self,
        ex: Exchange,
        max_body: int,
        loop: asyncio.AbstractEventLoop,
        sockets: Sockets,
    ) -> None:
        self._sockets = sockets
        self.connected = False  # this transfer opened its connection (not a kept one)
        self.stale = False  # refused a kept connection the server had closed
        self.ex = ex
        self.max_body = max_body
        self._loop = loop
        self.done: asyncio.Future[None] = loop.create_future()
        self._status: int | None = None
        self._fields: list[tuple[str, str]] = []
        self.invalid: str | None = None  # why the response is refused
        self.retried = False  # libcurl tried to send the request a second time
        self.last_read = 0.0  # loop time of the last bytes read (or of the request sent)
        self.timer: asyncio.TimerHandle | None = None
        self.errno = 0  # how libcurl ended it (0: well)
        self.errtext = ""
        self.os_errno = 0  # the system's error behind it

    def prereq(self, primary_ip: str, local_ip: str, primary_port: int, local_port: int) -> int:
        """libcurl is about to send the request on a ready connection."""
        ex = self.ex
        if ex.sent_at is not None:  # libcurl's own second attempt: never sent
            self.retried = True
            return int(pycurl.PREREQFUNC_ABORT)
        if not self.connected and self._sockets.closed(
            (local_ip, local_port, primary_ip, primary_port)
        ):
            # A kept connection the server has said something on since its last answer:
            # its close (TLS close_notify and FIN), which libcurl's own check misses when
            # the close came with bytes. The request is not sent on it (see _transfer).
            self.stale = True
            return int(pycurl.PREREQFUNC_ABORT)
        ex.sent_at = time.time()
        ex.ip = primary_ip or None
        self.last_read = self._loop.time()
        return int(pycurl.PREREQFUNC_OK)

    def opened(self, fd: int, purpose: int) -> int:
        """libcurl opened socket ``fd`` for this transfer's new connection."""
        self.connected = True
        self._sockets.opened(fd)
        return 0  # CURL_SOCKOPT_OK

    def header(self, line: bytes) -> int | None:
        """One line of the response head (the status line, a field, the end)."""
        self.last_read = self._loop.time()
        if len(line) > MAX_HEADER_LINE + 2:
            self.invalid = f"a header line of over {MAX_HEADER_LINE} bytes"
            return -1
        text = line.decode("latin-1").rstrip("\r\n")
        if text.startswith("HTTP/"):  # a status line: a new response (after a 1xx)
            version, _, rest = text.partition(" ")
            code, _, reason = rest.partition(" ")
            self._status = int(code) if code.isdigit() else None
            self.ex.status = None  # (a proxy's answer to CONNECT came before)
            self.ex.reason = reason
            self.ex.version = version[5:] or "1.1"
            self._fields = []
            return None
        if not text:  # the end of a head
            if self._status is not None and self._status >= 200:
                self.ex.status = self._status
                self.ex.headers = tuple(self._fields)
            return None
        if len(self._fields) >= MAX_HEADER_FIELDS:
            self.invalid = f"more than {MAX_HEADER_FIELDS} header fields"
            return -1
        name, sep, value = text.partition(":")
        if sep:
            self._fields.append((name.strip(), value.strip()))
        elif text[0] in " \t" and self._fields:  # an obsolete folded line
            name, before = self._fields[-1]
            self._fields[-1] = (name, f"{before} {text.strip()}")
        return None

    def write(self, data: bytes) -> int | None:
        """Bytes of the body; past ``max_body`` the body is cut and the transfer ends."""
        self.last_read = self._loop.time()
        ex = self.ex
        room = self.max_body - ex.size
        if len(data) > room:
            if room:
                ex.chunks.append(data[:room])
                ex.size += room
            ex.cut = "length"
            return 0  # libcurl ends the transfer and closes its connection
        ex.chunks.append(data)
        ex.size += len(data)
        return None


def transfer_outcome(transfer: Transfer) -> tuple[Outcome | None, str | None]:
    """What a finished transfer means: (None, None) for a response read whole (or cut
    at its limit), else the outcome and error of how it ended."""
    if transfer.invalid is not None:
        transfer.ex.status = None  # the head was refused: no response
        return Outcome.INVALID_RESPONSE, f"invalid HTTP response: {transfer.invalid}"
    if transfer.retried:
        return (
            Outcome.CONNECTION_ERROR,
            "the server closed a reused connection before it answered",
        )
    errno = transfer.errno
    if errno == 0 or (errno == pycurl.E_WRITE_ERROR and transfer.ex.cut == "length"):
        return None, None
    return _outcome(errno, transfer.errtext, transfer.os_errno)
