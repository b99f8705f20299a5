"""WarcWriter: records read back with warcio (digests checked) and split by hand."""

from __future__ import annotations

import gzip
import os
import re
from pathlib import Path
from typing import Any

import pytest

from headway.fetch.result import FetchResult
from headway.policy.outcome import Outcome
from headway.store.warc import (
    NOT_MODIFIED_PROFILE,
    REVISIT_PROFILE,
    EarlierCapture,
    WarcWriter,
    WrittenRecord,
    payload_digest,
    warc_date,
)
from tests.store.factory import (
    HTML,
    T0,
    fetch_result,
    gzip_members,
    raw_records,
    read_records,
    record_at,
    sha1_b32,
)

NAME_RX = re.compile(r"^headway-\d{14}-(\d{5})\.warc\.gz$")


def write(
    tmp_path: Path, *results: FetchResult, **kwargs: Any
) -> tuple[WarcWriter, list[WrittenRecord]]:
    payloads = kwargs.pop("payloads", {})
    w = WarcWriter(tmp_path, **kwargs)
    written = [w.write_exchange(r, payloads) for r in results]
    w.close()
    return w, written


def only_file(tmp_path: Path) -> Path:
    files = sorted(tmp_path.glob("*.warc.gz"))
    assert len(files) == 1
    return files[0]


def test_normal_exchange_records_types_version_and_links(tmp_path: Path) -> None:
    r = fetch_result(
        response_headers=(
            ("Content-Type", "text/html; charset=utf-8"),
            ("Transfer-Encoding", "chunked"),
            ("Server", "t"),
        )
    )
    w, [rec] = write(tmp_path, r, info={"operator": "ops@example.org", "robots": "obey"})
    path = only_file(tmp_path)
    assert rec.filename == path.name and NAME_RX.match(path.name)
    recs = read_records(path)
    assert [x["type"] for x in recs] == ["warcinfo", "response", "request"]
    assert {x["version"] for x in recs} == {"WARC/1.1"}

    info, resp, req = recs
    fields = info["payload"].decode()
    for line in ("software: headway/0.1.0", "format: WARC File Format 1.1", "robots: obey"):
        assert line in fields.splitlines()
    assert info["headers"].get_header("WARC-Filename") == path.name
    info_id = info["headers"].get_header("WARC-Record-ID")

    h = resp["headers"]
    assert h.get_header("WARC-Target-URI") == r.url
    assert h.get_header("WARC-Date") == "2023-11-14T22:13:20Z" == warc_date(T0)
    assert h.get_header("WARC-IP-Address") == "127.0.0.1"
    assert h.get_header("WARC-Record-ID") == rec.record_id
    assert h.get_header("WARC-Payload-Digest") == sha1_b32(HTML) == rec.payload_digest
    assert h.get_header("WARC-Truncated") is None
    assert h.get_header("WARC-Warcinfo-ID") == info_id
    assert req["headers"].get_header("WARC-Concurrent-To") == rec.record_id
    assert h.get_header("WARC-Concurrent-To") == req["headers"].get_header("WARC-Record-ID")

    http = resp["http"]
    assert http.protocol == "HTTP/1.1" and http.statusline == "200 OK"
    assert http.get_header("Transfer-Encoding") is None
    assert http.get_header("X-Headway-Transfer-Encoding") == "chunked"
    assert http.get_header("Server") == "t"
    assert resp["payload"] == HTML

    rq = req["http"]
    assert (rq.protocol, rq.statusline) == ("GET", "/a?b=1 HTTP/1.1")
    assert rq.get_header("Host") == "example.com"
    assert rq.get_header("User-Agent") == "headway-test/1"
    assert not rec.revisit
    stats = w.statistics()
    assert (stats.files, stats.records, stats.revisits) == (1, 3, 0)
    assert stats.bytes_written == path.stat().st_size


def test_block_and_payload_digests_checked_by_hand(tmp_path: Path) -> None:
    write(tmp_path, fetch_result(), fetch_result(url="http://example.com/b", raw_body=b"x" * 5000))
    raws = raw_records(only_file(tmp_path))
    assert len(raws) == 5
    for raw in raws:
        assert raw["version"] == "WARC/1.1"
        h, block = raw["headers"], raw["block"]
        assert h["WARC-Block-Digest"] == sha1_b32(block)
        if h["WARC-Type"] in ("response", "request"):
            payload = block.partition(b"\r\n\r\n")[2]
            assert h["WARC-Payload-Digest"] == sha1_b32(payload)
    assert raws[1]["block"].endswith(HTML) and raws[3]["block"].endswith(b"x" * 5000)


def test_gzip_encoded_raw_body_is_stored_encoded(tmp_path: Path) -> None:
    raw = gzip.compress(HTML)
    r = fetch_result(
        response_headers=(("Content-Type", "text/html"), ("Content-Encoding", "gzip")),
        raw_body=raw,
        body=HTML,
    )
    _, [rec] = write(tmp_path, r)
    resp = read_records(only_file(tmp_path))[1]
    assert resp["payload"] == raw
    assert resp["http"].get_header("Content-Encoding") == "gzip"
    assert rec.payload_digest == sha1_b32(raw) == resp["headers"].get_header("WARC-Payload-Digest")


@pytest.mark.parametrize(
    ("truncated", "header"),
    [(None, None), ("length", "length"), ("time", "time"), ("decoded-length", "length")],
)
def test_truncated_bodies_are_marked(tmp_path: Path, truncated: str | None, header: str) -> None:
    write(tmp_path, fetch_result(raw_body=HTML[:10], truncated=truncated))
    resp = read_records(only_file(tmp_path))[1]
    assert resp["headers"].get_header("WARC-Truncated") == header
    assert resp["payload"] == HTML[:10]


def test_empty_bodies_are_responses_never_revisits(tmp_path: Path) -> None:
    r = fetch_result(status=204, reason="", raw_body=b"", body=b"", response_headers=())
    w, written = write(tmp_path, r, r)
    recs = read_records(only_file(tmp_path))
    assert [x["type"] for x in recs] == ["warcinfo", "response", "request", "response", "request"]
    assert recs[1]["payload"] == b""
    assert recs[1]["http"].statusline == "204 No Content"  # reason filled in
    assert [x.revisit for x in written] == [False, False]
    assert written[0].payload_digest == sha1_b32(b"") == payload_digest(b"")
    assert w.statistics().revisits == 0


def test_duplicate_payload_becomes_revisit(tmp_path: Path) -> None:
    first = fetch_result(url="http://example.com/one")
    second = fetch_result(url="http://example.com/two", started_at=T0 + 3600)
    w, (a, b) = write(tmp_path, first, second)
    assert (a.revisit, b.revisit) == (False, True)
    assert a.payload_digest == b.payload_digest
    recs = read_records(only_file(tmp_path))
    assert [x["type"] for x in recs] == ["warcinfo", "response", "request", "revisit", "request"]
    rv = recs[3]
    h = rv["headers"]
    assert h.get_header("WARC-Profile") == REVISIT_PROFILE
    assert REVISIT_PROFILE == "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"
    assert h.get_header("WARC-Refers-To-Target-URI") == "http://example.com/one"
    assert h.get_header("WARC-Refers-To-Date") == recs[1]["headers"].get_header("WARC-Date")
    assert h.get_header("WARC-Payload-Digest") == a.payload_digest
    assert h.get_header("WARC-Record-ID") == b.record_id
    assert rv["payload"] == b"" and rv["http"].statusline == "200 OK"
    assert recs[4]["headers"].get_header("WARC-Concurrent-To") == b.record_id
    raw = raw_records(only_file(tmp_path))[3]
    assert raw["block"] == rv["http_bytes"]  # headers only
    assert w.statistics().revisits == 1


def test_known_payloads_give_revisits_after_restart(tmp_path: Path) -> None:
    digest = payload_digest(HTML)
    known = {digest: ("http://example.com/orig", "2020-01-02T03:04:05Z")}
    _, [rec] = write(tmp_path, fetch_result(), payloads=known)
    assert rec.revisit
    h = read_records(only_file(tmp_path))[1]["headers"]
    assert h.get_header("WARC-Refers-To-Target-URI") == "http://example.com/orig"
    assert h.get_header("WARC-Refers-To-Date") == "2020-01-02T03:04:05Z"


def test_not_modified_becomes_server_not_modified_revisit(tmp_path: Path) -> None:
    first = fetch_result(url="http://example.com/p", response_headers=(("ETag", '"v1"'),))
    w = WarcWriter(tmp_path)
    payloads: dict[str, tuple[str, str]] = {}
    a = w.write_exchange(first, payloads)
    earlier = EarlierCapture("http://example.com/p", warc_date(T0), a.record_id)
    again = fetch_result(
        url="http://example.com/p",
        started_at=T0 + 60,
        outcome=Outcome.NOT_MODIFIED,
        status=304,
        reason="Not Modified",
        request_headers=(("If-None-Match", '"v1"'),),
        response_headers=(("ETag", '"v1"'),),
        raw_body=b"",
        body=b"",
    )
    b = w.write_exchange(again, payloads, digest=a.payload_digest, not_modified_of=earlier)
    # a 304 without an earlier capture (none stored) stays a plain response
    c = w.write_exchange(again, payloads)
    w.close()
    assert (b.revisit, c.revisit) == (True, False)
    assert b.refers_to is not None and b.refers_to.profile == NOT_MODIFIED_PROFILE
    assert w.statistics().revisits == 1 and w.statistics().not_modified == 1
    recs = read_records(only_file(tmp_path))
    assert [x["type"] for x in recs][3:] == ["revisit", "request", "response", "request"]
    h = recs[3]["headers"]
    assert h.get_header("WARC-Profile") == NOT_MODIFIED_PROFILE
    assert NOT_MODIFIED_PROFILE == "http://netpreserve.org/warc/1.1/revisit/server-not-modified"
    assert h.get_header("WARC-Refers-To-Target-URI") == "http://example.com/p"
    assert h.get_header("WARC-Refers-To-Date") == recs[1]["headers"].get_header("WARC-Date")
    assert h.get_header("WARC-Refers-To") == recs[1]["headers"].get_header("WARC-Record-ID")
    assert h.get_header("WARC-Payload-Digest") == a.payload_digest
    assert recs[3]["http"].statusline == "304 Not Modified" and recs[3]["payload"] == b""
    assert recs[4]["http"].get_header("If-None-Match") == '"v1"'
    # a 200 is never written as server-not-modified, whatever the caller passes
    d = WarcWriter(tmp_path / "x").write_exchange(first, {}, not_modified_of=earlier)
    assert not d.revisit


def test_written_record_points_at_its_gzip_member(tmp_path: Path) -> None:
    results = [fetch_result(url=f"http://example.com/{i}", raw_body=b"%d" % i) for i in range(4)]
    results.append(fetch_result(url="http://example.com/dup", raw_body=b"2"))
    _, written = write(tmp_path, *results)
    path = only_file(tmp_path)
    for r, rec in zip(results, written, strict=True):
        found = record_at(path, rec.offset, rec.length)
        assert found["type"] == ("revisit" if rec.revisit else "response")
        assert found["headers"].get_header("WARC-Record-ID") == rec.record_id
        assert found["headers"].get_header("WARC-Target-URI") == r.url
    assert [w.revisit for w in written] == [False, False, False, False, True]


def test_rotation_keeps_pairs_together_and_starts_files_with_warcinfo(tmp_path: Path) -> None:
    bodies = [os.urandom(700) for _ in range(7)]  # incompressible
    results = [
        fetch_result(url=f"http://example.com/{i}", raw_body=b) for i, b in enumerate(bodies)
    ]
    w, written = write(tmp_path, *results, max_file_size=2500)
    files = sorted(tmp_path.glob("*.warc.gz"))
    assert len(files) >= 3
    serials = [int(m.group(1)) for f in files if (m := NAME_RX.match(f.name))]
    assert serials == list(range(len(files)))
    assert {r.filename for r in written} == {f.name for f in files}
    seen = 0
    for f in files:
        recs = read_records(f)
        assert recs[0]["type"] == "warcinfo"
        types = [x["type"] for x in recs[1:]]
        assert types and types == ["response", "request"] * (len(types) // 2)
        ids = {x["headers"].get_header("WARC-Record-ID") for x in recs}
        for x in recs[1:]:
            assert x["headers"].get_header("WARC-Concurrent-To") in ids
        if len(types) > 2:  # more than one exchange: the writer kept under the cap
            assert f.stat().st_size <= 2500
        seen += len(types) // 2
    assert seen == len(results)
    assert w.statistics().files == len(files)
    assert w.statistics().records == len(files) + 2 * len(results)


def test_serial_continues_after_existing_files(tmp_path: Path) -> None:
    (tmp_path / "headway-20200101000000-00007.warc.gz.corrupt").write_bytes(b"junk")
    (tmp_path / "other-20200101000000-00042.warc.gz").write_bytes(b"")
    w = WarcWriter(tmp_path)
    assert w.current_file is None
    rec = w.write_exchange(fetch_result())
    assert rec.filename.endswith("-00008.warc.gz") and w.current_file == rec.filename
    w.close()
    assert w.current_file is None
    rec2 = WarcWriter(tmp_path).write_exchange(fetch_result(raw_body=b"other"))
    assert rec2.filename.endswith("-00009.warc.gz")


def test_results_without_response_are_refused(tmp_path: Path) -> None:
    w = WarcWriter(tmp_path)
    with pytest.raises(ValueError):
        w.write_exchange(fetch_result(status=None, raw_body=b"", error="refused"))
    w.close()
    assert list(tmp_path.glob("*.warc.gz")) == []


def test_flush_makes_records_readable_while_open(tmp_path: Path) -> None:
    w = WarcWriter(tmp_path)
    w.write_exchange(fetch_result())
    w.flush()
    assert [x["type"] for x in read_records(only_file(tmp_path))][1] == "response"
    w.close()


@pytest.mark.parametrize("level", [1, 9])
def test_compress_level_is_honoured_and_validated(tmp_path: Path, level: int) -> None:
    write(tmp_path, fetch_result(), compress_level=level)
    assert [x["type"] for x in read_records(only_file(tmp_path))][1] == "response"
    with pytest.raises(ValueError):
        WarcWriter(tmp_path, compress_level=level * 10)


@pytest.mark.parametrize(("level", "isal_level"), [(1, 0), (2, 0), (3, 1), (6, 2), (8, 2), (9, 3)])
def test_every_record_is_a_standard_gzip_member(
    tmp_path: Path, level: int, isal_level: int
) -> None:
    """Records are deflated by ISA-L at the mapped level, yet each is a plain gzip member
    that the standard library's gzip reads on its own."""
    import gzip
    import zlib

    from headway.store.warc import ISAL_LEVEL

    assert ISAL_LEVEL[level] == isal_level
    body = b"<html>" + b"<p>some text that compresses</p>" * 500 + b"</html>"
    write(tmp_path, fetch_result(raw_body=body), compress_level=level)
    data = only_file(tmp_path).read_bytes()
    members = 0
    while data:
        d = zlib.decompressobj(31)
        record = d.decompress(data)
        assert d.eof, "a complete gzip member"
        assert gzip.decompress(data[: len(data) - len(d.unused_data)]) == record
        data = d.unused_data
        members += 1
    assert members == 3  # warcinfo, response, request


@pytest.mark.parametrize(
    "result",
    [
        fetch_result(),
        fetch_result(ip=None, truncated="length", http_version="1.0"),
        fetch_result(raw_body=b"", body=b"", status=404, reason=""),
        fetch_result(
            url="http://example.com/",
            response_headers=(
                ("X-Odd", "caf\udce9 \u00e9t\u00e9"),
                ("Transfer-Encoding", "chunked"),
            ),
            request_headers=(("User-Agent", "ua"), ("Host", "example.com")),
        ),
    ],
)
def test_records_are_the_bytes_warcio_would_write(tmp_path: Path, result: FetchResult) -> None:
    """Response and request records are serialized without warcio's record objects; each
    one is byte for byte what warcio's own writer makes of the same headers and body."""
    import io

    from warcio.warcwriter import WARCWriter

    from headway.store.warc import _http_request_headers, _http_response_headers

    write(tmp_path, result)
    members = [m[2] for m in gzip_members(only_file(tmp_path).read_bytes())]
    records = raw_records(only_file(tmp_path))
    assert [r["headers"]["WARC-Type"] for r in records] == ["warcinfo", "response", "request"]
    info_id = records[0]["headers"]["WARC-Record-ID"]
    for record, member in zip(records[1:], members[1:], strict=True):
        h = record["headers"]
        kind = h["WARC-Type"]
        computed = _COMPUTED | ({"WARC-Payload-Digest"} if kind == "request" else set())
        ours = {k: h[k] for k in h if k.startswith("WARC-") and k not in computed}
        http = (
            _http_response_headers(result)
            if kind == "response"
            else _http_request_headers(result.url, result.method, result.request_headers)
        )
        ref = WARCWriter(io.BytesIO(), gzip=False, warc_version="1.1")
        rec = ref.create_warc_record(
            result.url,
            kind,
            payload=io.BytesIO(result.raw_body) if kind == "response" else None,
            length=len(result.raw_body) if kind == "response" else None,
            http_headers=http,
            warc_headers_dict=ours,
        )
        rec.rec_headers.add_header("WARC-Warcinfo-ID", info_id)
        ref.write_record(rec)
        assert member == ref.out.getvalue()


_COMPUTED = {"WARC-Warcinfo-ID", "WARC-Block-Digest"}
