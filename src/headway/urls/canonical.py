"""URL canonicalization: the one rule that decides when two links name the same page.

Contract of :func:`canonicalize`:

* The input is resolved against ``base`` with the WHATWG URL Standard (ada-url), so a
  link resolves exactly as a browser resolves it. Anything a browser rejects, anything
  that is not ``http``/``https``, and anything that cannot be encoded returns ``None``:
  the link is skipped. As in browsers, an invalid ``base`` makes every link unusable,
  absolute ones included.
* From the WHATWG serialization (which already lower-cases scheme and host, applies IDNA,
  removes the default port and dot segments, strips tabs/newlines and surrounding
  whitespace), the canonical form also:

  - drops the fragment;
  - normalizes percent-encoding (RFC 3986 6.2.2): hex digits upper-case, and escapes of
    unreserved characters (``A-Z a-z 0-9 - . _ ~``) decoded; reserved escapes such as
    ``%2F`` are kept;
  - removes tracking query parameters (exact names in ``strip_params`` and names starting
    with a prefix in ``strip_prefixes``, compared case-insensitively) and empty ``&&``
    pieces;
  - sorts the query parameters by name (stable: repeated names keep their order) when
    ``sort_query`` is set;
  - drops a ``?`` left with nothing after it;
  - removes userinfo (``user:password@``): credentials found in a link are never sent
    to a server nor written anywhere, and ``http://user:pw@host/`` names the same page as
    ``http://host/``;
  - keeps path and query case.

The result is a fixed point: ``canonicalize(canonicalize(u)) == canonicalize(u)``.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from ada_url._ada_wrapper import ffi, lib

__all__ = [
    "DEFAULT_OPTIONS",
    "DEFAULT_TRACKING_PARAMS",
    "CanonOptions",
    "canonicalize",
    "canonicalize_links",
    "canonicalize_many",
    "host_key",
]

#: Query parameters that only identify a click or a campaign, never the resource.
#: Names are matched case-insensitively; ``utm_*`` is handled by ``strip_prefixes``.
DEFAULT_TRACKING_PARAMS: frozenset[str] = frozenset(
    {
        "gclid",  # Google Ads click id
        "gclsrc",  # Google Ads click source
        "dclid",  # Google Display / DoubleClick click id
        "gbraid",  # Google Ads (iOS app-to-web)
        "wbraid",  # Google Ads (iOS web-to-app)
        "_ga",  # Google Analytics cross-domain linker
        "_gl",  # Google Analytics linker (gtag)
        "fbclid",  # Facebook click id
        "msclkid",  # Microsoft Ads click id
        "yclid",  # Yandex click id
        "twclid",  # Twitter/X click id
        "ttclid",  # TikTok click id
        "li_fat_id",  # LinkedIn first-party ad tracking
        "igshid",  # Instagram share id
        "mc_cid",  # Mailchimp campaign id
        "mc_eid",  # Mailchimp subscriber id
        "_hsenc",  # HubSpot
        "_hsmi",  # HubSpot
        "mkt_tok",  # Marketo
        "oly_anon_id",  # Omeda
        "oly_enc_id",  # Omeda
        "vero_id",  # Vero
        "wickedid",  # Wicked Reports
        "rb_clickid",  # Rakuten
        "s_cid",  # Adobe campaign id
        "ef_id",  # Adobe Advertising Cloud
    }
)

_HTTP = 0  # ada SchemeType.HTTP
_HTTPS = 2  # ada SchemeType.HTTPS

_PCT = re.compile(r"%([0-9A-Fa-f]{2})")
_UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
# Every escape, in any hex-digit case, maps to its unreserved character or upper-case form.
_PCT_MAP: dict[str, str] = {}
for _b in range(256):
    _hex = f"{_b:02x}"
    _norm = chr(_b) if _b in _UNRESERVED else "%" + _hex.upper()
    for _hi in {_hex[0], _hex[0].upper()}:
        for _lo in {_hex[1], _hex[1].upper()}:
            _PCT_MAP[_hi + _lo] = _norm


def _pct_repl(m: re.Match[str]) -> str:
    return _PCT_MAP[m.group(1)]


@dataclass(frozen=True, slots=True)
class CanonOptions:
    """What canonicalization removes or reorders in the query."""

    #: Exact parameter names to drop (matched case-insensitively; store them lower-case).
    strip_params: frozenset[str] = DEFAULT_TRACKING_PARAMS
    #: Parameter name prefixes to drop (lower-case).
    strip_prefixes: tuple[str, ...] = ("utm_",)
    #: Sort parameters by name (stable). Lossy per RFC 3986, but merges common duplicates.
    sort_query: bool = True


DEFAULT_OPTIONS = CanonOptions()


def _resolve(url: str, base: bytes | None) -> str | None:
    """WHATWG href of ``url`` (against ``base``) when it is http(s), else None."""
    try:
        ub = url.encode()
    except UnicodeEncodeError:
        return None
    if base is None:
        u = lib.ada_parse(ub, len(ub))
    else:
        u = lib.ada_parse_with_base(ub, len(ub), base, len(base))
    try:
        if not lib.ada_is_valid(u):
            return None
        if lib.ada_get_scheme_type(u) not in (_HTTP, _HTTPS):
            return None
        if lib.ada_has_credentials(u):
            _strip_credentials(u)
        s = lib.ada_get_href(u)
        href: str = ffi.unpack(s.data, s.length).decode()
        return href
    finally:
        lib.ada_free(u)


def _strip_credentials(u: object) -> None:
    """Remove username and password from a parsed ada URL (in place)."""
    lib.ada_set_username(u, b"", 0)
    lib.ada_set_password(u, b"", 0)


def _finish(href: str, options: CanonOptions) -> str:
    """Apply the post-WHATWG rules to a valid http(s) href."""
    i = href.find("#")  # an unescaped '#' can only start the fragment
    if i >= 0:
        href = href[:i]
    if "%" in href:
        href = _PCT.sub(_pct_repl, href)
    q = href.find("?")  # an unescaped '?' can only start the query
    if q < 0:
        return href
    query = href[q + 1 :]
    head = href[:q]
    if not query:
        return head
    strip = options.strip_params
    prefixes = options.strip_prefixes
    kept: list[str] = []
    for piece in query.split("&"):
        if not piece:
            continue
        name = piece.split("=", 1)[0].lower()
        if name in strip or (prefixes and name.startswith(prefixes)):
            continue
        kept.append(piece)
    if not kept:
        return head
    if options.sort_query and len(kept) > 1:
        kept.sort(key=_param_name)
    return head + "?" + "&".join(kept)


def _param_name(piece: str) -> str:
    return piece.split("=", 1)[0]


def canonicalize(
    url: str, base: str | None = None, options: CanonOptions = DEFAULT_OPTIONS
) -> str | None:
    """Canonical form of ``url`` resolved against ``base``; None when the link is unusable."""
    if base is None:
        href = _resolve(url, None)
    else:
        try:
            bb = base.encode()
        except UnicodeEncodeError:
            return None
        href = _resolve(url, bb)
    if href is None:
        return None
    return _finish(href, options)


def canonicalize_many(
    base: str, hrefs: Iterable[str], options: CanonOptions = DEFAULT_OPTIONS
) -> list[str]:
    """Canonical forms of every usable href on a page, de-duplicated, first-seen order."""
    return canonicalize_links(base, hrefs, options)[0]


def canonicalize_links(
    base: str, hrefs: Iterable[str], options: CanonOptions = DEFAULT_OPTIONS
) -> tuple[list[str], int]:
    """``canonicalize_many`` plus how many usable hrefs carried credentials (removed).

    This is the parser's hot path: the base is encoded once, an href written several
    times on the page is resolved once (counted in C first; the result is the same, in
    the same first-seen order), and hrefs without a query, fragment or escape skip the
    Python-level rules entirely.
    """
    try:
        bb = base.encode()
    except UnicodeEncodeError:
        return [], 0
    seen: set[str] = set()
    out: list[str] = []
    add = seen.add
    append = out.append
    parse = lib.ada_parse_with_base
    valid = lib.ada_is_valid
    scheme = lib.ada_get_scheme_type
    get_href = lib.ada_get_href
    has_credentials = lib.ada_has_credentials
    free = lib.ada_free
    unpack = ffi.unpack
    blen = len(bb)
    stripped = 0
    for raw, times in Counter(hrefs).items():
        try:
            ub = raw.encode()
        except UnicodeEncodeError:
            continue
        u = parse(ub, len(ub), bb, blen)
        try:
            if not valid(u) or scheme(u) not in (_HTTP, _HTTPS):
                continue
            if has_credentials(u):
                _strip_credentials(u)
                stripped += times
            s = get_href(u)
            href: str = unpack(s.data, s.length).decode()
        finally:
            free(u)
        if "?" in href or "#" in href or "%" in href:
            href = _finish(href, options)
        if href not in seen:
            add(href)
            append(href)
    return out, stripped


def host_key(url: str) -> str:
    """Politeness key of a canonical URL: lower-case host, plus ``:port`` if not default.

    For a canonical URL this is the WHATWG ``host`` (userinfo excluded). An input that is
    not a URL at all yields the empty string.
    """
    start = url.find("//")
    if start < 0:
        return ""
    start += 2
    end = url.find("/", start)  # a canonical URL always has a path after its host
    authority = url[start:] if end < 0 else url[start:end]
    for ch in "?#":
        j = authority.find(ch)
        if j >= 0:
            authority = authority[:j]
    at = authority.rfind("@")
    if at >= 0:
        authority = authority[at + 1 :]
    return authority.lower()
