"""Crawl log: one JSON line per fetch (or per URL decided without a fetch).

Each line is a JSON object whose keys are the field names of ``CrawlLogEntry``, in
field order (those in ``OPTIONAL`` only when they have a value, the ``SIGNALS`` also
as null on a line with a ``text`` value), compact, in UTF-8;
``time`` is written as ISO-8601 UTC with milliseconds (``2024-05-01T12:00:00.123Z``),
everything else as its JSON value. ``parse_entry`` reads
a line back (``time`` returns as epoch seconds, rounded to the millisecond); a line of an
earlier version, without the keys added since, reads with their defaults.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from headway.store.linefile import LineFile


@dataclass(frozen=True, slots=True)
class CrawlLogEntry:
    """What happened to one URL."""

    time: float  # epoch seconds when the fetch started (or the decision was made)
    url: str
    status: int | None  # HTTP status, None when there was no response
    outcome: str  # an Outcome value, or a decision such as "disallowed"
    bytes: int  # raw body bytes received
    content_type: str | None
    digest: str | None  # payload digest, "sha1:<BASE32>"
    duration: float  # seconds
    depth: int
    outlinks: int
    truncated: str | None  # why the body was cut, or None
    error: str | None
    attempt: int = 1
    revisit: bool = False
    warc_file: str | None = None
    warc_offset: int | None = None
    via: str | None = None  # the page the URL was discovered on
    note: str | None = None  # e.g. "robots-disallowed", "redirect -> <url>"
    simhash: str | None = None  # SimHash of the page's visible text, 16 hex digits
    near_dup_of: str | None = None  # an earlier page of the host within the SimHash distance
    handler: str | None = None  # the content handler that read the body (html, sitemap, feed)
    change: str | None = None  # recrawl: "first", "changed" or "unchanged"
    revisit_in: float | None = None  # recrawl: seconds until the URL is due again
    # the outputs of docs/outputs.md, written only when known (absent keys: None)
    languages: tuple[str, ...] | None = None  # ISO 639-3, most likely first (--text)
    text: str | None = None  # what became of the page's text (--text): written, empty, ...
    # AI-use signals of an HTML capture (--text): "yes", "no" or None (policy/aiuse.py)
    ai_train: str | None = None
    ai_input: str | None = None
    search: str | None = None
    priority: int | None = None  # the URL's frontier priority (with --parquet-index)
    # politeness, for the ledger (``headway report --politeness``); None: not sent, or a
    # line written before these were recorded
    sent: float | None = None  # epoch seconds when the request left, to the microsecond
    delay: float | None = None  # seconds the host's gap was when the request was sent
    crawl_delay: float | None = None  # the robots.txt Crawl-delay in force then
    retry_after: float | None = None  # seconds a 429/503 answer's Retry-After asked for


#: Keys left out of a line when their value is None, so that a crawl without the
#: outputs that fill them writes the lines it always wrote.
SIGNALS = frozenset({"ai_train", "ai_input", "search"})
OPTIONAL = frozenset({"languages", "text", "priority"}) | SIGNALS

_FIELDS = tuple(f.name for f in fields(CrawlLogEntry))
_TYPES: dict[str, tuple[type, ...]] = {"str": (str,), "int": (int,), "float": (int, float)}


def _accepts(annotation: str) -> tuple[tuple[type, ...], bool]:
    """The JSON value types a field of this annotation takes, and whether null."""
    names = [n.strip() for n in annotation.split("|")]
    kinds = tuple(
        t
        for n in names
        for t in _TYPES.get(n, (bool,) if n == "bool" else (list,) if n.startswith("tuple") else ())
    )
    return kinds, "None" in names


#: field -> (the types its JSON value may have, whether it may be null); ``time`` is text
_ACCEPTS = {f.name: _accepts(str(f.type)) for f in fields(CrawlLogEntry)} | {
    "time": ((str,), False)
}


def _no_constant(name: str) -> None:
    raise ValueError(f"not a crawl log entry: {name} is not JSON")


def _check_types(values: dict[str, Any]) -> None:
    for name, value in values.items():
        kinds, nullable = _ACCEPTS.get(name, ((), False))
        if value is None and nullable:
            continue
        if isinstance(value, bool) and bool not in kinds:  # bool is an int to Python
            raise ValueError(f"not a crawl log entry: {name} is {value!r}")
        if not isinstance(value, kinds):
            raise ValueError(f"not a crawl log entry: {name} is {type(value).__name__}")


def format_time(epoch: float) -> str:
    """ISO-8601 UTC with milliseconds."""
    seconds, millis = divmod(round(epoch * 1000), 1000)
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{millis:03d}Z"


def parse_time(text: str) -> float:
    """Epoch seconds of a ``format_time`` string."""
    return round(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp(), 3)


def format_entry(entry: CrawlLogEntry) -> str:
    """The log line (with its newline) for one entry."""
    # the signals are written, null included, on every line that has a text verdict
    keep = SIGNALS if entry.text is not None else frozenset()
    values: dict[str, Any] = {
        name: value
        for name in _FIELDS
        if (value := getattr(entry, name)) is not None or name not in OPTIONAL or name in keep
    }
    values["time"] = format_time(entry.time)
    try:  # orjson: compact, UTF-8 (non-ASCII text is written as is, not \u-escaped)
        return orjson.dumps(values).decode() + "\n"
    except orjson.JSONEncodeError:  # text that is not valid Unicode (lone surrogates)
        return json.dumps(values, separators=(",", ":")) + "\n"


def parse_entry(line: str) -> CrawlLogEntry:
    """Read one log line back; ValueError when it is not a crawl log entry (not a JSON
    object of the entry's keys, a value of the wrong JSON type, or NaN or Infinity)."""
    try:
        values = json.loads(line, parse_constant=_no_constant)
        _check_types(values)
        values["time"] = parse_time(values["time"])
        if values.get("languages") is not None:
            values["languages"] = tuple(values["languages"])
        return CrawlLogEntry(**values)
    except (TypeError, KeyError, AttributeError) as e:
        raise ValueError(f"not a crawl log entry: {e}") from e


class CrawlLog(LineFile):
    """Appends entries to ``path`` (created if missing)."""

    def __init__(self, path: Path) -> None:
        super().__init__(path, "crawl log")

    def write(self, entry: CrawlLogEntry) -> None:
        self.write_line(format_entry(entry))
