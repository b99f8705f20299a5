"""``--dedup-from``: a second crawl of an unchanged site writes a revisit record for every
page, referring to the first crawl's capture (WARC-Refers-To-Target-URI and -Date, the
identical-payload-digest profile), in a small part of the first crawl's WARC bytes, also
when it is killed (``kill -9``) and run again; pywb replays the second crawl's captures
from the first crawl's records when both crawls are in one collection."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from warcio.archiveiterator import ArchiveIterator

from headway.crashpoints import ENV as CRASH_ENV
from headway.store.warc import REVISIT_PROFILE
from headway.testing.simweb import HostSpec, SimWebSpec
from tests.integration.helpers import ThreadedSimWeb, crawl_argv
from tests.integration.test_pywb_replay import WAYBACK, _get, _missing_reason, _wayback

pytestmark = pytest.mark.slow

SPEC = SimWebSpec(hosts=2, host_spec=HostSpec(pages=8, links_per_page=3, page_bytes=60_000), seed=4)


def _index(out: Path) -> list[tuple[str, dict[str, str]]]:
    rows = []
    for line in (out / "index.cdxj").read_text().splitlines():
        _key, stamp, body = line.split(" ", 2)
        rows.append((stamp, json.loads(body)))
    return rows


def _warc_bytes(out: Path) -> int:
    return sum(p.stat().st_size for p in (out / "warc").glob("*.warc.gz"))


def _iso(stamp: str) -> str:
    return f"{stamp[:4]}-{stamp[4:6]}-{stamp[6:8]}T{stamp[8:10]}:{stamp[10:12]}:{stamp[12:]}Z"


def test_a_second_crawl_of_an_unchanged_site_is_revisits_of_the_first(tmp_path: Path) -> None:
    with ThreadedSimWeb(SPEC) as web:
        seeds = tmp_path / "seeds.txt"
        seeds.write_text("\n".join(web.seeds()) + "\n")
        first, second = tmp_path / "first", tmp_path / "second"
        done = subprocess.run(crawl_argv(seeds, first, "--delay", "0"), capture_output=True)
        assert done.returncode == 0, done.stderr.decode()
        time.sleep(1.1)  # the second crawl's captures get later timestamps
        argv = crawl_argv(seeds, second, "--delay", "0", "--dedup-from", str(first))
        env = dict(os.environ, **{CRASH_ENV: "settled:3"})
        killed = subprocess.run(argv, capture_output=True, env=env)
        assert killed.returncode == -9, killed.stderr.decode()
        done = subprocess.run(argv, capture_output=True)  # resumed after the kill
        assert done.returncode == 0, done.stderr.decode()

        earlier = {f["url"]: (stamp, f) for stamp, f in _index(first)}
        # the first crawl's capture of each payload (a revisit there names another)
        captured = {f["digest"]: (f["url"], stamp) for stamp, f in earlier.values()}
        captured.update(
            {f["digest"]: (f["url"], s) for s, f in earlier.values() if f["mime"] != "warc/revisit"}
        )
        later = _index(second)
        pages = [(s, f) for s, f in later if not f["url"].endswith("/robots.txt")]
        assert len(pages) >= 10 and {f["url"] for _, f in pages} <= set(earlier)
        assert all(f["mime"] == "warc/revisit" for _, f in pages), "every page a revisit"
        # a revisit and its request record take about 1.1 KB a page; the simulated pages
        # compress to about 11 KB (real HTML compresses less, so its pages are larger)
        ratio = _warc_bytes(second) / _warc_bytes(first)
        assert ratio <= 0.12, f"the second crawl's WARC bytes are {ratio:.1%} of the first's"

        revisits = 0
        for warc in sorted((second / "warc").glob("*.warc.gz")):
            with warc.open("rb") as fh:
                for rec in ArchiveIterator(fh):
                    if rec.rec_type != "revisit":
                        continue
                    h = rec.rec_headers
                    url = h.get_header("WARC-Target-URI")
                    then_url, stamp = captured[h.get_header("WARC-Payload-Digest")]
                    assert h.get_header("WARC-Profile") == REVISIT_PROFILE
                    assert h.get_header("WARC-Refers-To-Target-URI") == then_url
                    assert h.get_header("WARC-Refers-To-Date") == _iso(stamp)
                    if not url.endswith("/robots.txt"):  # every page's payload is its own
                        assert then_url == url
                    revisits += 1
        assert revisits >= len(pages)

        if not WAYBACK.exists():
            pytest.skip(_missing_reason())
        both = tmp_path / "both"
        (both / "warc").mkdir(parents=True)
        lines: list[str] = []
        for out in (first, second):
            for warc in (out / "warc").glob("*.warc.gz"):
                shutil.copy(warc, both / "warc" / warc.name)
            lines += (out / "index.cdxj").read_text().splitlines(keepends=True)
        (both / "index.cdxj").write_bytes(b"".join(sorted(x.encode() for x in lines)))
        with _wayback(tmp_path, both) as port:
            for stamp, f in pages:
                parts = urlsplit(f["url"])
                status, live = _get(web.port, parts.path or "/", parts.netloc)
                assert status == 200
                status, replayed = _get(port, f"/headway/{stamp}id_/{f['url']}")
                assert status == 200, f"pywb could not replay the revisit of {f['url']}"
                assert replayed == live, f["url"]
