"""pywb replays a crawl from headway's own WARC files and index, as written.

The crawl directory's ``warc/*.warc.gz`` and ``index.cdxj`` are put, unchanged, into a
pywb collection; pywb's ``wayback`` server runs on a free loopback port, and every page
the index names (revisit records included) must come back byte for byte as the simulated
web served it. pywb lives in its own venv (``.venv-pywb``, made by scripts/test.sh).
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from headway.testing.simweb import HostSpec, SimWebSpec
from tests.integration.helpers import ThreadedSimWeb, crawl_argv

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
WAYBACK = Path(os.environ.get("PYWB_WAYBACK", ROOT / ".venv-pywb" / "bin" / "wayback"))


def _missing_reason() -> str:
    log = ROOT / ".pywb-install.log"
    if log.exists() and log.read_text().strip():
        return f"pywb did not install: {log.read_text().strip().splitlines()[-1]}"
    return f"pywb is not installed at {WAYBACK} (scripts/test.sh installs it)"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _get(port: int, target: str, host: str | None = None) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("GET", target, headers={"Host": host} if host else {})
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


def _wait_up(proc: subprocess.Popen[bytes], port: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, "wayback exited at start-up"
        try:
            _get(port, "/")
            return
        except OSError:
            time.sleep(0.2)
    raise AssertionError("wayback did not start listening")


@contextlib.contextmanager
def _wayback(tmp_path: Path, out: Path) -> Iterator[int]:
    """A pywb collection of the crawl in ``out`` (its WARC files and its index as
    written), served on a free loopback port for the duration; yields the port."""
    coll = tmp_path / "pywb" / "collections" / "headway"
    (coll / "archive").mkdir(parents=True)
    (coll / "indexes").mkdir()
    for warc in (out / "warc").glob("*.warc.gz"):
        shutil.copy(warc, coll / "archive" / warc.name)
    shutil.copy(out / "index.cdxj", coll / "indexes" / "index.cdxj")
    port = _free_port()
    proc = subprocess.Popen(
        [str(WAYBACK), "--port", str(port), "--bind", "127.0.0.1"],
        cwd=tmp_path / "pywb",
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        _wait_up(proc, port)
        yield port
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(15)


@pytest.mark.skipif(not WAYBACK.exists(), reason=_missing_reason())
def test_pywb_replays_every_page_from_headways_index(tmp_path: Path) -> None:
    spec = SimWebSpec(
        hosts=2,
        host_spec=HostSpec(pages=8, links_per_page=3, features=frozenset({"duplicates"})),
        cross_links=0.2,
        seed=2,
    )
    with ThreadedSimWeb(spec) as web:
        seeds = tmp_path / "seeds.txt"
        seeds.write_text("\n".join(web.seeds()) + "\n")
        out = tmp_path / "crawl"
        done = subprocess.run(
            crawl_argv(seeds, out, "--delay", "0"), capture_output=True, timeout=120
        )
        assert done.returncode == 0, done.stderr.decode()

        with _wayback(tmp_path, out) as port:
            pages = revisits = 0
            for line in (out / "index.cdxj").read_text().splitlines():
                _key, stamp, body = line.split(" ", 2)
                fields = json.loads(body)
                if fields["status"] != "200" or fields["url"].endswith("/robots.txt"):
                    continue
                url = fields["url"]
                parts = urlsplit(url)
                status, live = _get(web.port, parts.path or "/", parts.netloc)
                assert status == 200
                status, replayed = _get(port, f"/headway/{stamp}id_/{url}")
                assert status == 200, f"pywb could not replay {url} ({stamp})"
                assert replayed == live, f"{url}: replayed bytes differ from what was served"
                pages += 1
                revisits += fields["mime"] == "warc/revisit"
            assert pages >= 10
            assert revisits >= 1, "a revisit record was replayed too"


@pytest.mark.skipif(not WAYBACK.exists(), reason=_missing_reason())
def test_pywb_replays_a_recrawl_with_server_not_modified_revisits(tmp_path: Path) -> None:
    # a recrawl of pages that never change: every revisit is a 304, written as a
    # server-not-modified revisit record and indexed with status 304. pywb replays every
    # 200 capture byte for byte from that index, and loads each 304 capture as what it
    # is: the server's 304 (pywb serves a revisit of a 3xx status with its own headers
    # and no payload)
    spec = SimWebSpec(hosts=1, host_spec=HostSpec(pages=3, links_per_page=2, validators=True))
    with ThreadedSimWeb(spec) as web:
        seeds = tmp_path / "seeds.txt"
        seeds.write_text("\n".join(web.seeds()) + "\n")
        out = tmp_path / "crawl"
        argv = crawl_argv(seeds, out, "--delay", "0.05", "--recrawl")
        argv += ["--revisit-min", "1", "--revisit-max", "1", "--max-duration", "3.5"]
        done = subprocess.run(argv, capture_output=True, timeout=120)
        assert done.returncode == 0, done.stderr.decode()

        with _wayback(tmp_path, out) as port:
            seen = {"200": 0, "304": 0}
            for line in (out / "index.cdxj").read_text().splitlines():
                _key, stamp, body = line.split(" ", 2)
                fields = json.loads(body)
                url = fields["url"]
                if fields["status"] not in seen or url.endswith("/robots.txt"):
                    continue
                status, replayed = _get(port, f"/headway/{stamp}id_/{url}")
                if fields["status"] == "304":
                    assert fields["mime"] == "warc/revisit"
                    assert (status, replayed) == (304, b""), url
                else:
                    parts = urlsplit(url)
                    live_status, live = _get(web.port, parts.path or "/", parts.netloc)
                    assert (live_status, status) == (200, 200), url
                    assert replayed == live, f"{url}: replayed bytes differ from what was served"
                seen[fields["status"]] += 1
            assert seen["200"] >= 4 and seen["304"] >= 4, seen
