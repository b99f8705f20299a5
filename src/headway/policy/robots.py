"""robots.txt rules (RFC 9309): what a fetch of ``/robots.txt`` means, which URLs the
rules allow for our product token, the Crawl-delay the site asks for, and an in-memory
LRU cache of rules per host.

Contract:

- ``robots_from_response`` turns a fetch result (status, body) into ``RobotsRules`` and
  never raises, whatever the body holds.
- 2xx: the body (cut at ``max_bytes``, UTF-8 with replacement, BOM dropped) is parsed;
  the group naming our product token (case-insensitive, exact), else ``*``, applies.
- 3xx that reached us (the fetcher gave up following), 4xx (including 401/403): the
  robots.txt is "unavailable": everything is allowed for ``ttl``.
- 5xx or no response at all (timeout, refused, DNS): "unreachable": everything is
  disallowed and the fetch is retried with exponential backoff
  (``retry_base * 2**(failures-1)``, at most ``ttl``). A successful copy (RULES or
  ALLOW_ALL) fetched less than ``ttl`` ago keeps serving during the outage (RFC 9309
  section 2.4 allows a cached copy while the file is unreachable); a failure never makes
  a copy live longer than ``ttl`` after it was fetched.
- ``/robots.txt`` itself is always allowed.
"""

from __future__ import annotations

import itertools
import logging
import math
import re
from collections import OrderedDict
from dataclasses import dataclass, field
from enum import StrEnum
from urllib.parse import urlsplit

from protego import Protego

from headway.policy.aiuse import content_signal_of

logger = logging.getLogger(__name__)

_TOKEN_RE = re.compile(r"[A-Za-z_-]+")

# Field names protego reads (its own spelling variants included). Used only to decide
# which lines to hand over; see ``_normalize_groups``.
_UA_FIELDS = frozenset({"user-agent", "useragent", "user agent"})
_KNOWN_FIELDS = _UA_FIELDS | frozenset(
    {
        "allow",
        "disallow",
        "dissallow",
        "dissalow",
        "disalow",
        "diasllow",
        "disallaw",
        "sitemap",
        "sitemaps",
        "site-map",
        "crawl-delay",
        "crawl delay",
        "request-rate",
        "request rate",
        "visit-time",
        "visit time",
        "host",
    }
)
#: Group name given to every group that is neither ours nor ``*``. It holds a character
#: no product token can contain, so it never matches.
_OTHER_GROUP = "~other"


def product_token(user_agent: str) -> str:
    """The product token of a User-Agent header: its leading run of letters, ``-`` and
    ``_`` (RFC 9309 section 2.2.1). ``"MyBot/1.0 (+https://x.org/bot)"`` -> ``"MyBot"``;
    ``""`` when the header starts with anything else."""
    match = _TOKEN_RE.match(user_agent.strip())
    return match.group(0) if match else ""


class RobotsKind(StrEnum):
    RULES = "rules"
    ALLOW_ALL = "allow-all"
    DISALLOW_ALL = "disallow-all"
    #: the host's own address is refused by the address guard: final, nothing is fetched
    BLOCKED = "blocked"


@dataclass(frozen=True, slots=True)
class RobotsRules:
    """The robots.txt verdict for one host, valid until ``expires_at``."""

    kind: RobotsKind
    fetched_at: float
    expires_at: float
    failures: int = 0  # consecutive failed fetches (5xx / unreachable)
    crawl_delay: float | None = None
    #: the Content-Signal values that apply to us (policy/aiuse.py): about use, not access
    content_signal: str | None = None
    _parser: Protego | None = field(default=None, compare=False, repr=False)
    _token: str = field(default="", compare=False, repr=False)

    def sitemaps(self, limit: int = 16) -> tuple[str, ...]:
        """The ``Sitemap:`` URLs the robots.txt lists (at most ``limit``, as written)."""
        if self._parser is None:
            return ()
        try:
            return tuple(itertools.islice(self._parser.sitemaps, limit))
        except (ValueError, TypeError):
            return ()

    def allowed(self, url: str) -> bool:
        """May our crawler fetch ``url`` (absolute URL, or path) under these rules?"""
        if self.kind is RobotsKind.ALLOW_ALL or _is_robots_txt(url):
            return True
        if self.kind is RobotsKind.DISALLOW_ALL or self.kind is RobotsKind.BLOCKED:
            return False
        if self._parser is None:
            return True
        try:
            return bool(self._parser.can_fetch(url, self._token))
        except ValueError:  # an unparsable URL is never fetched anyway
            logger.debug("robots: unparsable URL %r treated as disallowed", url)
            return False


def _is_robots_txt(url: str) -> bool:
    try:
        return urlsplit(url).path == "/robots.txt"
    except ValueError:
        return False


def _directive(content: str) -> tuple[str, str] | None:
    """(field, value) of a comment-free, stripped line the way protego splits it, or None
    when protego would not read it as a directive at all."""
    name: str | None = None
    if ":" in content:
        raw_name, raw_value = content.split(":", 1)
        name = raw_name.strip().lower()
        if name in _KNOWN_FIELDS or not raw_value or raw_value[0].isspace():
            return name, raw_value.strip()
    words = content.split()
    for count in (1, 2):
        candidate = " ".join(words[:count]).lower()
        if candidate in _KNOWN_FIELDS:
            return candidate, " ".join(words[count:])
    return (name, "") if name is not None else None


def _normalize_groups(text: str, token: str) -> str:
    """Rewrite robots.txt text so that protego matches groups the RFC 9309 way.

    Two differences are corrected here rather than by writing a parser:
    - protego ends a group at any unknown record line; RFC 9309 (2.2.4) and Google's
      parser ignore such lines, so they are dropped.
    - protego matches a group name anywhere at a token boundary inside the crawler name
      (so ``User-agent: My`` would apply to ``MyBot``); the RFC asks for the product
      token, case-insensitively. Each user-agent line is renamed: ours (its product
      token equal to ours) -> our token, ``*`` kept, any other -> a name that never
      matches. Values such as ``Foo Bar`` or ``FooBot/1.2`` count by their token.
    """
    wanted = token.lower()
    out: list[str] = []
    for line in text.splitlines():
        content = line.split("#", 1)[0].strip()
        parsed = _directive(content)
        if parsed is None:
            out.append(line)
            continue
        name, value = parsed
        if name in _UA_FIELDS:
            if value.strip() == "*":
                group = "*"
            elif wanted and product_token(value).lower() == wanted:
                group = wanted
            else:
                group = _OTHER_GROUP
            out.append(f"user-agent: {group}")
        elif name in _KNOWN_FIELDS:
            out.append(content)
        # else: unknown record, dropped
    return "\n".join(out)


def _decode(body: bytes, max_bytes: int) -> str:
    text = body[:max_bytes].decode("utf-8", errors="replace")
    return text.removeprefix("\ufeff")


def _parse_rules(body: bytes, token: str, max_bytes: int) -> tuple[Protego, float | None]:
    parser = Protego.parse(_normalize_groups(_decode(body, max_bytes), token))
    delay = parser.crawl_delay(token)
    if delay is not None and (not math.isfinite(delay) or delay < 0):
        delay = None
    return parser, delay


def robots_from_response(
    *,
    status: int | None,
    body: bytes | None,
    user_agent: str,
    now: float,
    ttl: float = 86400.0,
    previous: RobotsRules | None = None,
    max_bytes: int = 500 * 1024,
    retry_base: float = 60.0,
) -> RobotsRules:
    """The rules a robots.txt fetch gives (see the module docstring). ``status`` None
    means no HTTP response (timeout, connection refused, DNS failure)."""
    token = product_token(user_agent)
    if status is None or status >= 500 or status < 100:
        failures = (previous.failures if previous is not None else 0) + 1
        retry_at = now + min(ttl, retry_base * 2.0 ** min(failures - 1, 60))
        if (
            previous is not None
            and previous.kind is not RobotsKind.DISALLOW_ALL
            and now < previous.fetched_at + ttl
        ):
            return RobotsRules(
                kind=previous.kind,
                fetched_at=previous.fetched_at,
                expires_at=min(retry_at, previous.fetched_at + ttl),
                failures=failures,
                crawl_delay=previous.crawl_delay,
                content_signal=previous.content_signal,
                _parser=previous._parser,
                _token=previous._token,
            )
        return RobotsRules(RobotsKind.DISALLOW_ALL, now, retry_at, failures=failures)
    if 200 <= status < 300:
        try:
            parser, delay = _parse_rules(body or b"", token, max_bytes)
        except Exception:  # a malformed body must never take the crawl down
            logger.warning("robots: unparsable robots.txt treated as allow-all", exc_info=True)
            return RobotsRules(RobotsKind.ALLOW_ALL, now, now + ttl)
        signal = content_signal_of(_decode(body or b"", max_bytes), token)
        return RobotsRules(
            RobotsKind.RULES,
            now,
            now + ttl,
            crawl_delay=delay,
            content_signal=signal,
            _parser=parser,
            _token=token,
        )
    # 1xx that leaked through, 3xx left after the fetcher's redirects, 4xx: unavailable.
    return RobotsRules(RobotsKind.ALLOW_ALL, now, now + ttl)


def blocked_rules(now: float, ttl: float = 86400.0) -> RobotsRules:
    """The verdict for a host whose address the address guard refuses: its URLs fail at
    once (no retry), for as long as robots.txt verdicts are cached."""
    return RobotsRules(RobotsKind.BLOCKED, now, now + ttl)


def robots_state(
    rules: RobotsRules, body: bytes | None, max_bytes: int = 500 * 1024
) -> dict[str, object] | None:
    """The verdict as a JSON-ready value, with the text it was read from (``body``, for
    RULES). None when it cannot be rebuilt later (RULES without its text)."""
    text: str | None = None
    if rules.kind is RobotsKind.RULES:
        if body is None or rules._parser is None:
            return None
        text = _decode(body, max_bytes)
    return {
        "kind": rules.kind.value,
        "fetched_at": rules.fetched_at,
        "expires_at": rules.expires_at,
        "failures": rules.failures,
        "crawl_delay": rules.crawl_delay,
        "text": text,
    }


def robots_from_state(data: dict[str, object], user_agent: str) -> RobotsRules | None:
    """The verdict ``robots_state`` saved, for ``user_agent``; None when unreadable."""
    try:
        kind = RobotsKind(str(data["kind"]))
        fetched_at = float(data["fetched_at"])  # type: ignore[arg-type]
        expires_at = float(data["expires_at"])  # type: ignore[arg-type]
        failures = int(data.get("failures") or 0)  # type: ignore[call-overload]
        text = data.get("text")
        if kind is not RobotsKind.RULES:
            delay = data.get("crawl_delay")
            return RobotsRules(
                kind,
                fetched_at,
                expires_at,
                failures=failures,
                crawl_delay=float(delay) if isinstance(delay, int | float) else None,
            )
        if not isinstance(text, str):
            return None
        token = product_token(user_agent)
        parser, crawl_delay = _parse_rules(text.encode("utf-8"), token, len(text.encode()) + 1)
        signal = content_signal_of(text, token)
    except (KeyError, ValueError, TypeError):
        return None
    except Exception:  # a malformed saved text must never take the crawl down
        logger.warning("robots: unreadable saved rules ignored", exc_info=True)
        return None
    return RobotsRules(
        kind,
        fetched_at,
        expires_at,
        failures=failures,
        crawl_delay=crawl_delay,
        content_signal=signal,
        _parser=parser,
        _token=token,
    )


def clamp_crawl_delay(delay: float | None, max_delay: float) -> tuple[float | None, bool]:
    """(delay to use, parked). A missing, negative or non-finite delay -> ``(None,
    False)``. A delay above ``max_delay`` -> ``(delay, True)``: the host is parked
    rather than crawled at a faster pace than it asked for; the site's own value is
    returned so that anything still sent is never faster than requested."""
    if delay is None or not math.isfinite(delay) or delay < 0:
        return None, False
    if delay > max_delay:
        return delay, True
    return delay, False


def given_up(known: RobotsRules | None, give_up: int) -> bool:
    """robots.txt failed ``give_up`` times in a row (RFC 9309 2.3.1.3)."""
    return known is not None and known.kind is RobotsKind.DISALLOW_ALL and known.failures >= give_up


class RobotsCache:
    """In-memory LRU of ``RobotsRules`` per host key (pure; no IO, no clock)."""

    __slots__ = ("_entries", "_max_entries")

    def __init__(self, max_entries: int = 100_000) -> None:
        if max_entries < 1:
            raise ValueError("max_entries must be at least 1")
        self._max_entries = max_entries
        self._entries: OrderedDict[str, RobotsRules] = OrderedDict()

    def get(self, host: str, now: float) -> RobotsRules | None:
        """The live rules of ``host``; None when absent or expired (fetch again)."""
        rules = self._entries.get(host)
        if rules is None or now >= rules.expires_at:
            return None
        self._entries.move_to_end(host)
        return rules

    def previous(self, host: str) -> RobotsRules | None:
        """The last rules stored for ``host``, expired or not (for failure backoff)."""
        return self._entries.get(host)

    def put(self, host: str, rules: RobotsRules) -> None:
        self._entries[host] = rules
        self._entries.move_to_end(host)
        while len(self._entries) > self._max_entries:
            self._entries.popitem(last=False)

    def __len__(self) -> int:
        return len(self._entries)
