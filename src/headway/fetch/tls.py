"""Client TLS for the fetch stage: verification always on, sessions resumed.

``client_context(ca_file)`` is the context every HTTPS connection uses: the system's
certificate authorities plus those of ``ca_file``, host names checked, and TLS session
resumption. A connection kept alive across the politeness gap pays one handshake per
host; when a connection is closed anyway (the server's keep-alive is shorter than the
gap, a Crawl-delay of many seconds, more hosts than connections kept), the next
connection to that host offers the session of the previous one, so the handshake is an
abbreviated one (no certificate chain sent and verified again) when the server agrees,
and a full one otherwise. Nothing else changes: the server is the one that issued the
session, to this host name, after verifying its certificate.

Sessions are kept per host name (``server_hostname``, which is also what the
certificate was checked against), at most ``max_sessions`` of them, the least recently
stored dropped first. The session of a connection is taken once, when its first
application data arrives (TLS 1.3 tickets come after the handshake, before that data).

asyncio's (and uvloop's) TLS transport creates its ``SSLObject`` through the context's
``wrap_bio`` and never passes a session: ``ResumingContext.wrap_bio`` adds it.
"""

from __future__ import annotations

import ssl
from collections import OrderedDict
from pathlib import Path
from typing import Any

from headway.errors import ConfigError

__all__ = ["MAX_SESSIONS", "ResumingContext", "client_context"]

#: Sessions kept (one per host name; a session is about a kilobyte).
MAX_SESSIONS = 4096


class _ResumingObject(ssl.SSLObject):
    """An ``SSLObject`` that hands its session to its context once data arrived."""

    _stored = False

    def read(self, len: int = 1024, buffer: Any = None) -> Any:
        out = super().read(len, buffer)
        if not self._stored and out:
            self._stored = True
            context = self.context
            if isinstance(context, ResumingContext) and self.server_hostname:
                context.store_session(self.server_hostname, self.session, self.session_reused)
        return out


class ResumingContext(ssl.SSLContext):
    """A client ``SSLContext`` that offers each host the session of its last
    connection (see the module docstring)."""

    max_sessions = MAX_SESSIONS
    _sessions: OrderedDict[str, ssl.SSLSession] | None = None
    full_handshakes = 0  # connections whose handshake was a full one
    resumed_handshakes = 0  # connections that resumed a session

    def store_session(self, host: str, session: ssl.SSLSession | None, reused: bool) -> None:
        """Keep ``session`` (of a connection to ``host``) for the next connection."""
        if reused:
            self.resumed_handshakes += 1
        else:
            self.full_handshakes += 1
        if session is None or (not session.has_ticket and not session.id):
            return
        sessions = self._sessions
        if sessions is None:
            sessions = self._sessions = OrderedDict()
        sessions[host] = session
        sessions.move_to_end(host)
        while len(sessions) > self.max_sessions:
            sessions.popitem(last=False)

    def session_for(self, host: str) -> ssl.SSLSession | None:
        return self._sessions.get(host) if self._sessions is not None else None

    def wrap_bio(
        self,
        incoming: ssl.MemoryBIO,
        outgoing: ssl.MemoryBIO,
        server_side: bool = False,
        server_hostname: str | bytes | None = None,
        session: ssl.SSLSession | None = None,
    ) -> ssl.SSLObject:
        if session is None and not server_side and isinstance(server_hostname, str):
            session = self.session_for(server_hostname)
        return super().wrap_bio(incoming, outgoing, server_side, server_hostname, session)


def client_context(ca_file: Path | None, max_sessions: int = MAX_SESSIONS) -> ResumingContext:
    """Client TLS context: verification on (certificate and host name), the system's
    authorities plus ``ca_file``'s, sessions resumed. A missing or unreadable file is a
    ``ConfigError`` naming ``fetch.ca_file``."""
    ctx = ResumingContext(ssl.PROTOCOL_TLS_CLIENT)  # CERT_REQUIRED, check_hostname on
    ctx.sslobject_class = _ResumingObject
    ctx.max_sessions = max_sessions
    ctx.load_default_certs(ssl.Purpose.SERVER_AUTH)
    if ca_file is not None:
        try:
            ctx.load_verify_locations(cafile=str(ca_file))
        except (OSError, ssl.SSLError) as exc:
            raise ConfigError("fetch.ca_file", f"cannot load {ca_file}: {exc}") from exc
    return ctx
