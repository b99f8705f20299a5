"""The invariants a crawl directory must hold after any crash and a restart, read from the
files themselves and from the simulated web's own request log."""

from __future__ import annotations

import io
import json
import sqlite3
import zlib
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from warcio.archiveiterator import ArchiveIterator

from headway.frontier.store import UrlState
from headway.testing.simweb import LoggedRequest, SimWeb
from tests.integration.helpers import fetched_urls, read_crawl_log


def frontier_urls(out: Path, state: UrlState) -> set[str]:
    con = sqlite3.connect(f"file:{out / 'frontier.sqlite3'}?mode=ro", uri=True)
    try:
        rows = con.execute("SELECT url FROM urls WHERE state = ?", (int(state),))
        return {row[0] for row in rows}
    finally:
        con.close()


def assert_whole_gzip_members(path: Path) -> None:
    """``path`` is nothing but complete gzip members, one after another (a record torn
    by a crash and left in place fails here; warcio alone stops quietly at it)."""
    data = path.read_bytes()
    pos = 0
    while pos < len(data):
        inflater = zlib.decompressobj(zlib.MAX_WBITS | 16)
        try:
            inflater.decompress(data[pos:])
        except zlib.error as exc:
            raise AssertionError(f"{path.name}: bad gzip member at {pos}: {exc}") from exc
        assert inflater.eof, f"{path.name}: torn gzip member at byte {pos} of {len(data)}"
        pos = len(data) - len(inflater.unused_data)


def warc_captures(out: Path) -> Counter[str]:
    """Target URI -> number of response/revisit records, reading every WARC file to its
    end with digests checked (a torn or corrupt record fails here)."""
    captures: Counter[str] = Counter()
    for path in sorted((out / "warc").glob("*.warc.gz")):
        assert_whole_gzip_members(path)
        with path.open("rb") as fh:
            for rec in ArchiveIterator(fh, check_digests="raise"):
                rec.content_stream().read()
                if rec.rec_type in ("response", "revisit"):
                    captures[rec.rec_headers.get_header("WARC-Target-URI")] += 1
    return captures


def check_index_line(out: Path, line: str) -> str:
    """The URL of one CDXJ line, after checking that its offset and length frame exactly
    one complete gzip member holding a response or revisit record for that URL."""
    _key, stamp, body = line.split(" ", 2)
    fields = json.loads(body)
    assert len(stamp) == 14 and stamp.isdigit(), line
    path = out / "warc" / fields["filename"]
    offset, length = int(fields["offset"]), int(fields["length"])
    with path.open("rb") as fh:
        fh.seek(offset)
        member = fh.read(length)
    assert len(member) == length, f"record past the end of {path.name}: {line}"
    inflater = zlib.decompressobj(zlib.MAX_WBITS | 16)
    inflater.decompress(member)
    assert inflater.eof and not inflater.unused_data, f"not one gzip member: {line}"
    records = ArchiveIterator(io.BytesIO(member))
    rec = next(records)
    assert rec.rec_type in ("response", "revisit"), line
    uri = rec.rec_headers.get_header("WARC-Target-URI")
    assert uri == fields["url"], line
    return str(uri)


def index_lines(out: Path) -> list[str]:
    return (out / "index.cdxj").read_text().splitlines()


def check_crawl_dir(
    out: Path,
    web: SimWeb,
    log: Iterable[LoggedRequest],
    expected: set[str],
    in_flight: set[str],
) -> None:
    """Every invariant of a finished crawl that may have crashed (at most once per URL in
    ``in_flight``, the URLs leased when it died)."""
    assert frontier_urls(out, UrlState.QUEUED) == set()
    assert frontier_urls(out, UrlState.LEASED) == set()
    done = frontier_urls(out, UrlState.DONE)
    # nothing lost: every page a correct crawl must fetch was fetched and settled done
    fetched = fetched_urls(web, log)
    assert set(fetched) >= expected, sorted(expected - set(fetched))[:5]
    assert done >= expected, sorted(expected - done)[:5]
    # only what was in flight at the crash was fetched twice
    twice = {u: n for u, n in Counter(fetched).items() if n > 1}
    assert all(n == 2 and u in in_flight for u, n in twice.items()), (twice, in_flight)
    # every URL the frontier calls done has its record in a WARC file
    captures = warc_captures(out)
    assert done <= set(captures), sorted(done - set(captures))[:5]
    # every index line frames a complete record of its URL, and every URL done is
    # indexed (a record written just before a crash may be left unindexed: the URL was
    # not settled, so it is fetched, written and indexed again)
    lines = index_lines(out)
    indexed = Counter(check_index_line(out, line) for line in lines)
    encoded = [line.encode() for line in lines]
    assert encoded == sorted(encoded), "the index is not sorted (bytes order)"
    assert all(n <= captures[u] for u, n in indexed.items())
    assert done <= set(indexed), sorted(done - set(indexed))[:5]
    # the crawl log: whole lines only, one at least for every URL done
    logged = {e["url"] for e in read_crawl_log(out)}
    assert done <= logged, sorted(done - logged)[:5]
