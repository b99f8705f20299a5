"""SURT keys (Sort-friendly URI Reordering Transform) for CDX/CDXJ indexes.

Contract of :func:`surt`, matching the default key of the Internet Archive's ``surt``
package (what pywb and the Wayback Machine compute at lookup time) for http(s) URLs::

    'http://www.Example.com:8080/a?b=1'  ->  'com,example:8080)/a?b=1'

* the URL is parsed with the WHATWG rules (IDNA host, default port dropped, dot segments
  removed); the scheme, userinfo and fragment are dropped;
* a leading ``www.`` / ``wwwN.`` label is dropped and the host labels are reversed and
  joined with commas (IP addresses too, like the reference implementation);
* path and query are unescaped repeatedly, then only control bytes, space, non-ASCII,
  ``#`` and ``%`` are re-escaped, and the result is lower-cased;
* a trailing ``/`` is dropped unless the path is ``/``;
* common session-id parameters (``jsessionid``, ``phpsessid``, ``sid``,
  ``aspsessionidXXXXXXXX``, ``cfid``/``cftoken``) are removed, and the query parameters
  are sorted; an empty query is dropped.

Anything that is not an http(s) URL is returned unchanged (``dns:``, ``warcinfo:``...).
"""

from __future__ import annotations

import re
from urllib.parse import unquote_to_bytes

from ada_url._ada_wrapper import ffi, lib

__all__ = ["surt"]

_WWW = re.compile(r"^www\d*\.")
_PCT = re.compile(rb"%[0-9A-Fa-f]{2}")
# Query session ids, as the reference canonicalizer recognises them (lower-cased input).
_QUERY_SESSION = (
    re.compile(r"^jsessionid=[0-9a-z]{32}$"),
    re.compile(r"^phpsessid=[0-9a-z]{32}$"),
    re.compile(r"^sid=[0-9a-f]{32}$"),
    re.compile(r"^aspsessionid[a-z]{8}=[a-z]{24}$"),
    re.compile(r"^cfid=[^&]+$"),
    re.compile(r"^cftoken=[^&]+$"),
)
_PATH_SESSION = re.compile(r";jsessionid=[0-9a-z]{32}(?=[;/]|$)")
_KEEP = frozenset(range(0x21, 0x7F)) - {ord("#"), ord("%")}


def _components(url: str) -> tuple[str, str, str] | None:
    """(host with non-default port, pathname, query without '?') of an http(s) URL."""
    try:
        ub = url.strip().encode()
    except UnicodeEncodeError:
        return None
    u = lib.ada_parse(ub, len(ub))
    try:
        if not lib.ada_is_valid(u) or lib.ada_get_scheme_type(u) not in (0, 2):
            return None
        parts = []
        for get in (lib.ada_get_host, lib.ada_get_pathname, lib.ada_get_search):
            s = get(u)
            parts.append(ffi.unpack(s.data, s.length).decode() if s.length else "")
    finally:
        lib.ada_free(u)
    return parts[0], parts[1], parts[2][1:]


def _unescape_fully(text: str) -> bytes:
    raw = text.encode()
    # Each pass undoes one layer of escaping; stop once nothing changes.
    while _PCT.search(raw):
        decoded = unquote_to_bytes(raw)
        if decoded == raw:
            break
        raw = decoded
    return raw


def _minimal_escape(raw: bytes) -> str:
    keep = _KEEP
    return "".join(chr(b) if b in keep else f"%{b:02X}" for b in raw)


def _massage(text: str) -> str:
    if "%" in text or not text.isascii() or any(c <= " " for c in text):
        text = _minimal_escape(_unescape_fully(text))
    return text.lower()


def _query_key(query: str) -> str:
    pieces = []
    for piece in query.split("&"):
        if any(p.match(piece) for p in _QUERY_SESSION):
            continue
        pieces.append(piece)
    pieces.sort()
    joined = "&".join(pieces)
    return joined if joined.strip("&") else ""


def surt(url: str) -> str:
    """The SURT key of ``url`` (see the module contract)."""
    parts = _components(url)
    if parts is None:
        return url
    host, path, query = parts
    host = _WWW.sub("", host.lower(), count=1)
    port = ""
    if not host.startswith("[") and ":" in host:
        host, _, port = host.partition(":")
        port = ":" + port
    elif host.startswith("[") and "]:" in host:
        host, _, port = host.partition("]:")
        host, port = host + "]", ":" + port
    host_key = ",".join(reversed(host.split("."))) if not host.startswith("[") else host
    path = _PATH_SESSION.sub("", _massage(path))
    if len(path) > 1 and path.endswith("/"):
        path = path[:-1]
    key = f"{host_key}{port}){path or '/'}"
    if query:
        q = _query_key(_massage(query))
        if q:
            key += "?" + q
    return key
