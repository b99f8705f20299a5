"""``headway extract`` over a WARC file written by warcio (not by headway): text records
referring to the responses, signals honoured, the index's offsets reading the records
back, and a second run skipping what is done."""

from __future__ import annotations

import gzip
import io
import subprocess
import sys
from pathlib import Path

import pytest
from warcio.archiveiterator import ArchiveIterator
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

PARA = (
    "<p>The harbour was quiet on Sunday morning, and the fishing boats stayed tied to "
    "the quay while the crews waited for the wind to turn before the next tide.</p>"
)
PAGES = {
    "https://news.example/a": (b"", PARA * 4),
    "https://news.example/reserved": (b'<meta name="robots" content="noai">', PARA * 3),
}


def _write_warc(path: Path) -> dict[str, str]:
    """A WARC of warcio's own making: two HTML responses (one gzip-encoded), an image,
    a request and a revisit. Returns url -> response record id."""
    ids = {}
    with path.open("wb") as f:
        writer = WARCWriter(f, gzip=True)
        for i, (url, (head, body)) in enumerate(PAGES.items()):
            html = (
                f"<html><head><title>t</title>{head.decode()}</head><body><article>"
                f"<h1>Harbour news</h1>{body}</article></body></html>"
            ).encode()
            headers = [("Content-Type", "text/html; charset=utf-8")]
            if i == 0:
                html = gzip.compress(html)
                headers.append(("Content-Encoding", "gzip"))
            http = StatusAndHeaders("200 OK", headers, protocol="HTTP/1.1")
            rec = writer.create_warc_record(
                url, "response", payload=io.BytesIO(html), http_headers=http
            )
            ids[url] = rec.rec_headers.get_header("WARC-Record-ID")
            writer.write_record(rec)
            req = writer.create_warc_record(
                url,
                "request",
                payload=io.BytesIO(b""),
                http_headers=StatusAndHeaders("GET / HTTP/1.1", [], is_http_request=True),
            )
            writer.write_record(req)
        png = StatusAndHeaders("200 OK", [("Content-Type", "image/png")], protocol="HTTP/1.1")
        writer.write_record(
            writer.create_warc_record(
                "https://news.example/x.png",
                "response",
                payload=io.BytesIO(b"\x89PNG...."),
                http_headers=png,
            )
        )
    return ids


def _extract(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "headway.cli", "extract", "--quiet", "--workers", "1", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def _conversions(path: Path) -> dict[str, tuple[object, str]]:
    with path.open("rb") as f:
        return {
            str(r.rec_headers.get_header("WARC-Target-URI")): (
                r.rec_headers,
                r.content_stream().read().decode(),
            )
            for r in ArchiveIterator(f)
            if r.rec_type == "conversion"
        }


def test_extract_over_a_foreign_warc(tmp_path: Path) -> None:
    source = tmp_path / "in" / "foreign.warc.gz"
    source.parent.mkdir()
    ids = _write_warc(source)
    out = tmp_path / "out"
    proc = _extract(str(source.parent), "--out", str(out), "--index")
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "1 held back" in proc.stdout
    texts = _conversions(out / "text-foreign.warc.gz")
    assert set(texts) == {"https://news.example/a"}  # the noai page is held back
    headers, body = texts["https://news.example/a"]
    assert headers.get_header("WARC-Refers-To") == ids["https://news.example/a"]  # type: ignore[attr-defined]
    assert headers.get_header("WARC-Identified-Content-Language") == "eng"  # type: ignore[attr-defined]
    assert body.startswith("Harbour news\n\nThe harbour was quiet")
    pq = pytest.importorskip("pyarrow.parquet")
    rows = pq.read_table(out / "index" / "foreign.parquet").to_pylist()
    assert {r["url"] for r in rows} == {*PAGES, "https://news.example/x.png"}
    for r in rows:  # the offsets frame the records of the source file
        with source.open("rb") as f:
            f.seek(r["warc_record_offset"])
            raw = f.read(r["warc_record_length"])
        rec = next(iter(ArchiveIterator(io.BytesIO(raw))))
        assert rec.rec_headers.get_header("WARC-Target-URI") == r["url"]
    by_url = {r["url"]: r for r in rows}
    assert by_url["https://news.example/reserved"]["ai_train"] == "no"
    assert by_url["https://news.example/a"]["content_languages"] == "eng"
    # resumable: done files are skipped
    again = _extract(str(source), "--out", str(out), "--index")
    assert again.returncode == 0 and "1 skipped" in again.stdout
    # --text-use any writes the reserved page too
    anyway = _extract(str(source), "--out", str(tmp_path / "any"), "--text-use", "any")
    assert anyway.returncode == 0, anyway.stderr
    assert set(_conversions(tmp_path / "any" / "text-foreign.warc.gz")) == set(PAGES)


def test_bad_input_is_one_line(tmp_path: Path) -> None:
    proc = _extract(str(tmp_path / "missing.warc.gz"), "--out", str(tmp_path / "o"))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.count("\n") == 1 and "no such file" in proc.stderr
    junk = tmp_path / "junk.warc.gz"
    junk.write_bytes(b"not a warc at all")
    proc = _extract(str(junk), "--out", str(tmp_path / "o"))
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "junk.warc.gz" in proc.stderr
