"""Character encoding of a fetched page (pure).

Contract:

- ``detect_charset(content_type, body)`` names the Python codec to decode ``body`` with.
  Order of evidence: a byte-order mark; ``charset=`` in the Content-Type header; a
  ``<meta charset>`` or ``<meta http-equiv="content-type" content="...charset=...">`` in the
  first 2 KiB of the body; otherwise ``"utf-8"``. A label Python does not know, or one that
  is not a web text encoding (``base64``, ``rot13``, ``utf-7`` ...), counts as no evidence
  at that step and the search goes on.
- Labels are mapped the WHATWG Encoding way where Python's codec would be narrower than a
  browser's decoder: ``iso-8859-1`` / ``latin1`` / ``ascii`` decode as ``cp1252``,
  ``shift_jis`` as ``cp932``, ``gb2312`` / ``gbk`` as ``gb18030``, ``euc-kr`` as ``cp949``.
  A ``<meta>`` that declares UTF-16 means UTF-8 (the bytes were readable as ASCII).
- ``decode_body(body, charset)`` never raises: undecodable bytes become U+FFFD and a
  leading byte-order mark is dropped.
"""

from __future__ import annotations

import codecs
import re

__all__ = ["DEFAULT_CHARSET", "decode_body", "detect_charset", "normalize_charset"]

DEFAULT_CHARSET = "utf-8"

#: How much of the body is searched for a ``<meta>`` declaration.
META_SCAN_BYTES = 2048

_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
)

#: WHATWG labels Python does not know under that name.
_WHATWG_LABELS = {
    "x-sjis": "cp932",
    "windows-31j": "cp932",
    "ms_kanji": "cp932",
    "x-gbk": "gb18030",
    "ks_c_5601-1987": "cp949",
    "windows-949": "cp949",
    "x-mac-roman": "mac_roman",
    "macintosh": "mac_roman",
}

#: Python codec name -> codec a browser effectively uses for that label.
_WHATWG_SUPERSETS = {
    "ascii": "cp1252",
    "latin_1": "cp1252",
    "iso8859-1": "cp1252",
    "iso8859-9": "cp1254",
    "iso8859-11": "cp874",
    "tis-620": "cp874",
    "shift_jis": "cp932",
    "gb2312": "gb18030",
    "gbk": "gb18030",
    "euc_kr": "cp949",
}

#: Codecs Python knows but the web does not use as document encodings.
_NOT_WEB_ENCODINGS = frozenset(
    {"utf-7", "idna", "punycode", "unicode-escape", "raw-unicode-escape", "undefined", "mbcs"}
)

_CHARSET_PARAM = re.compile(r"""charset\s*=\s*["']?\s*([^\s"';,>/]+)""", re.IGNORECASE)
_META_TAG = re.compile(r"<meta[\s/][^<>]*", re.IGNORECASE)
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)


def normalize_charset(label: str | None) -> str | None:
    """The codec name to decode with for an encoding ``label``, or None if unusable."""
    if not label:
        return None
    label = label.strip().strip("\"'").lower()
    if not label or len(label) > 40:
        return None
    label = _WHATWG_LABELS.get(label, label)
    try:
        name = codecs.lookup(label).name
        b"a".decode(name)  # rejects bytes-to-bytes and str-to-str codecs
    except (LookupError, ValueError):
        return None
    if name in _NOT_WEB_ENCODINGS:
        return None
    return _WHATWG_SUPERSETS.get(name, name)


def _bom_charset(body: bytes) -> str | None:
    for bom, name in _BOMS:
        if body.startswith(bom):
            return name
    return None


def _header_charset(content_type: str | None) -> str | None:
    if not content_type:
        return None
    match = _CHARSET_PARAM.search(content_type)
    return normalize_charset(match.group(1)) if match else None


def _meta_charset(body: bytes) -> str | None:
    head = _COMMENT.sub("", body[:META_SCAN_BYTES].decode("latin-1"))
    for tag in _META_TAG.finditer(head):
        match = _CHARSET_PARAM.search(tag.group(0))
        if match is None:
            continue
        name = normalize_charset(match.group(1))
        if name is None:
            continue
        if name.startswith("utf-16") or name.startswith("utf-32"):
            return DEFAULT_CHARSET
        return name
    return None


def detect_charset(content_type: str | None, body: bytes) -> str:
    """The codec to decode ``body`` with (see the module contract for the order)."""
    return (
        _bom_charset(body)
        or _header_charset(content_type)
        or _meta_charset(body)
        or DEFAULT_CHARSET
    )


def decode_body(body: bytes, charset: str) -> str:
    """``body`` as text; bad bytes become U+FFFD, a leading BOM is dropped, never raises."""
    bom = _bom_charset(body)
    if bom is not None and bom == charset:
        body = body[3:] if bom == "utf-8" else body[2:]
    try:
        return body.decode(charset, "replace")
    except LookupError:
        return body.decode(DEFAULT_CHARSET, "replace")
