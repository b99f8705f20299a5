"""``headway export --wacz``: a crawl of the simulated web packaged as a WACZ that the
``wacz`` package's validator accepts and that pywb, importing the WACZ itself
(``wb-manager add --unpack-wacz``), replays byte for byte with no request reaching the
server; and the WACZ of a crawl killed mid-run (unsorted index, a torn last record, a
partial crawl log line), made without changing the crawl directory; and the WACZ of a
shared crawl of two nodes on Redis, from both nodes' directories."""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from warcio.archiveiterator import ArchiveIterator

from headway.crashpoints import ENV as CRASH_ENV
from headway.testing.simweb import HostSpec, SimWebSpec
from tests.integration.helpers import ThreadedSimWeb, crawl_argv
from tests.integration.test_distributed import Nodes
from tests.integration.test_pywb_replay import WAYBACK, _get, _missing_reason, _wait_up
from tests.support.redisproc import RedisServer

pytestmark = pytest.mark.slow

WB_MANAGER = WAYBACK.with_name("wb-manager")
SPEC = SimWebSpec(
    hosts=2,
    host_spec=HostSpec(pages=8, links_per_page=3, features=frozenset({"duplicates"})),
    cross_links=0.2,
    seed=2,
)


def _export(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "headway.cli", "export", *argv],
        capture_output=True,
        text=True,
        timeout=120,
    )


def _validate(wacz: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "wacz", "validate", "-f", str(wacz)],
        capture_output=True,
        text=True,
        timeout=120,
    )


def _check_package(wacz: Path) -> dict[str, bytes]:
    """Every member of the WACZ, after checking what the spec asks of the ZIP file
    independently of the validator: WARCs STORED, every file listed in
    datapackage.json with its sha256 and size, the digest file matching, the index
    sorted by bytes."""
    with zipfile.ZipFile(wacz) as zf:
        members = {i.filename: zf.read(i) for i in zf.infolist()}
        for info in zf.infolist():
            if info.filename.startswith("archive/"):
                assert info.compress_type == zipfile.ZIP_STORED, info.filename
    package = json.loads(members["datapackage.json"])
    assert package["profile"] == "data-package" and package["wacz_version"] == "1.1.1"
    listed = {r["path"]: r for r in package["resources"]}
    assert set(listed) == set(members) - {"datapackage.json", "datapackage-digest.json"}
    for path, res in listed.items():
        assert res["hash"] == "sha256:" + hashlib.sha256(members[path]).hexdigest(), path
        assert res["bytes"] == len(members[path]), path
    digest = json.loads(members["datapackage-digest.json"])
    assert digest == {
        "path": "datapackage.json",
        "hash": "sha256:" + hashlib.sha256(members["datapackage.json"]).hexdigest(),
    }
    index = members["indexes/index.cdx"].splitlines(keepends=True)
    assert index == sorted(index) and index
    return members


def _pages(members: dict[str, bytes]) -> list[dict[str, object]]:
    lines = [json.loads(x) for x in members["pages/pages.jsonl"].splitlines()]
    assert lines[0] == {"format": "json-pages-1.0", "id": "pages", "title": "All Pages"}
    return lines[1:]


def _digest_tree(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.name != "lock"
    }


@pytest.mark.skipif(not WB_MANAGER.exists(), reason=_missing_reason())
def test_a_wacz_validates_and_pywb_replays_it_without_the_server(tmp_path: Path) -> None:
    with ThreadedSimWeb(SPEC) as web:
        seeds = tmp_path / "seeds.txt"
        seeds.write_text("\n".join(web.seeds()) + "\n")
        out = tmp_path / "crawl"
        done = subprocess.run(
            crawl_argv(seeds, out, "--delay", "0"), capture_output=True, timeout=120
        )
        assert done.returncode == 0, done.stderr.decode()
        before = _digest_tree(out)
        wacz = tmp_path / "crawl.wacz"
        exported = _export(str(out), "--wacz", str(wacz), "--title", "Two simulated sites")
        assert exported.returncode == 0, exported.stderr
        assert _digest_tree(out) == before, "export changed the crawl directory"

        checked = _validate(wacz)
        assert checked.returncode == 0, checked.stdout + checked.stderr
        assert "Validation succeeded" in checked.stdout
        members = _check_package(wacz)
        warcs = sorted(p.name for p in (out / "warc").glob("*.warc.gz"))
        assert sorted(m[len("archive/") :] for m in members if m.startswith("archive/")) == warcs
        for name in warcs:
            assert members[f"archive/{name}"] == (out / "warc" / name).read_bytes()
        pages = _pages(members)
        by_url = {str(p["url"]): p for p in pages}
        for seed in web.seeds():
            assert by_url[seed]["seed"] is True, seed
            host = urlsplit(seed).hostname
            assert by_url[seed]["title"] == f"{host} /"
        assert all(p["mime"] == "text/html" for p in pages)
        assert len(pages) >= 10
        package = json.loads(members["datapackage.json"])
        assert package["title"] == "Two simulated sites"
        assert package["mainPageUrl"] in web.seeds()

        # pywb's own import of the package: its WARCs and index, nothing else
        root = tmp_path / "pywb"
        root.mkdir()
        for argv in (["init", "c"], ["add", "--unpack-wacz", "c", str(wacz)]):
            made = subprocess.run([str(WB_MANAGER), *argv], cwd=root, capture_output=True)
            assert made.returncode == 0, made.stderr.decode()
        port = _free_port()
        proc = subprocess.Popen(
            [str(WAYBACK), "--port", str(port), "--bind", "127.0.0.1"],
            cwd=root,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            _wait_up(proc, port)
            live = {}
            for p in pages:
                parts = urlsplit(str(p["url"]))
                status, body = _get(web.port, parts.path or "/", parts.netloc)
                assert status == 200
                live[str(p["url"])] = body
            served = len(web.log)
            for p in pages:
                stamp = str(p["ts"]).translate(str.maketrans("", "", "-:TZ"))
                status, replayed = _get(port, f"/c/{stamp}id_/{p['url']}")
                assert status == 200, f"pywb could not replay {p['url']} from the WACZ"
                assert replayed == live[str(p["url"])], p["url"]
            assert len(web.log) == served, "replay reached the live server"
        finally:
            proc.terminate()
            proc.wait(15)


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_wacz_of_a_crawl_killed_mid_run(tmp_path: Path) -> None:
    spec = SimWebSpec(hosts=2, host_spec=HostSpec(pages=12, links_per_page=3), seed=5)
    with ThreadedSimWeb(spec) as web:
        seeds = tmp_path / "seeds.txt"
        seeds.write_text("\n".join(web.seeds()) + "\n")
        out = tmp_path / "crawl"
        env = dict(os.environ, **{CRASH_ENV: "warc-partial:9"})
        done = subprocess.run(
            crawl_argv(seeds, out, "--delay", "0"), capture_output=True, timeout=120, env=env
        )
        assert done.returncode == -9, done.stderr.decode()
    index = (out / "index.cdxj").read_bytes().splitlines(keepends=True)
    assert index != sorted(index), "a killed crawl leaves its index in capture order"
    # the crash point tore the last WARC record in half; a kill mid-write can also leave
    # a partial index line and a partial crawl log line
    (warc,) = (out / "warc").glob("*.warc.gz")
    whole = warc.read_bytes()
    with (out / "index.cdxj").open("ab") as fh:
        fh.write(b'sim,site0)/x 20240101000000 {"url": "http://site0.sim/x", "offs')
    with (out / "crawl.log.jsonl").open("ab") as fh:
        fh.write(b'{"time":"2024-01-01T00:00:00.000Z","url":"http://si')
    before = _digest_tree(out)

    wacz = tmp_path / "killed.wacz"
    exported = _export(str(out), "--wacz", str(wacz))
    assert exported.returncode == 0, exported.stderr
    assert "1 unreadable crawl log lines skipped" in exported.stdout
    assert _digest_tree(out) == before, "export changed the crawl directory"
    checked = _validate(wacz)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    members = _check_package(wacz)
    packaged = members[f"archive/{warc.name}"]
    assert len(packaged) < len(whole) and whole.startswith(packaged)
    assert f"{len(whole) - len(packaged)} bytes of partial records left out" in exported.stdout
    records = list(ArchiveIterator(io.BytesIO(packaged)))  # reads to the end, no error
    assert records[-1].rec_type == "request"  # the last whole pair; the torn one is gone
    kept = members["indexes/index.cdx"].splitlines(keepends=True)
    assert kept == sorted(index), "every complete index line, and only those"
    for line in kept:
        fields = json.loads(line.split(b" ", 2)[2])
        assert int(fields["offset"]) + int(fields["length"]) <= len(packaged)
    pages = _pages(members)
    assert {str(p["url"]) for p in pages if p.get("seed")} == set(web.seeds())


def test_export_refuses_what_is_not_one_crawl(tmp_path: Path) -> None:
    foreign = tmp_path / "photos"
    foreign.mkdir()
    (foreign / "a.jpg").write_bytes(b"x")
    cases = [
        ([str(tmp_path / "missing")], "no crawl at"),
        ([str(foreign)], "is not a headway crawl directory (no headway.json)"),
        ([], "give the crawl directories to package"),
    ]
    for dirs, message in cases:
        done = _export(*dirs, "--wacz", str(tmp_path / "x.wacz"))
        assert done.returncode == 2, done
        assert message in done.stderr and "Traceback" not in done.stderr, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1
        assert not (tmp_path / "x.wacz").exists()


def test_a_wacz_of_a_shared_crawl_of_two_nodes(redis_server: RedisServer, tmp_path: Path) -> None:
    spec = SimWebSpec(hosts=4, host_spec=HostSpec(pages=6, links_per_page=3), seed=8)
    with ThreadedSimWeb(spec) as web:
        nodes = Nodes(redis_server.url, tmp_path, web)
        try:
            nodes.start("n0")
            nodes.start("n1", seeds=False)
            nodes.wait(90)
        finally:
            nodes.stop_all()
        for name, proc in nodes.procs.items():
            assert proc.returncode == 0, nodes.stderr(name)
    dirs = [tmp_path / "n0", tmp_path / "n1"]
    wacz = tmp_path / "shared.wacz"
    wrong = _export(*map(str, dirs), "--wacz", str(wacz), "--store", redis_server.url)
    assert wrong.returncode == 2 and "--store and --crawl-id" in wrong.stderr
    shared = ["--store", redis_server.url, "--crawl-id", nodes.crawl]
    exported = _export(*map(str, dirs), "--wacz", str(wacz), *shared)
    assert exported.returncode == 0, exported.stderr
    checked = _validate(wacz)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    members = _check_package(wacz)
    warcs = {p.name for d in dirs for p in (d / "warc").glob("*.warc.gz")}
    assert {m[len("archive/") :] for m in members if m.startswith("archive/")} == warcs
    node_lines = [x for d in dirs for x in next(d.glob("index-*.cdxj")).read_bytes().splitlines()]
    assert members["indexes/index.cdx"].splitlines() == sorted(node_lines)
    pages = _pages(members)
    logged = set(nodes.pages_logged("n0")) | set(nodes.pages_logged("n1"))
    assert {str(p["url"]) for p in pages} == logged
    assert {str(p["url"]) for p in pages if p.get("seed")} == set(web.seeds())
