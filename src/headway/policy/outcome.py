"""Fetch outcomes: the closed set of things a fetch can end in, and the mapping from an
HTTP status or transport error to one of them."""

from __future__ import annotations

from enum import StrEnum


class Outcome(StrEnum):
    OK = "ok"  # 2xx
    REDIRECT = "redirect"  # 3xx with a usable Location
    NOT_MODIFIED = "not_modified"  # 304
    CLIENT_ERROR = "client_error"  # 4xx not listed below
    RETRYABLE_CLIENT = "retryable_client"  # 408, 425
    THROTTLED = "throttled"  # 429
    UNAVAILABLE = "unavailable"  # 503
    SERVER_ERROR = "server_error"  # other 5xx
    TIMEOUT = "timeout"  # connect, read or total timeout
    CONNECTION_ERROR = "connection_error"  # refused, reset, closed early
    DNS_ERROR = "dns_error"  # name did not resolve
    BLOCKED_ADDRESS = "blocked_address"  # address guard refused the resolved address
    TLS_ERROR = "tls_error"
    INVALID_RESPONSE = "invalid_response"  # unparsable HTTP, bad encoding, over limits


#: Outcomes in which the site pushed back: the host's limits shrink.
PUSHBACK = frozenset(
    {Outcome.THROTTLED, Outcome.UNAVAILABLE, Outcome.TIMEOUT, Outcome.CONNECTION_ERROR}
)


def outcome_for_status(status: int, has_location: bool = False) -> Outcome:
    """Map an HTTP status code to an ``Outcome``."""
    if 200 <= status < 300:
        return Outcome.OK
    if status == 304:
        return Outcome.NOT_MODIFIED
    if 300 <= status < 400:
        return Outcome.REDIRECT if has_location else Outcome.CLIENT_ERROR
    if status == 429:
        return Outcome.THROTTLED
    if status in (408, 425):
        return Outcome.RETRYABLE_CLIENT
    if 400 <= status < 500:
        return Outcome.CLIENT_ERROR
    if status == 503:
        return Outcome.UNAVAILABLE
    if 500 <= status < 600:
        return Outcome.SERVER_ERROR
    return Outcome.INVALID_RESPONSE
