"""A URL's record in Redis read back (see ``keys.py`` for the layout)."""

from __future__ import annotations

from typing import Any

from headway.frontier.store import LeasedUrl


def leased_from_record(url_id: int, rec: list[Any], expires: float) -> LeasedUrl:
    """The lease of URL ``url_id`` from its record's fields as HMGET returns them, in
    ``keys.py``'s order; fields an older version did not write read as their
    defaults."""
    url, host, depth, priority, fp, via, attempts = rec[:7]
    validators = rec[7] if len(rec) > 7 and isinstance(rec[7], str) else None
    fetches = int(rec[8]) if len(rec) > 8 else 0
    # written without it by an older version, or a link: no handler
    handler = rec[9] if len(rec) > 9 and isinstance(rec[9], str) else None
    return LeasedUrl(
        url_id,
        url,
        host,
        int(depth),
        int(priority),
        int(fp),
        via,
        int(attempts),
        expires,
        validators,
        fetches,
        handler,
    )
