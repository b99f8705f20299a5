"""The one exception hierarchy of headway.

Ordinary crawl outcomes (404, disallowed, timeout) are values, not exceptions; these
are for conditions that stop an operation: bad settings, a bad crawl directory, a store
that cannot be used.
"""

from __future__ import annotations


class HeadwayError(Exception):
    """Base of every error headway raises on purpose."""


class ConfigError(HeadwayError):
    """A setting is missing or invalid; ``key`` names it (dotted path)."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(f"{key}: {message}" if key else message)
        self.key = key


class SeedError(HeadwayError):
    """The seeds could not be read at all (a bad single line is reported, not raised)."""


class CrawlDirError(HeadwayError):
    """The crawl directory cannot be used (written by another version, unreadable, locked)."""


class StoreError(HeadwayError):
    """A store (frontier, WARC, index) failed in a way the crawl cannot continue past."""


class ControlError(HeadwayError):
    """A control (pause, resume, stop, seeds, opt-out, host override) is invalid or has
    no crawl to go to."""


class ExportError(HeadwayError):
    """A crawl cannot be packaged (``headway export``): a directory that is missing, not a
    crawl directory, of another crawl, or an output that cannot be written."""


class TextRefused(HeadwayError):
    """A page's text is not extracted (nested too deeply to extract within bounds)."""


class TextUnavailable(HeadwayError):
    """A text mode needs a package that is not installed; the message names it."""
