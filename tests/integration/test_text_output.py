"""A crawl with ``--text``: one conversion record per HTML page answered 200, referring
to its response record, with its language in the record, the crawl log and the index;
and a crawl without it writes none of that."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from warcio.archiveiterator import ArchiveIterator

from headway.runtime.node import Node
from headway.testing.simweb import HostSpec, SimWeb, SimWebSpec
from tests.integration.helpers import crawl_settings, read_crawl_log

pytestmark = pytest.mark.slow


def _spec() -> SimWebSpec:
    features = frozenset({"duplicates", "non-html", "errors"})
    return SimWebSpec(hosts=2, host_spec=HostSpec(pages=8, links_per_page=3, features=features))


def _records(directory: Path) -> list[Any]:
    out = []
    for path in sorted(directory.glob("*.warc.gz")):
        with path.open("rb") as f:
            for rec in ArchiveIterator(f):
                out.append((path.name, rec.rec_headers, rec.content_stream().read()))
    return out


def _response_id(out: Path, name: str, offset: int) -> str:
    with (out / "warc" / name).open("rb") as f:
        f.seek(offset)
        rec = next(iter(ArchiveIterator(f)))
        assert rec.rec_type == "response"
        return str(rec.rec_headers.get_header("WARC-Record-ID"))


async def test_text_records_refer_to_their_responses(tmp_path: Path) -> None:
    out = tmp_path / "c"
    async with SimWeb(_spec()) as web:
        settings = crawl_settings(out, text=True)
        summary = await Node(settings, web.seeds()).run()
        assert summary.stopped_by == "finished"
    log = read_crawl_log(out)
    written = [e for e in log if e.get("text") == "written"]
    assert len(written) >= 10
    # every HTML page answered 200 has a text verdict; nothing else has one
    for e in log:
        html_ok = e["status"] == 200 and e["handler"] == "html" and not e["revisit"]
        assert ("text" in e) == html_ok, e
    texts = [r for r in _records(out / "text") if r[1].get_header("WARC-Type") == "conversion"]
    assert len(texts) == len(written)
    by_ref = {h.get_header("WARC-Refers-To"): (h, body) for _, h, body in texts}
    assert len(by_ref) == len(texts)  # none twice
    for e in written:
        headers, body = by_ref[_response_id(out, e["warc_file"], e["warc_offset"])]
        assert headers.get_header("WARC-Target-URI") == e["url"]
        assert headers.get_header("Content-Type") == "text/plain"
        assert headers.get_header("WARC-Block-Digest").startswith("sha1:")
        assert headers.get_header("WARC-Identified-Content-Language") == ",".join(e["languages"])
        # the simulated web's filler is random words, so any language, but one is named
        assert e["languages"] and all(len(code) == 3 for code in e["languages"])
        host = e["url"].split("/")[2].split(":")[0]
        assert body.decode().split("\n\n")[0].startswith(host)  # its <h1>, the title
    # the index carries the languages too
    cdxj = [json.loads(line.split(" ", 2)[2]) for line in (out / "index.cdxj").open()]
    langs = {f["url"]: f.get("languages") for f in cdxj if f["mime"] == "text/html"}
    assert all(langs[e["url"]] == ",".join(e["languages"]) for e in written)


async def test_without_text_nothing_new_is_written(tmp_path: Path) -> None:
    out = tmp_path / "c"
    async with SimWeb(_spec()) as web:
        summary = await Node(crawl_settings(out), web.seeds()).run()
        assert summary.stopped_by == "finished"
    assert not (out / "text").exists()
    log = read_crawl_log(out)
    assert log and not [e for e in log if "text" in e or "languages" in e]
    assert "languages" not in (out / "index.cdxj").read_text()


def _signal_spec() -> SimWebSpec:
    reserving = HostSpec(
        pages=6,
        links_per_page=3,
        robots="User-agent: *\nContent-Signal: search=yes, ai-train=no\nDisallow: /private/\n",
    )
    return SimWebSpec(
        hosts=2,
        host_spec=HostSpec(pages=6, links_per_page=3),
        overrides={0: reserving},
        cross_links=0.0,
    )


@pytest.mark.parametrize("use", ["ai-train", "ai-input", "any"])
async def test_content_signal_is_recorded_and_honoured(tmp_path: Path, use: str) -> None:
    out = tmp_path / "c"
    async with SimWeb(_signal_spec()) as web:
        reserving = web.hosts[0]
        summary = await Node(crawl_settings(out, text=True, text_use=use), web.seeds()).run()
        assert summary.stopped_by == "finished"
        # fetching does not change: every page of the reserving host was fetched
        fetched = {r.path for r in web.log if r.host == reserving}
        assert {f"/p/{i}" for i in range(1, 6)} <= fetched
    pages = [e for e in read_crawl_log(out) if "text" in e]
    mine = [e for e in pages if reserving in e["url"]]
    other = [e for e in pages if reserving not in e["url"]]
    assert mine and other
    assert all((e["ai_train"], e["ai_input"], e["search"]) == ("no", None, "yes") for e in mine)
    assert all((e["ai_train"], e["ai_input"], e["search"]) == (None, None, None) for e in other)
    expected = "reserved: ai-train" if use == "ai-train" else "written"
    assert {e["text"] for e in mine} == {expected}
    assert {e["text"] for e in other} == {"written"}
    uris = {
        h.get_header("WARC-Target-URI")
        for _, h, _ in _records(out / "text")
        if h.get_header("WARC-Type") == "conversion"
    }
    assert uris == {e["url"] for e in pages if e["text"] == "written"}
    # the WARC files archive every page either way
    responses = {
        h.get_header("WARC-Target-URI")
        for _, h, _ in _records(out / "warc")
        if h.get_header("WARC-Type") == "response"
    }
    assert {e["url"] for e in mine} <= responses


async def test_outlinks_records_name_every_link_followed(tmp_path: Path) -> None:
    out = tmp_path / "c"
    async with SimWeb(_spec()) as web:
        summary = await Node(crawl_settings(out, outlinks=True), web.seeds()).run()
        assert summary.stopped_by == "finished"
    assert not (out / "text").exists()  # outlinks without text
    log = read_crawl_log(out)
    pages = [e for e in log if e["status"] == 200 and e["handler"] == "html" and not e["revisit"]]
    metas = [r for r in _records(out / "outlinks") if r[1].get_header("WARC-Type") == "metadata"]
    by_ref = {h.get_header("WARC-Refers-To"): (h, json.loads(body)) for _, h, body in metas}
    assert len(by_ref) == len(metas) == len(pages)
    discovered = 0
    for e in pages:
        headers, found = by_ref[_response_id(out, e["warc_file"], e["warc_offset"])]
        assert headers.get_header("Content-Type") == "application/json"
        assert headers.get_header("WARC-Target-URI") == e["url"]
        urls = {link["url"] for link in found["links"]}
        assert all(link["text"] is not None for link in found["links"])
        # every URL first discovered on this page is among its outlinks
        found_here = {x["url"] for x in log if x.get("via") == e["url"] and x["depth"] > 0}
        assert found_here <= urls, found_here - urls
        discovered += len(found_here)
    assert discovered > 10
