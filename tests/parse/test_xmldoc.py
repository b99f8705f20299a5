"""load_xml: hostile XML is refused with a reason, sizes are capped."""

from __future__ import annotations

import gzip

import pytest

from headway.parse.xmldoc import XmlLimits, gunzip_head, load_xml, local_name

BILLION_LAUGHS = (
    b'<?xml version="1.0"?>\n<!DOCTYPE lolz [\n <!ENTITY lol "lol">\n'
    + b"".join(
        f' <!ENTITY lol{i} "{("&lol" + (str(i - 1) if i > 1 else "") + ";") * 10}">\n'.encode()
        for i in range(1, 10)
    )
    + b"]>\n<urlset><url><loc>&lol9;</loc></url></urlset>"
)
XXE = (
    b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>'
    b"<urlset><url><loc>&xxe;</loc></url></urlset>"
)
EXTERNAL_DTD_REF = (
    b'<?xml version="1.0"?><!DOCTYPE x SYSTEM "http://127.0.0.1:9/x.dtd">'
    b"<urlset><url><loc>&foo;</loc></url></urlset>"
)
PARAMETER_ENTITY = (
    b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY % p SYSTEM "http://127.0.0.1:9/p">%p;]><urlset/>'
)
PLAIN = b'<?xml version="1.0"?><urlset><url><loc>http://a.test/&amp;x</loc></url></urlset>'


@pytest.mark.parametrize(
    ("body", "prefix"),
    [
        (BILLION_LAUGHS, "xml-entities"),
        (XXE, "xml-entities"),
        (EXTERNAL_DTD_REF, "xml-entities"),
        (PARAMETER_ENTITY, "xml-entities"),
        (b'<!DOCTYPE x [<!ENTITY unused "b">]><urlset/>', "xml-entities"),
        (b"<urlset><url>", "xml-malformed"),
        (b"", "xml-malformed"),
        (b"   \n", "xml-malformed"),
        (b"\x1f\x8b\x08garbage", "xml-malformed"),
        (b"not xml at all", "xml-malformed"),
    ],
)
def test_refused(body: bytes, prefix: str) -> None:
    loaded = load_xml(body)
    assert loaded.root is None
    assert loaded.refused is not None and loaded.refused.startswith(prefix), loaded.refused


def test_predefined_entities_are_fine() -> None:
    loaded = load_xml(PLAIN)
    assert loaded.refused is None
    assert loaded.root.find("url/loc").text == "http://a.test/&x"


def test_size_caps_plain_and_gzip() -> None:
    limits = XmlLimits(max_bytes=1000)
    big = b"<urlset>" + b" " * 2000 + b"</urlset>"
    assert (load_xml(big, limits).refused or "").startswith("too-large")
    # a small gzip body that inflates past the cap (a gzip bomb) is refused too
    bomb = gzip.compress(b"<urlset>" + b" " * 10_000_000 + b"</urlset>")
    assert len(bomb) < 20_000
    assert (load_xml(bomb, limits).refused or "").startswith("too-large")
    assert load_xml(gzip.compress(PLAIN), limits).refused is None


def test_exactly_at_the_cap_is_accepted() -> None:
    body = PLAIN + b" " * (200 - len(PLAIN))
    assert len(body) == 200
    assert load_xml(body, XmlLimits(max_bytes=200)).refused is None
    assert load_xml(gzip.compress(body), XmlLimits(max_bytes=200)).refused is None
    assert load_xml(gzip.compress(body + b" "), XmlLimits(max_bytes=200)).refused is not None


def test_truncated_body_is_refused() -> None:
    assert (load_xml(PLAIN, truncated="length").refused or "").startswith("truncated")


def test_helpers() -> None:
    assert local_name("{http://www.sitemaps.org/schemas/sitemap/0.9}loc") == "loc"
    assert local_name("loc") == "loc"
    assert gunzip_head(gzip.compress(b"<urlset>hello"))[:8] == b"<urlset>"
    assert gunzip_head(b"<urlset>") == b"<urlset>"
