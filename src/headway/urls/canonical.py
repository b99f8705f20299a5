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


_HEX = frozenset("0123456789ABCDEFabcdef")


def _pct_repl(m: re.Match[str]) -> str:
    out = _PCT_MAP[m.group(1)]
    if len(out) == 1 and out in _HEX:
        # a hex digit decoded after a bare '%' (or '%' and one hex digit) would make an
        # escape that was not there ("%%33e" -> "%3e"): kept escaped, so the meaning stays
        # and canonicalizing again changes nothing
        i, text = m.start(), m.string
        if text[i - 1 : i] == "%" or (text[i - 2 : i - 1] == "%" and text[i - 1 : i] in _HEX):
            return "%" + m.group(1).upper()
    return out


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


#: Hrefs that are absolute http(s) URLs: they resolve the same against every valid base.
_ABSOLUTE = ("http://", "https://")
#: Second characters that make an href starting with ``/`` something other than a path
#: from the base's root (``//host``, ``/\\host``, or a removed tab or newline before one).
_NOT_ROOT_PATH = frozenset("/\\\t\n\r")
#: First characters that make an href other than a path from the base's directory: a
#: root path, a query or fragment of the base itself, or white space and control
#: characters (stripped first).
_NOT_DIR_PATH = frozenset("/\\?#" + "".join(map(chr, range(33))))
#: Hrefs resolved per generation of the cache below (two generations are kept).
RESOLVED_CACHE_HALF = 8192


class _ResolvedCache:
    """What an href resolved to, kept across pages for the hrefs whose resolution
    depends on only part of the base (site navigation repeats on every page of a site):
    keyed by the href alone for an absolute http(s) URL, by the base's origin for a path
    from the root, by the base's directory for a path from there (an href with a ``:``,
    which could name the base's own scheme, is never kept). Values: the canonical URL
    (None when unusable) and whether credentials were removed from it.

    Bounded: two generations of at most ``RESOLVED_CACHE_HALF`` entries plus one page's
    hrefs each (a full generation becomes the older one before a page); an entry found
    in the older one is carried into the newer one. Only valid for one ``CanonOptions``:
    other options empty it.
    """

    def __init__(self) -> None:
        self.new: dict[object, tuple[str | None, bool]] = {}
        self.old: dict[object, tuple[str | None, bool]] = {}
        self.options: CanonOptions | None = None

    def for_options(self, options: CanonOptions) -> _ResolvedCache:
        if options != self.options:
            self.new, self.old, self.options = {}, {}, options
        return self

    def rotate_if_full(self) -> None:
        if len(self.new) >= RESOLVED_CACHE_HALF:
            self.old, self.new = self.new, {}


_resolved = _ResolvedCache()


def _base_parts(bb: bytes) -> tuple[str, str] | None:
    """Origin (``scheme://userinfo@host:port``) and directory (up to the last ``/`` of
    the path) of the WHATWG serialization of an http(s) base; None for any other base."""
    u = lib.ada_parse(bb, len(bb))
    try:
        if not lib.ada_is_valid(u) or lib.ada_get_scheme_type(u) not in (_HTTP, _HTTPS):
            return None
        s = lib.ada_get_href(u)
        href: str = ffi.unpack(s.data, s.length).decode()
    finally:
        lib.ada_free(u)
    # in a serialization '/' cannot occur in userinfo or host, nor '?' / '#' before the
    # query / fragment; a special URL's path always starts with '/'
    head = href.split("#", 1)[0].split("?", 1)[0]
    origin = head[: head.index("/", head.index("//") + 2)]
    return origin, head[: head.rindex("/") + 1]


def canonicalize_links(
    base: str, hrefs: Iterable[str], options: CanonOptions = DEFAULT_OPTIONS
) -> tuple[list[str], int]:
    """``canonicalize_many`` plus how many usable hrefs carried credentials (removed).

    This is the parser's hot path: the base is encoded once, an href written several
    times on the page is resolved once (counted in C first; the result is the same, in
    the same first-seen order), hrefs already resolved on an earlier page against a base
    with the same origin or directory are not resolved again (``_ResolvedCache``), and
    hrefs without a query, fragment or escape skip the Python-level rules entirely.
    """
    try:
        bb = base.encode()
    except UnicodeEncodeError:
        return [], 0
    parts = _base_parts(bb)
    if parts is None:  # not an http(s) base: every href resolved here, nothing kept
        origin = directory = ""
        new: dict[object, tuple[str | None, bool]] = {}
        old: dict[object, tuple[str | None, bool]] = {}
    else:
        origin, directory = parts
        cache = _resolved.for_options(options)
        cache.rotate_if_full()
        new, old = cache.new, cache.old
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
        key: object
        if parts is None:
            key = None
        elif raw.startswith(_ABSOLUTE):
            key = raw
        elif raw[:1] == "/":
            key = (origin, raw) if raw[1:2] not in _NOT_ROOT_PATH else None
        elif raw and raw[0] not in _NOT_DIR_PATH and ":" not in raw:
            key = (directory, raw)
        else:
            key = None
        known = None if key is None else new.get(key)
        if known is None and key is not None:
            known = old.get(key)
            if known is not None:
                new[key] = known
        if known is None:
            known = (None, False)
            try:
                ub = raw.encode()
            except UnicodeEncodeError:
                ub = None
            if ub is not None:
                u = parse(ub, len(ub), bb, blen)
                try:
                    if valid(u) and scheme(u) in (_HTTP, _HTTPS):
                        creds = bool(has_credentials(u))
                        if creds:
                            _strip_credentials(u)
                        s = get_href(u)
                        href: str = unpack(s.data, s.length).decode()
                        if "?" in href or "#" in href or "%" in href:
                            href = _finish(href, options)
                        known = (href, creds)
                finally:
                    free(u)
            if key is not None:
                new[key] = known
        href_or_none, creds = known
        if href_or_none is None:
            continue
        if creds:
            stripped += times
        if href_or_none not in seen:
            add(href_or_none)
            append(href_or_none)
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


def clear_resolved_cache() -> None:
    """Forget every href resolved so far (for measurements of a cold start)."""
    _resolved.new, _resolved.old = {}, {}
