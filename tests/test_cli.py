"""The command line as a user meets it: exit codes and messages, never a traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from headway.settings import KEYS

UA = "bot/1.0 (+https://example.org/bot)"


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "headway.cli", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
    )


def test_help_documents_every_setting() -> None:
    out = run("crawl", "--help")
    assert out.returncode == 0
    for key in KEYS:
        assert key.flag in out.stdout, key.flag


def test_missing_user_agent_is_refused_with_a_reason(tmp_path: Path) -> None:
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("example.org\n")
    out = run("crawl", str(seeds), "--out", str(tmp_path / "c"))
    assert out.returncode == 2
    assert "user_agent" in out.stderr and "contact" in out.stderr
    assert "Traceback" not in out.stderr
    assert not (tmp_path / "c").exists()


def test_unreadable_seeds_and_bad_lines(tmp_path: Path) -> None:
    out = run("crawl", str(tmp_path / "nope.txt"), "--user-agent", UA, "--out", str(tmp_path / "c"))
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "nope.txt" in out.stderr
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("# only junk\nht!tp://\n\n")
    out = run("crawl", str(seeds), "--user-agent", UA, "--out", str(tmp_path / "c"))
    assert out.returncode == 2 and "Traceback" not in out.stderr


def test_incompatible_crawl_directory_is_refused(tmp_path: Path) -> None:
    crawl = tmp_path / "old"
    crawl.mkdir()
    (crawl / "headway.json").write_text(json.dumps({"format": 999, "software": "headway/9"}))
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("http://site0.sim:1/\n")
    out = run("crawl", str(seeds), "--user-agent", UA, "--out", str(crawl))
    assert out.returncode == 2
    assert "format 999" in out.stderr and "Traceback" not in out.stderr


def test_a_crawl_directory_of_another_crawl_is_refused_in_one_line(tmp_path: Path) -> None:
    """A directory of a crawl with its own frontier, given to a node of a shared crawl (and
    one of a shared crawl given without --store): exit 2, one line naming what the
    directory belongs to, before any store is contacted, nothing changed."""
    from headway.runtime.crawldir import CrawlDir, CrawlIdentity

    seeds = tmp_path / "seeds.txt"
    seeds.write_text("http://site0.sim:1/\n")
    own, joined = tmp_path / "own", tmp_path / "joined"
    for root, identity in ((own, CrawlIdentity()), (joined, CrawlIdentity("redis://h:1/0", "x"))):
        d = CrawlDir(root, identity)
        d.open()
        d.close()
    before = {p: p.read_text() for p in (own / "headway.json", joined / "headway.json")}
    out = run(
        "crawl", str(seeds), "--user-agent", UA, "--out", str(own),
        "--store", "redis://:pw@127.0.0.1:1/0", "--crawl-id", "x",
    )  # fmt: skip
    assert out.returncode == 2, out.stderr
    assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr
    assert "belongs to a crawl with its own frontier in the directory (no --store)" in (out.stderr)
    assert "not the shared crawl 'x' in redis://:***@127.0.0.1:1/0" in out.stderr
    assert "pw" not in out.stderr
    out = run("crawl", str(seeds), "--user-agent", UA, "--out", str(joined))
    assert out.returncode == 2, out.stderr
    assert "belongs to the shared crawl 'x' in redis://h:1/0" in out.stderr
    assert "give --store redis://h:1/0 --crawl-id x to resume it" in out.stderr
    assert {p: p.read_text() for p in before} == before


def test_foreign_non_empty_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "precious.txt").write_text("keep me")
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("http://site0.sim:1/\n")
    out = run("crawl", str(seeds), "--user-agent", UA, "--out", str(tmp_path))
    assert out.returncode == 2
    assert "not a headway crawl directory" in out.stderr


def test_bad_flag_value_names_the_flag(tmp_path: Path) -> None:
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("example.org\n")
    out = run("crawl", str(seeds), "--user-agent", UA, "--delay", "-3")
    assert out.returncode == 2
    assert "--delay: must be from 0 to 3600" in out.stderr


def test_status_of_a_non_crawl_directory(tmp_path: Path) -> None:
    out = run("status", str(tmp_path))
    assert out.returncode == 2 and "not a headway crawl directory" in out.stderr
    out = run("status", str(tmp_path / "typo"))
    assert out.returncode == 2 and out.stderr.strip().endswith("typo does not exist")


def test_failures_inside_a_running_crawl_are_reported_without_a_traceback(
    tmp_path: Path, capsys: object
) -> None:
    from headway.cli.commands import _report_failure

    err = BaseExceptionGroup("crawl", [OSError(28, "No space left on device")])
    assert _report_failure(err, tmp_path) == 2
    out = capsys.readouterr().err  # type: ignore[attr-defined]
    assert "I/O failure" in out and "No space left" in out
    assert "Traceback" not in out
    assert "No space left" in (tmp_path / "error.log").read_text()

    bug = BaseExceptionGroup("crawl", [RuntimeError("boom")])
    assert _report_failure(bug, tmp_path) == 1
    out = capsys.readouterr().err  # type: ignore[attr-defined]
    assert "internal error: RuntimeError: boom" in out and "Traceback" not in out
    assert (tmp_path / "error.log").read_text().count("\n--- 20") + 1 == 2


def test_unusable_seed_lines_are_skipped_listed_and_counted(tmp_path: Path) -> None:
    """An undecodable line is one more unusable line: the rest are crawled; the first
    lines skipped are listed with their numbers and the rest only counted."""
    from headway.cli.commands import SEED_PROBLEMS_LISTED
    from headway.testing.simweb import HostSpec, SimWebSpec
    from tests.integration.helpers import ThreadedSimWeb, crawl_argv, fetched_urls

    spec = SimWebSpec(hosts=2, host_spec=HostSpec(pages=3, links_per_page=2), seed=1)
    seeds = tmp_path / "seeds.txt"
    with ThreadedSimWeb(spec) as web:
        good = web.seeds()
        bad = [f"ftp://f{i}.example/".encode() for i in range(15)]
        seeds.write_bytes(
            b"\n".join([good[0].encode(), b"http://caf\xe9.sim/", *bad, good[1].encode()]) + b"\n"
        )
        argv = crawl_argv(seeds, tmp_path / "c", "--delay", "0", "--max-duration", "30")
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=60)
        fetched = set(fetched_urls(web, web.log))
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    listed = [line for line in proc.stderr.splitlines() if " skipped: " in line]
    assert len(listed) == SEED_PROBLEMS_LISTED, listed
    assert "line 2 skipped: not UTF-8" in listed[0]
    assert "line 3 skipped: unsupported scheme 'ftp'" in listed[1]
    assert f"16 unusable lines skipped in all ({SEED_PROBLEMS_LISTED} listed); 2 seeds kept" in (
        proc.stderr
    )
    assert set(good) <= fetched


def test_a_local_server_refused_by_the_address_guard_names_the_flag(tmp_path: Path) -> None:
    from headway.testing.simweb import HostSpec, SimWebSpec
    from tests.integration.helpers import ThreadedSimWeb

    spec = SimWebSpec(hosts=1, host_spec=HostSpec(pages=2, links_per_page=1), seed=1)
    seeds = tmp_path / "seeds.txt"
    with ThreadedSimWeb(spec) as web:
        seeds.write_text(web.seeds()[0] + "\n")
        out = run(
            "crawl", str(seeds), "--out", str(tmp_path / "c"), "--user-agent", UA,
            "--resolve", "*.sim=127.0.0.1", "--quiet", "--parsers", "1", "--max-duration", "30",
        )  # fmt: skip
        assert not web.log  # nothing reached the server
    assert out.returncode == 3, out.stderr  # no host of the seeds was reached
    assert "refused: loopback (--allow-loopback or --allow-private" in out.stderr, out.stderr


def test_simweb_bad_arguments_give_one_line_and_no_traceback(tmp_path: Path) -> None:
    """Bad arguments of ``headway simweb`` (out of range, a port in use, a certificate
    missing or not PEM) are one line on stderr and exit code 2."""
    import socket

    bad_pem = tmp_path / "bad.pem"
    bad_pem.write_text("not a certificate\n")
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = str(busy.getsockname()[1])
        cases = {
            ("--links", "0"): "--links must be 1..10000",
            ("--port", "99999"): "--port must be 0..65535",
            ("--page-kb", "-1"): "--page-kb must be 0..65536",
            ("--suffix", "a/b"): "--suffix must be a DNS name",
            ("--idle-timeout", "-1"): "--idle-timeout must be 0..86400 seconds",
            ("--no-resumption",): "--no-resumption needs --tls-cert",
            ("--port", port): f"simweb cannot serve on 127.0.0.1:{port}",
            ("--port", "0", "--tls-cert", str(tmp_path / "missing.pem")): "with --tls-cert",
            ("--port", "0", "--tls-cert", str(bad_pem)): "with --tls-cert",
        }
        for args, expected in cases.items():
            argv = [sys.executable, "-m", "headway.cli", "simweb", "--hosts", "1", *args]
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=60)
            assert proc.returncode == 2, (args, proc.stderr)
            assert proc.stderr.startswith("headway: error: ") and expected in proc.stderr, args
            assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr, args


def test_simweb_serves_validators_changing_pages_and_sitemaps() -> None:
    """``headway simweb --validators --change-every --change-period --features`` serves
    what a recrawl needs: ETags that a conditional GET answers with 304, and a robots.txt
    that names a sitemap."""
    import re
    import urllib.error
    import urllib.request

    argv = [sys.executable, "-m", "headway.cli", "simweb", "--hosts", "1", "--port", "0"]
    argv += ["--validators", "--change-every", "2", "--change-period", "3600"]
    argv += ["--features", "sitemaps"]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        port = re.search(r"on 127\.0\.0\.1:(\d+);", line)
        assert port, line
        base = f"http://127.0.0.1:{port.group(1)}"

        def get(path: str, etag: str | None = None) -> tuple[int, str, str | None]:
            req = urllib.request.Request(base + path, headers={"Host": "site0.sim"})
            if etag:
                req.add_header("If-None-Match", etag)
            try:
                with urllib.request.urlopen(req, timeout=10) as resp:
                    return resp.status, resp.read().decode(), resp.headers.get("ETag")
            except urllib.error.HTTPError as exc:
                return exc.code, "", exc.headers.get("ETag")

        status, robots, _ = get("/robots.txt")
        assert status == 200 and "Sitemap: " in robots and "/sitemap.xml" in robots
        for path in ("/p/0", "/p/1"):  # a changing page and a stable one
            status, body, etag = get(path)
            assert status == 200 and etag, path
            assert ("content version" in body) == (path == "/p/0")
            assert get(path, etag)[0] == 304, path
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_help_texts_read_as_written() -> None:
    """A % in a setting's help is printed as a %, and the internal bench-crawl command
    is not listed."""
    out = run("crawl", "--help")
    assert out.returncode == 0
    text = " ".join(out.stdout.split())  # argparse wraps the help
    shown = text[text.find("--warc-gzip-level INT gzip") :][:400]
    assert "(1-2: fastest, about 15% larger; 3-8:" in shown, shown
    assert "option_strings" not in out.stdout
    top = run("--help")
    assert top.returncode == 0
    assert "SUPPRESS" not in top.stdout and "bench-crawl" not in top.stdout
    assert "demo" in top.stdout


def test_abbreviated_flags_are_refused(tmp_path: Path) -> None:
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("example.org\n")
    out = run("crawl", str(seeds), "--user-agent", UA, "--max-page", "5", "--out", str(tmp_path))
    assert out.returncode == 2
    assert "unrecognized arguments: --max-page" in out.stderr
    assert run("status", "--js", str(tmp_path)).returncode == 2


def test_a_bad_environment_value_names_the_variable(tmp_path: Path) -> None:
    import os

    seeds = tmp_path / "seeds.txt"
    seeds.write_text("example.org\n")
    out = subprocess.run(
        [sys.executable, "-m", "headway.cli", "crawl", str(seeds), "--user-agent", UA],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "HEADWAY_DELAY": "soon"},
        cwd=tmp_path,
    )
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "HEADWAY_DELAY (politeness.delay): expected a number" in out.stderr


def test_demo_crawls_the_simulated_web_and_says_where_the_output_is(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "headway.cli", "demo", "--hosts", "2", "--pages", "5"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr
    crawl = tmp_path / "headway-demo"
    log = [json.loads(line) for line in (crawl / "crawl.log.jsonl").read_text().splitlines()]
    pages = [e for e in log if e["status"] == 200 and not e["url"].endswith("/robots.txt")]
    assert len({e["url"] for e in pages}) >= 2 * 5  # every host's pages (and home pages)
    assert all(".sim:" in e["url"] for e in log)
    assert list((crawl / "warc").glob("*.warc.gz"))
    assert "stopped by" in out.stdout and "finished" in out.stdout
    assert f"{Path('headway-demo') / 'warc'}/" in out.stdout
    assert "headway status headway-demo" in out.stdout
    # a second demo into the same directory is refused with one line
    again = run("demo", cwd=tmp_path)
    assert again.returncode == 2 and "already exists" in again.stderr
