"""Standard WARC tools read what headway writes, whatever the content coding: warcio's
``content_stream()`` decodes a brotli-encoded response, and ``warcio check`` passes."""

from __future__ import annotations

import gzip
import subprocess
import sys
from pathlib import Path

import brotlicffi
import pytest
from warcio.archiveiterator import ArchiveIterator

from headway.store.warc import WarcWriter
from tests.store.factory import HTML, fetch_result

ENCODERS = {
    "br": brotlicffi.compress,
    "gzip": gzip.compress,
    "identity": lambda data: data,
}


@pytest.mark.parametrize("coding", sorted(ENCODERS))
def test_encoded_response_reads_back_through_warcio(tmp_path: Path, coding: str) -> None:
    raw = ENCODERS[coding](HTML)
    result = fetch_result(
        response_headers=(("Content-Type", "text/html"), ("Content-Encoding", coding)),
        raw_body=raw,
        body=HTML,
    )
    writer = WarcWriter(tmp_path)
    writer.write_exchange(result)
    writer.close()
    [path] = sorted(tmp_path.glob("*.warc.gz"))

    with path.open("rb") as fh:
        responses = [
            rec.content_stream().read()
            for rec in ArchiveIterator(fh, check_digests="raise")
            if rec.rec_type == "response"
        ]
    assert responses == [HTML]

    check = subprocess.run(
        [sys.executable, "-m", "warcio.cli", "check", "-v", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert check.returncode == 0, check.stdout + check.stderr
    assert "Traceback" not in check.stderr
