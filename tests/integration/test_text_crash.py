"""A crawl with ``--text`` and ``--outlinks`` killed at the crash points around the text
record, then the same command again: the text and outlinks files are whole records only
(a torn tail is cut at the next start), every text and outlinks record refers to a
response record in the WARC files, none is there twice, and every page the crawl log
last says was written has its text record."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from warcio.archiveiterator import ArchiveIterator

from headway.crashpoints import CrashPoint
from headway.store.recovery import complete_gzip_prefix
from tests.integration.crashcheck import check_crawl_dir
from tests.integration.helpers import TOKEN, ThreadedSimWeb, read_crawl_log
from tests.integration.test_crash_points import _argv, _crash, _finish, _leased, _spec

pytestmark = pytest.mark.slow

CASES = {
    CrashPoint.WARC_WRITTEN: 6,
    CrashPoint.TEXT_WRITTEN: 6,
    CrashPoint.LOG_WRITTEN: 6,
    CrashPoint.STORE_FLUSHED: 2,
}


def _ids(directory: Path, kind: str, header: str) -> list[str]:
    out = []
    for path in sorted(directory.glob("*.warc.gz")):
        with path.open("rb") as f:
            out += [
                str(r.rec_headers.get_header(header))
                for r in ArchiveIterator(f)
                if r.rec_type == kind
            ]
    return out


def _response_id(out: Path, name: str, offset: int) -> str:
    with (out / "warc" / name).open("rb") as f:
        f.seek(offset)
        return str(next(iter(ArchiveIterator(f))).rec_headers.get_header("WARC-Record-ID"))


@pytest.mark.parametrize("point", list(CASES), ids=str)
def test_text_output_survives_a_crash(tmp_path: Path, point: CrashPoint) -> None:
    with ThreadedSimWeb(_spec()) as web:
        seeds = tmp_path / "seeds.txt"
        seeds.write_text("\n".join(web.seeds()) + "\n")
        out = tmp_path / "crawl"
        argv = [*_argv(seeds, out), "--text", "--outlinks"]
        _crash(argv, f"{point}:{CASES[point]}")
        in_flight = _leased(out)
        texts = sorted((out / "text").glob("*.warc.gz"))
        assert texts
        if point is CrashPoint.TEXT_WRITTEN:
            # what a buffer flushed mid-record leaves: half a gzip member at the end
            whole = texts[-1].read_bytes()
            texts[-1].write_bytes(whole + whole[len(whole) // 2 :][:200])
        _finish(argv)
        check_crawl_dir(out, web, web.log, web.expected_pages(TOKEN), in_flight)
    for path in [*(out / "text").glob("*.warc.gz"), *(out / "outlinks").glob("*.warc.gz")]:
        assert complete_gzip_prefix(path) == path.stat().st_size, path.name
    outlinks = _ids(out / "outlinks", "metadata", "WARC-Refers-To")
    assert outlinks and set(outlinks) <= set(_ids(out / "warc", "response", "WARC-Record-ID"))
    assert max(Counter(outlinks).values()) == 1
    responses = set(_ids(out / "warc", "response", "WARC-Record-ID"))
    refers = _ids(out / "text", "conversion", "WARC-Refers-To")
    assert refers and set(refers) <= responses
    assert max(Counter(refers).values()) == 1  # no text record twice
    last: dict[str, dict[str, object]] = {}
    for entry in read_crawl_log(out):
        last[str(entry["url"])] = entry
    written = [e for e in last.values() if e.get("text") == "written"]
    assert written
    for e in written:
        assert _response_id(out, str(e["warc_file"]), int(str(e["warc_offset"]))) in refers
