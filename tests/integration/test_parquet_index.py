"""The Parquet index of a crawl: a row per record, offsets that read the records back,
DuckDB reading ``index/*.parquet`` as one table, and after a ``kill -9`` at each crash
point that concerns it, the same rows as the records, none lost, none twice."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from warcio.archiveiterator import ArchiveIterator

from headway.crashpoints import CrashPoint
from headway.runtime.node import Node
from headway.testing.simweb import HostSpec, SimWeb, SimWebSpec
from tests.integration.crashcheck import check_crawl_dir
from tests.integration.helpers import TOKEN, ThreadedSimWeb, crawl_settings, read_crawl_log
from tests.integration.test_crash_points import _argv, _crash, _finish, _leased, _spec

pq = pytest.importorskip("pyarrow.parquet")
pytestmark = pytest.mark.slow


def _rows(out: Path) -> list[dict[str, object]]:
    return [
        r for p in sorted((out / "index").glob("*.parquet")) for r in pq.read_table(p).to_pylist()
    ]


def _check_rows(out: Path) -> list[dict[str, object]]:
    rows = _rows(out)
    keys = Counter((r["warc_filename"], r["warc_record_offset"]) for r in rows)
    assert rows and max(keys.values()) == 1  # none twice
    # every record the crawl log names has its row (none lost)
    logged = {
        (f"warc/{e['warc_file']}", e["warc_offset"]) for e in read_crawl_log(out) if e["warc_file"]
    }
    assert set(keys) == logged
    for r in rows:  # offsets point at the records
        with (out / str(r["warc_filename"])).open("rb") as f:
            f.seek(int(str(r["warc_record_offset"])))
            raw = f.read(int(str(r["warc_record_length"])))
        import io

        rec = next(iter(ArchiveIterator(io.BytesIO(raw))))
        assert rec.rec_type == r["warc_record_type"]
        assert rec.rec_headers.get_header("WARC-Target-URI") == r["url"]
    return rows


async def test_index_rows_read_back_and_duckdb_reads_them(tmp_path: Path) -> None:
    out = tmp_path / "c"
    spec = SimWebSpec(
        hosts=2, host_spec=HostSpec(pages=8, links_per_page=3, features=frozenset({"duplicates"}))
    )
    async with SimWeb(spec) as web:
        settings = crawl_settings(out, text=True, parquet_index=True)
        assert (await Node(settings, web.seeds()).run()).stopped_by == "finished"
    rows = _check_rows(out)
    assert {r["warc_record_type"] for r in rows} == {"response", "revisit"}
    pages = [r for r in rows if r["content_mime_type"] == "text/html" and r["fetch_status"] == 200]
    assert pages and all(r["content_languages"] for r in pages)
    assert all(isinstance(r["priority"], int) for r in pages)
    by_url = {e["url"]: e for e in read_crawl_log(out) if e["warc_file"]}
    assert all(r["priority"] == by_url[r["url"]]["priority"] for r in pages)
    cdxj = (out / "index.cdxj").read_text().splitlines()
    assert len(rows) == len(cdxj)
    duckdb = pytest.importorskip("duckdb")
    query = (
        "SELECT url_host_name, count(*) FROM read_parquet(?) "
        "WHERE fetch_status = 200 GROUP BY url_host_name ORDER BY url_host_name"
    )
    got = duckdb.execute(query, [str(out / "index" / "*.parquet")]).fetchall()
    expected = Counter(str(r["url_host_name"]) for r in rows if r["fetch_status"] == 200)
    assert got == sorted(expected.items())


CASES = {
    CrashPoint.WARC_PARTIAL: 6,
    CrashPoint.CDXJ_WRITTEN: 6,
    CrashPoint.LOG_WRITTEN: 6,
    CrashPoint.SETTLED: 2,
    CrashPoint.STORE_FLUSHED: 2,
    CrashPoint.INDEX_PART_TMP: 1,
    CrashPoint.STORE_CLOSED: 1,
}


@pytest.mark.parametrize("point", list(CASES), ids=str)
def test_index_is_repaired_after_a_crash(tmp_path: Path, point: CrashPoint) -> None:
    with ThreadedSimWeb(_spec()) as web:
        seeds = tmp_path / "seeds.txt"
        seeds.write_text("\n".join(web.seeds()) + "\n")
        out = tmp_path / "crawl"
        argv = [*_argv(seeds, out), "--parquet-index"]
        _crash(argv, f"{point}:{CASES[point]}")
        in_flight = _leased(out)
        _finish(argv)
        check_crawl_dir(out, web, web.log, web.expected_pages(TOKEN), in_flight)
    assert not list((out / "index").glob("*.tmp"))
    _check_rows(out)
