"""The text of a page, for the text output (``--text``): pure, runs in parser processes.

Contract of ``extract_text(html, mode)``:

- ``main``: the page's main content, found by resiliparse's main-content heuristics
  (navigation, menus, footers, comment sections, cookie and other banners left out);
  title and headings kept, paragraphs separated by blank lines.
- ``all``: all visible text of the page, block by block (the kind Common Crawl's WET
  files carry).
- ``accurate``: main content by trafilatura, better on articles (F1 0.95 against 0.90 on
  the labelled article set in docs/outputs.md) and about ten times dearer; needs the
  ``headway[accurate]`` extra (``TextUnavailable`` without it).
- Bounded: a document nested deeper than ``MAX_DEPTH`` elements (main-content extraction
  costs the square of the depth: 10,000 levels take seconds, 100,000 minutes) is
  refused (``TextRefused``) after a check that costs well under a millisecond; the text
  is cut to ``MAX_TEXT_CHARS``. Input size is bounded by the parse stage
  (``max_parsed``); time and memory are then linear in it.
- Lines are stripped of trailing white space and runs of blank lines become one; the
  result has no leading or trailing white space. An empty string means the page has no
  text in that mode.

``check_depth(tree)`` is the depth check alone, on a lexbor tree the caller parsed.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from selectolax.lexbor import LexborHTMLParser

from headway.errors import TextRefused, TextUnavailable

__all__ = [
    "MAX_DEPTH",
    "MAX_TEXT_CHARS",
    "TEXT_MODES",
    "TextMode",
    "TextRefused",
    "TextUnavailable",
    "check_depth",
    "extract_text",
]

TextMode = Literal["main", "all", "accurate"]
TEXT_MODES: tuple[TextMode, ...] = ("main", "all", "accurate")

#: Elements nested deeper than this refuse the text. Browsers stop nesting at 512
#: (Chromium's parser), real pages rarely pass 60.
MAX_DEPTH = 256
#: Characters of text kept per page.
MAX_TEXT_CHARS = 1_000_000

#: A child chain of MAX_DEPTH + 1 elements: matched right to left, each element walks up
#: at most that many parents, in C.
_TOO_DEEP = "*" + " > *" * MAX_DEPTH
_BLANKS = re.compile(r"\n\s*\n\s*")
_TRAILING = re.compile(r"[ \t\r\f\v]+\n")


def check_depth(tree: LexborHTMLParser) -> None:
    """``TextRefused`` when ``tree`` nests elements deeper than ``MAX_DEPTH``."""
    if tree.css_first(_TOO_DEEP) is not None:
        raise TextRefused(f"nested deeper than {MAX_DEPTH} elements")


def _tidy(text: str) -> str:
    text = _TRAILING.sub("\n", text)
    text = _BLANKS.sub("\n\n", text).strip()
    return text[:MAX_TEXT_CHARS]


def _resiliparse(html: str, main: bool) -> str:
    from resiliparse.extract.html2text import extract_plain_text

    return str(
        extract_plain_text(
            html,
            preserve_formatting=True,
            main_content=main,
            comments=False,  # comment threads are not the page's content
            post_meta=False,  # bylines, dates and tags around a post: not its text
            list_bullets=False,
            alt_texts=False,
        )
    )


_trafilatura: Any = None


def _accurate(html: str) -> str:
    global _trafilatura
    if _trafilatura is None:
        try:
            import trafilatura
        except ImportError:
            raise TextUnavailable(
                "--text-mode accurate needs trafilatura: pip install 'headway[accurate]'"
            ) from None
        _trafilatura = trafilatura
    # trafilatura joins blocks with one line break; paragraphs here are blank-line apart
    body = _trafilatura.extract(html, include_comments=False, include_tables=True) or ""
    return str(body).replace("\n", "\n\n")


def extract_text(html: str, mode: TextMode = "main", tree: LexborHTMLParser | None = None) -> str:
    """The text of ``html`` in ``mode`` (see the module contract). ``tree``: the page's
    lexbor tree when the caller has it (saves a parse for the depth check)."""
    check_depth(tree if tree is not None else LexborHTMLParser(html))
    if mode == "accurate":
        return _tidy(_accurate(html))
    return _tidy(_resiliparse(html, main=mode == "main"))
