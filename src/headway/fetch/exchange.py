"""One HTTP exchange as the fetch stage's clients fill it in (``Exchange``), and the
result of one that got no response (``failed_result``); shared by the aiohttp client
(``fetch/client.py``) and the libcurl one (``fetch/curl.py``)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from headway.fetch.result import FetchResult, Headers
from headway.policy.outcome import Outcome

if TYPE_CHECKING:
    from aiohttp import ClientResponse

__all__ = ["Exchange", "failed_result"]


class Exchange:
    """What is known of an exchange so far (read when it fails part way): the request
    headers, and of the response its status, fields, body read so far and why it was
    cut; ``response`` is the aiohttp client's own response object, None with libcurl."""

    __slots__ = (
        "chunks",
        "cut",
        "headers",
        "ip",
        "reason",
        "request_headers",
        "response",
        "sent_at",
        "size",
        "status",
        "version",
    )

    def __init__(self, request_headers: Headers) -> None:
        self.request_headers = request_headers
        self.response: ClientResponse | None = None
        self.status: int | None = None
        self.reason = ""
        self.ip: str | None = None
        self.chunks: list[bytes] = []
        self.size = 0
        self.cut: str | None = None
        self.sent_at: float | None = None  # wall clock when the request headers went out
        self.headers: Headers = ()  # the response's fields, as received
        self.version = "1.1"


def failed_result(
    url: str,
    started_at: float,
    t0: float,
    outcome: Outcome,
    error: str,
    ex: Exchange | None = None,
) -> FetchResult:
    """The result of an exchange that got no response."""
    return FetchResult(
        url=url,
        started_at=started_at,
        duration=time.monotonic() - t0,
        outcome=outcome,
        request_headers=ex.request_headers if ex else (),
        ip=ex.ip if ex else None,
        sent_at=ex.sent_at if ex else None,
        error=error,
    )
