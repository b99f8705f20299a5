"""Robots directives and meta refresh values (pure string parsing).

Contract:

- ``robots_content(content)``: the directives of one ``<meta name="robots">`` content value.
  Directives are separated by commas (whitespace is accepted too); ``none`` means
  ``noindex`` plus ``nofollow``; ``noai`` and ``noimageai`` are kept as AI-use signals
  (``headway.policy.aiuse``); unknown directives are ignored; case does not matter.
- ``x_robots_tag(value, robots_token)``: the directives of an ``X-Robots-Tag`` response
  header that apply to ``robots_token``. A directive may be prefixed by a user agent
  (``googlebot: noindex``); the prefix applies to it and to the directives after it in the
  same header field, and such directives count only when the agent equals our token. Header
  fields may be passed joined by newlines (each line is one field, starting with no agent)
  or by commas (as HTTP joins repeated fields; then an agent prefix carries over).
- ``refresh_url(content)``: the URL of a ``<meta http-equiv="refresh">`` content value,
  parsed by the HTML Standard's declarative refresh steps; None when the value is invalid
  or names no URL (a refresh of the page itself is not a link).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["RobotsDirectives", "refresh_url", "robots_content", "x_robots_tag"]


@dataclass(frozen=True, slots=True)
class RobotsDirectives:
    """Page-level robots directives; ``merge`` keeps the stricter of two."""

    noindex: bool = False
    nofollow: bool = False
    noai: bool = False  # an AI-use signal (policy/aiuse.py), not an access rule
    noimageai: bool = False

    def merge(self, other: RobotsDirectives) -> RobotsDirectives:
        if other in (NO_DIRECTIVES, self):
            return self
        return RobotsDirectives(
            self.noindex or other.noindex,
            self.nofollow or other.nofollow,
            self.noai or other.noai,
            self.noimageai or other.noimageai,
        )


NO_DIRECTIVES = RobotsDirectives()

#: Directives whose own syntax is ``name: value``; their name is not a user agent.
_VALUED_DIRECTIVES = frozenset(
    {"unavailable_after", "max-snippet", "max-image-preview", "max-video-preview"}
)
_SEPARATORS = re.compile(r"[\s,]+")
_ASCII_WHITESPACE = " \t\n\f\r"


def _apply(words: list[str], found: RobotsDirectives) -> RobotsDirectives:
    noindex, nofollow, noai, noimageai = (
        found.noindex,
        found.nofollow,
        found.noai,
        found.noimageai,
    )
    for word in words:
        if word == "noindex":
            noindex = True
        elif word == "nofollow":
            nofollow = True
        elif word == "none":
            noindex = nofollow = True
        elif word == "noai":
            noai = True
        elif word == "noimageai":
            noimageai = True
    out = RobotsDirectives(noindex, nofollow, noai, noimageai)
    return NO_DIRECTIVES if out == NO_DIRECTIVES else out


def robots_content(content: str) -> RobotsDirectives:
    """Directives of one meta robots ``content`` value."""
    return _apply(_SEPARATORS.split(content.lower()), NO_DIRECTIVES)


def x_robots_tag(value: str | None, robots_token: str) -> RobotsDirectives:
    """Directives of an ``X-Robots-Tag`` header value that apply to ``robots_token``."""
    if not value:
        return NO_DIRECTIVES
    token = robots_token.strip().lower()
    found = NO_DIRECTIVES
    for line in value.lower().splitlines():
        agent: str | None = None
        for part in line.split(","):
            words = part.strip()
            prefix, colon, rest = words.partition(":")
            prefix = prefix.strip()
            if colon and prefix and prefix not in _VALUED_DIRECTIVES and " " not in prefix:
                agent = prefix
                words = rest
            if agent is None or agent == token:
                found = _apply(words.split(), found)
    return found


def _skip_whitespace(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in _ASCII_WHITESPACE:
        pos += 1
    return pos


def _after_url_label(text: str, pos: int) -> int | None:
    """Position after ``url =`` (and whitespace) at ``pos``, or None if it is not there."""
    if text[pos : pos + 3].lower() != "url":
        return None
    pos = _skip_whitespace(text, pos + 3)
    if pos >= len(text) or text[pos] != "=":
        return None
    return _skip_whitespace(text, pos + 1)


def refresh_url(content: str) -> str | None:
    """The URL named by a meta refresh ``content`` value, or None."""
    pos = _skip_whitespace(content, 0)
    end = len(content)
    start = pos
    while pos < end and content[pos] in "0123456789":
        pos += 1
    if pos == start and (pos >= end or content[pos] != "."):
        return None  # no time: not a valid refresh
    while pos < end and content[pos] in "0123456789.":
        pos += 1
    if pos >= end:
        return None  # time only: refresh the page itself
    if content[pos] not in _ASCII_WHITESPACE + ";,":
        return None
    pos = _skip_whitespace(content, pos)
    if pos < end and content[pos] in ";,":
        pos += 1
    pos = _skip_whitespace(content, pos)
    if pos >= end:
        return None
    labelled = _after_url_label(content, pos)
    if labelled is not None:
        pos = labelled
    quote = content[pos] if pos < end and content[pos] in "'\"" else ""
    if quote:
        pos += 1
    url = content[pos:]
    if quote and quote in url:
        url = url[: url.index(quote)]
    url = url.strip(_ASCII_WHITESPACE)
    return url or None
