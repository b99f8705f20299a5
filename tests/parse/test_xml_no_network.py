"""A sitemap or a feed never expands an entity nor loads a DTD or anything else over the
network, also when the DTD is external: a ``SYSTEM`` identifier pointing at a loopback
server the test runs, which must see no request (and would hand out entity definitions
that put a link in the document if it were asked)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from headway.parse.handlers import run_task
from headway.parse.page import ParseTask
from headway.parse.xmldoc import load_xml

#: What the server answers to any path: a DTD that defines the entities the documents
#: refer to, each expanding to a link the crawl must never see.
PLANTED = "http://planted.test/from-the-dtd"
DTD = f'<!ENTITY foo "{PLANTED}">\n<!ENTITY % p "">\n'.encode()


class _DtdServer:
    """A loopback HTTP server that records every request it is sent."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        seen = self.requests

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                seen.append(self.path)
                self.send_response(200)
                self.send_header("Content-Type", "application/xml-dtd")
                self.send_header("Content-Length", str(len(DTD)))
                self.end_headers()
                self.wfile.write(DTD)

            def log_message(self, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> _DtdServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


@pytest.fixture(scope="module")
def _running_server() -> Iterator[_DtdServer]:
    with _DtdServer() as server:
        yield server


@pytest.fixture
def dtd_server(_running_server: _DtdServer) -> _DtdServer:
    _running_server.requests.clear()
    return _running_server


def _sitemap(doctype: str, loc: str) -> bytes:
    return (
        f'<?xml version="1.0"?>{doctype}'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        f"<url><loc>{loc}</loc></url></urlset>"
    ).encode()


def _feed(doctype: str, loc: str) -> bytes:
    return (
        f'<?xml version="1.0"?>{doctype}<rss version="2.0"><channel><title>t</title>'
        f"<item><link>{loc}</link></item></channel></rss>"
    ).encode()


def _documents(base: str, dtd_file: str) -> dict[str, tuple[str, str]]:
    """(DOCTYPE, <loc> text) of each hostile document, by name."""
    return {
        # a DTD on disk (no network needed to load it) that defines the entity used
        "file-dtd-entity": (f'<!DOCTYPE urlset SYSTEM "{dtd_file}">', "&foo;"),
        # a DTD on disk, no entity used: the document is read without loading it
        "file-dtd-unused": (f'<!DOCTYPE urlset SYSTEM "{dtd_file}">', "http://a.test/ok"),
        # an external DTD that defines the entity the document uses
        "external-dtd-entity": (f'<!DOCTYPE urlset SYSTEM "{base}/external.dtd">', "&foo;"),
        # an external DTD with a public id, and no entity used: loading it is the harm
        "external-dtd-public": (
            f'<!DOCTYPE urlset PUBLIC "-//X//DTD X//EN" "{base}/public.dtd">',
            "http://a.test/ok",
        ),
        # an external entity (XXE) over the network
        "external-entity": (
            f'<!DOCTYPE urlset [<!ENTITY foo SYSTEM "{base}/entity">]>',
            "&foo;",
        ),
        # a parameter entity pulled in from the network inside the internal subset
        "parameter-entity": (
            f'<!DOCTYPE urlset [<!ENTITY % p SYSTEM "{base}/param.dtd"> %p;]>',
            "&foo;",
        ),
        # an internal entity: never expanded
        "internal-entity": (f'<!DOCTYPE urlset [<!ENTITY foo "{PLANTED}">]>', "&foo;"),
    }


@pytest.mark.parametrize(
    "name",
    [
        "file-dtd-entity",
        "file-dtd-unused",
        "external-dtd-entity",
        "external-dtd-public",
        "external-entity",
        "parameter-entity",
        "internal-entity",
    ],
)
@pytest.mark.parametrize("handler", ["sitemap", "feed"])
def test_no_entity_expanded_and_no_request_sent(
    dtd_server: _DtdServer, tmp_path: Path, name: str, handler: str
) -> None:
    dtd_file = tmp_path / "local.dtd"
    dtd_file.write_bytes(DTD)
    doctype, loc = _documents(dtd_server.base, dtd_file.as_uri())[name]
    make = _sitemap if handler == "sitemap" else _feed
    body = make(doctype, loc)
    loaded = load_xml(body)
    parsed = run_task(ParseTask(url="http://a.test/doc.xml", body=body, handler=handler))
    # nothing reached the server: no DTD, no entity, no parameter entity was loaded
    assert dtd_server.requests == []
    # and nothing the server would have said (or the document's own entity) got through
    assert all(PLANTED not in link for link in parsed.links), parsed.links
    if loc.startswith("&"):
        assert loaded.root is None and loaded.refused is not None
        assert parsed.refused is not None and parsed.refused.startswith("xml-entities")
    else:
        # without an entity in use the document is read as it is, its DTD never fetched
        assert loaded.refused is None, loaded.refused
        assert loaded.root.getroottree().docinfo.externalDTD is None  # not loaded
        assert parsed.links == ("http://a.test/ok",)


def test_the_server_answers_when_asked(dtd_server: _DtdServer) -> None:
    """The test's server is reachable, so no request in the test above means none sent."""
    from urllib.request import urlopen

    with urlopen(f"{dtd_server.base}/external.dtd", timeout=5) as answer:
        assert answer.read() == DTD
    assert dtd_server.requests == ["/external.dtd"]
