"""Charset detection and decoding (table-driven)."""

from __future__ import annotations

import codecs

import pytest

from headway.parse.charset import decode_body, detect_charset, normalize_charset


@pytest.mark.parametrize(
    ("content_type", "body", "expected"),
    [
        # nothing declared
        (None, b"<html><p>hi</p>", "utf-8"),
        ("text/html", b"", "utf-8"),
        # byte-order marks win over everything
        ("text/html; charset=iso-8859-1", codecs.BOM_UTF8 + b"<p>x", "utf-8"),
        (None, codecs.BOM_UTF16_LE + "<p>x".encode("utf-16-le"), "utf-16-le"),
        (None, codecs.BOM_UTF16_BE + "<p>x".encode("utf-16-be"), "utf-16-be"),
        # the header beats the meta
        ("text/html; charset=Shift_JIS", b'<meta charset="utf-8">', "cp932"),
        ('text/html; charset="utf-8"', b"<meta charset=latin1>", "utf-8"),
        ("text/html;charset=windows-1251", b"", "cp1251"),
        # meta declarations
        (None, b'<head><meta charset="windows-1252"></head>', "cp1252"),
        (None, b"<META CHARSET=EUC-JP>", "euc_jp"),
        (
            "text/html",
            b'<meta http-equiv="Content-Type" content="text/html; charset=koi8-r">',
            "koi8-r",
        ),
        (None, b"<meta name=x content=y><meta charset='gbk'>", "gb18030"),
        # a meta past the first 2 KiB does not count
        (None, b" " * 2100 + b"<meta charset=koi8-r>", "utf-8"),
        # a meta in a comment does not count
        (None, b"<!-- <meta charset=koi8-r> --><p>", "utf-8"),
        # WHATWG label mapping
        ("text/html; charset=ISO-8859-1", b"", "cp1252"),
        ("text/html; charset=latin1", b"", "cp1252"),
        ("text/html; charset=us-ascii", b"", "cp1252"),
        ("text/html; charset=x-sjis", b"", "cp932"),
        ("text/html; charset=euc-kr", b"", "cp949"),
        # a meta declaring UTF-16 was readable as ASCII: it means UTF-8
        (None, b"<meta charset=utf-16>", "utf-8"),
        # unknown or non-text labels are no evidence; the search goes on
        ("text/html; charset=no-such-thing", b"<meta charset=koi8-r>", "koi8-r"),
        ("text/html; charset=base64", b"", "utf-8"),
        ("text/html; charset=rot13", b"", "utf-8"),
        ("text/html; charset=utf-7", b"", "utf-8"),
        (None, b"<meta charset=" + b"x" * 5000 + b">", "utf-8"),
    ],
)
def test_detect_charset(content_type: str | None, body: bytes, expected: str) -> None:
    assert detect_charset(content_type, body) == expected


@pytest.mark.parametrize(
    ("label", "expected"),
    [("UTF8", "utf-8"), (" 'cp1252' ", "cp1252"), ("", None), (None, None), ("idna", None)],
)
def test_normalize_charset(label: str | None, expected: str | None) -> None:
    assert normalize_charset(label) == expected


def test_cp1252_body_decodes_smart_quotes() -> None:
    text = "“quoted” — €5"
    body = f"<html><p>{text}</p>".encode("cp1252")
    charset = detect_charset("text/html; charset=iso-8859-1", body)
    assert charset == "cp1252"
    assert text in decode_body(body, charset)


def test_shift_jis_body_from_meta() -> None:
    text = "日本語のページ"
    body = f'<html><head><meta charset="shift_jis"></head><body>{text}'.encode("shift_jis")
    charset = detect_charset(None, body)
    assert charset == "cp932"
    assert text in decode_body(body, charset)


@pytest.mark.parametrize(
    ("body", "charset"),
    [
        (codecs.BOM_UTF8 + "é".encode(), "utf-8"),
        (codecs.BOM_UTF16_LE + "é".encode("utf-16-le"), "utf-16-le"),
        (codecs.BOM_UTF16_BE + "é".encode("utf-16-be"), "utf-16-be"),
    ],
)
def test_decode_drops_bom(body: bytes, charset: str) -> None:
    assert detect_charset(None, body) == charset
    assert decode_body(body, charset) == "é"


def test_decode_replaces_bad_bytes_and_unknown_codec() -> None:
    assert decode_body(b"ok\xff\xfe", "utf-8") == "ok\ufffd\ufffd"
    assert decode_body(b"ok\xc3\xa9", "no-such-codec") == "oké"
