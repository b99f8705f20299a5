"""AI-use signals: what a site says its pages may be used for (pure).

Three uses, as robots.txt's Content-Signal names them: ``search`` (building a search
index, showing links and snippets), ``ai_input`` (feeding a page into a model's answer:
retrieval, grounding) and ``ai_train`` (training or fine-tuning a model). Each is
``"yes"``, ``"no"`` or None (the site said nothing). Sources and what they mean here:

- robots.txt ``Content-Signal: search=yes, ai-train=no, ai-input=no`` (Cloudflare's
  Content Signals Policy): the lines of the group that applies to our product token
  (else of the ``*`` group), and lines before any group, which apply to every crawler
  (``content_signal_of``). Unknown keys and values are ignored.
- TDMRep (W3C community group's TDM Reservation Protocol), the ``tdm-reservation``
  response header or ``<meta name="tdm-reservation">``: ``1`` reserves text and data
  mining, so ``ai_train`` and ``ai_input`` are ``no``; ``0`` says they are not
  reserved (``yes``).
- ``noai`` in meta robots (ours or ``robots``) or ``X-Robots-Tag``: ``ai_train`` and
  ``ai_input`` are ``no``. ``noimageai`` concerns a page's images only (headway does not
  extract images): it is recognised and reserves none of the three.
- ``noindex`` (meta robots or ``X-Robots-Tag``): ``search`` is ``no``.

``merge`` combines sources: any ``no`` wins, then any ``yes``, else None. ``reserved``
says whether signals forbid a use (``any`` is never reserved). Fetching and archiving
do not look at any of this: robots.txt ``Disallow`` stays the access rule.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from headway.parse.page import ParsedPage

__all__ = [
    "NO_SIGNALS",
    "USES",
    "AiSignals",
    "content_signal_of",
    "merge",
    "page_signals",
    "parse_content_signal",
    "reserved",
    "robots_words",
    "tdm_reservation",
]

Verdict = Literal["yes", "no"] | None
Use = Literal["ai-train", "ai-input", "search", "any"]
USES: tuple[Use, ...] = ("ai-train", "ai-input", "search", "any")

#: robots.txt lines read for Content-Signal, and characters of each value kept.
MAX_SIGNAL_LINES = 64
MAX_SIGNAL_CHARS = 1024


@dataclass(frozen=True, slots=True)
class AiSignals:
    ai_train: Verdict = None
    ai_input: Verdict = None
    search: Verdict = None


NO_SIGNALS = AiSignals()
_KEYS = {"ai-train": "ai_train", "ai-input": "ai_input", "search": "search"}


def _stricter(a: Verdict, b: Verdict) -> Verdict:
    if a == "no" or b == "no":
        return "no"
    if a == "yes" or b == "yes":
        return "yes"
    return None


def merge(*signals: AiSignals) -> AiSignals:
    """Any ``no`` wins, then any ``yes``, else None, use by use."""
    out = NO_SIGNALS
    for s in signals:
        if s == NO_SIGNALS:
            continue
        out = AiSignals(
            _stricter(out.ai_train, s.ai_train),
            _stricter(out.ai_input, s.ai_input),
            _stricter(out.search, s.search),
        )
    return out


def reserved(signals: AiSignals, use: Use) -> bool:
    """Whether ``signals`` forbid ``use`` (``any``: never)."""
    if use == "any":
        return False
    return bool(getattr(signals, _KEYS[use]) == "no")


def parse_content_signal(value: str | None) -> AiSignals:
    """The signals of one or more Content-Signal values (joined by commas)."""
    if not value:
        return NO_SIGNALS
    found: dict[str, Verdict] = {}
    for part in value[:MAX_SIGNAL_CHARS].split(","):
        key, sep, verdict = part.partition("=")
        name = _KEYS.get(key.strip().lower())
        word = verdict.strip().lower()
        if sep and name is not None and word in ("yes", "no"):
            found[name] = _stricter(found.get(name), word)  # type: ignore[arg-type]
    return AiSignals(**found)


def tdm_reservation(value: str | None) -> AiSignals:
    """The signals of a TDMRep ``tdm-reservation`` value (header or meta content)."""
    word = (value or "").strip()
    if word == "1":
        return AiSignals(ai_train="no", ai_input="no")
    if word == "0":
        return AiSignals(ai_train="yes", ai_input="yes")
    return NO_SIGNALS


def robots_words(words: frozenset[str]) -> AiSignals:
    """The signals of robots directives (meta robots, X-Robots-Tag), lower case."""
    noai = "noai" in words
    noindex = "noindex" in words or "none" in words
    if not noai and not noindex:
        return NO_SIGNALS
    return AiSignals(
        ai_train="no" if noai else None,
        ai_input="no" if noai else None,
        search="no" if noindex else None,
    )


def _token_of(value: str) -> str:
    """The product token of a user-agent line's value: its first word, before any /."""
    word = value.strip().split(maxsplit=1)[0] if value.strip() else ""
    return word.split("/", 1)[0].lower()


def content_signal_of(text: str, token: str) -> str | None:
    """The Content-Signal values of a robots.txt that apply to ``token`` (see the
    module contract), joined by commas; None when there are none."""
    wanted = token.lower()
    general: list[str] = []  # before any group
    ours: list[str] = []
    star: list[str] = []
    agents: list[str] = []
    in_agents = False
    seen = 0
    for line in text.splitlines():
        content = line.split("#", 1)[0].strip()
        name, sep, value = content.partition(":")
        if not sep:
            continue
        name = name.strip().lower()
        if name in ("user-agent", "useragent"):
            if not in_agents:
                agents = []
            agents.append(_token_of(value))
            in_agents = True
            continue
        in_agents = False
        if name != "content-signal":
            continue
        seen += 1
        if seen > MAX_SIGNAL_LINES:
            break
        if not agents:
            general.append(value.strip())
        elif wanted and wanted in agents:
            ours.append(value.strip())
        elif "*" in agents:
            star.append(value.strip())
    chosen = general + (ours or star)
    return ",".join(chosen)[:MAX_SIGNAL_CHARS] if chosen else None


def page_signals(
    parsed: ParsedPage, *, tdm_header: str | None, content_signal: str | None
) -> AiSignals:
    """Every source of one HTML capture merged: its host's robots.txt Content-Signal,
    its ``tdm-reservation`` header and meta tag, and its robots directives (meta and
    ``X-Robots-Tag``, as the parse found them)."""
    words = frozenset(w for w, on in (("noai", parsed.noai), ("noindex", parsed.noindex)) if on)
    return merge(
        parse_content_signal(content_signal),
        tdm_reservation(tdm_header),
        tdm_reservation(parsed.tdm_reservation),
        robots_words(words),
    )
