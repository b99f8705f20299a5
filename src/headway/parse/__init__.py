"""The parse stage (pure, runs in worker processes): link extraction, base href, meta
robots and X-Robots-Tag, meta refresh, charset."""

from headway.parse.charset import decode_body, detect_charset
from headway.parse.page import ParsedPage, ParseTask, is_html, parse_page, parse_task

__all__ = [
    "ParseTask",
    "ParsedPage",
    "decode_body",
    "detect_charset",
    "is_html",
    "parse_page",
    "parse_task",
]
