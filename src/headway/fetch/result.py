"""The value a fetch produces; the store and the runtime consume it."""

from __future__ import annotations

from dataclasses import dataclass

from headway.policy.outcome import Outcome

Headers = tuple[tuple[str, str], ...]


def first_header(headers: Headers, name: str) -> str | None:
    """The first value of field ``name`` (any case) in ``headers``, or None."""
    lname = name.lower()
    for k, v in headers:
        if k.lower() == lname:
            return v
    return None


@dataclass(frozen=True, slots=True)
class FetchResult:
    """One HTTP exchange (or the failure to have one).

    ``raw_body`` is the entity body as received (content-encoding kept, transfer-encoding
    removed), cut at the body limit; ``body`` is the decoded payload, cut at the decoded
    limit (the same object when there was no content-encoding). ``truncated`` names why a
    body was cut (``"length"``, ``"decoded-length"``, ``"time"``) or is None.
    """

    url: str
    started_at: float  # wall clock, epoch seconds, when the request started
    duration: float  # seconds until the body was read or the failure happened
    outcome: Outcome
    status: int | None = None
    reason: str = ""
    http_version: str = "1.1"
    method: str = "GET"
    request_headers: Headers = ()
    response_headers: Headers = ()
    raw_body: bytes = b""
    body: bytes = b""
    truncated: str | None = None
    ip: str | None = None
    error: str | None = None  # human-readable error, None when a response was read
    sent_at: float | None = None  # wall clock when the request headers were sent

    def header(self, name: str) -> str | None:
        """First response header of that name (case-insensitive), or None."""
        return first_header(self.response_headers, name)

    def joined_header(self, name: str) -> str | None:
        """Every value of a repeated response header, one per line (None when absent)."""
        lname = name.lower()
        values = [v for k, v in self.response_headers if k.lower() == lname]
        return "\n".join(values) if values else None
