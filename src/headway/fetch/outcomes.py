"""What a finished exchange means for its caller, apart from its response: the outcome
and readable error of an exchange that raised (``classify_error``), and the next hop of
a robots.txt fetch answered with a redirect (``robots_redirect_target``)."""

from __future__ import annotations

import ssl

import aiohttp
from yarl import URL

from headway.fetch.resolver import AddressRefused
from headway.fetch.result import FetchResult
from headway.policy.outcome import Outcome


def classify_error(exc: BaseException) -> tuple[Outcome, str]:
    """The outcome of a failed exchange and a readable error for it."""
    text = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, aiohttp.ClientConnectorDNSError):
        if isinstance(exc.os_error, AddressRefused):
            return Outcome.BLOCKED_ADDRESS, str(exc.os_error)
        return Outcome.DNS_ERROR, f"DNS: {exc.os_error}"
    if isinstance(exc, aiohttp.ClientSSLError | ssl.SSLError | ssl.CertificateError):
        return Outcome.TLS_ERROR, text
    if isinstance(exc, TimeoutError):
        return Outcome.TIMEOUT, text
    if isinstance(exc, aiohttp.ClientHttpProxyError):
        return Outcome.CONNECTION_ERROR, text
    if isinstance(exc, aiohttp.ClientConnectorError) and isinstance(
        exc.os_error, ConnectionRefusedError
    ):  # uvloop's text ("Connect call failed") does not say it
        return Outcome.CONNECTION_ERROR, f"connection refused: {text}"
    if isinstance(exc, aiohttp.ClientPayloadError) and "not completed" in str(exc):
        return Outcome.CONNECTION_ERROR, text  # the peer closed before the body ended
    if isinstance(exc, aiohttp.ClientConnectionError | OSError) and not isinstance(
        exc, aiohttp.InvalidURL
    ):
        return Outcome.CONNECTION_ERROR, text
    return Outcome.INVALID_RESPONSE, text  # unparsable HTTP, bad framing, bad URL


def robots_redirect_target(url: str, result: FetchResult) -> str | None:
    """The next hop of a robots.txt fetch that answered with a redirect: its Location
    resolved against ``url``, without fragment or credentials; None when ``result`` is
    not a redirect or the target is not an http(s) URL."""
    location = result.header("Location")
    if result.outcome is not Outcome.REDIRECT or location is None:
        return None
    try:
        target = URL(url).join(URL(location))
    except ValueError:
        return None
    if target.scheme not in ("http", "https") or not target.raw_host:
        return None
    return str(target.with_fragment(None).with_user(None))
