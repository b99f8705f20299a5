"""The politeness ledger (``headway report --politeness``) agrees with the simulated
web's own request log: per host, the same number of requests, and the smallest gap
between two of them within ``GAP_AGREEMENT`` of the smallest gap between their arrivals
at the server's socket (kernel receive times); the URLs robots.txt disallowed are listed
with the robots.txt version that disallowed them; Crawl-delay and Retry-After waits are
shown kept. Then the same through the command line, as text and JSON, over two node
directories of one crawl."""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from collections import defaultdict
from pathlib import Path

import pytest

from headway.cli import main as cli_main
from headway.cli.report import read_ledger
from headway.control.target import CrawlRef
from headway.report.politeness import Ledger
from headway.runtime.node import Node
from headway.testing.simweb import HostSpec, LoggedRequest, SimWeb, SimWebSpec
from tests.integration.helpers import crawl_settings

pytestmark = pytest.mark.slow

#: How far the ledger's smallest gap (the crawler's send times) may differ from the
#: server's (its sockets' receive times): loopback delivers at once, so the two differ by
#: the time between writing a request and reading the clock, on a busy machine.
GAP_AGREEMENT = 0.010
DELAY = 0.15
CRAWL_DELAY = 0.4
RETRY_AFTER = 1.0


def _by_host(log: list[LoggedRequest]) -> dict[str, list[LoggedRequest]]:
    out: dict[str, list[LoggedRequest]] = defaultdict(list)
    for r in log:
        out[r.host].append(r)
    for reqs in out.values():
        reqs.sort(key=lambda r: r.arrival)
    return out


def _server_smallest_gap(reqs: list[LoggedRequest]) -> float:
    return min(b.arrival - a.arrival for a, b in itertools.pairwise(reqs))


def _ledger_hosts(ledger: Ledger) -> dict[str, object]:
    return {h.host.split(":")[0]: h for h in ledger.hosts}


async def _crawl(tmp_path: Path) -> tuple[Path, list[LoggedRequest]]:
    spec = SimWebSpec(
        hosts=3,
        host_spec=HostSpec(pages=8, links_per_page=3, features=frozenset({"private"})),
        overrides={1: HostSpec(pages=5, links_per_page=2, crawl_delay=CRAWL_DELAY)},
        cross_links=0.0,
    )
    out = tmp_path / "c"
    async with SimWeb(spec) as web:
        settings = crawl_settings(
            out, delay=DELAY, retry_base=0.05, retry_budget=10, max_duration=90
        )
        hot = web.hosts[2]
        crawl = asyncio.create_task(Node(settings, web.seeds()).run())
        deadline = time.monotonic() + 30
        while not any(r.host == hot and r.path != "/robots.txt" for r in web.log):
            assert time.monotonic() < deadline, "the crawl never reached the third host"
            await asyncio.sleep(0.01)
        web.set_pushback(hot, status=503, retry_after=RETRY_AFTER)
        while sum(1 for r in web.log if r.host == hot and r.status == 503) < 2:
            assert time.monotonic() < deadline + 30, "no 503 was answered"
            await asyncio.sleep(0.01)
        web.clear_pushback(hot)
        summary = await crawl
        assert summary.stopped_by == "finished"
        log = list(web.log)
    return out, log


async def test_ledger_agrees_with_the_server_log(tmp_path: Path) -> None:
    out, log = await _crawl(tmp_path)
    ledger = read_ledger(CrawlRef(out, "", None))
    hosts = _ledger_hosts(ledger)
    server = _by_host(log)
    assert set(hosts) == set(server)
    for name, reqs in server.items():
        h = hosts[name]
        assert h.requests == len(reqs), (name, h.requests, len(reqs))
        ours = h.smallest_gap.seconds
        theirs = _server_smallest_gap(reqs)
        assert abs(ours - theirs) <= GAP_AGREEMENT, (name, ours, theirs)
        assert h.short_gaps == 0
        assert h.delay_min is not None and h.delay_min >= DELAY - 1e-9
        assert len(h.robots) == sum(1 for r in reqs if r.path == "/robots.txt") >= 1
        assert all(r.digest and r.digest.startswith("sha1:") for r in h.robots)
    assert ledger.estimated == 0

    # robots.txt Disallow: /private/ : the URLs skipped, with the version that said so
    for name in ("site0.sim", "site2.sim"):
        h = hosts[name]
        assert {urlpath(s.url) for s in h.skipped} == {"/private/1"}, h.skipped
        assert h.skipped[0].robots_digest == h.robots[0].digest
        assert not any(r.path.startswith("/private/") for r in server[name])

    crawl_delayed = hosts["site1.sim"]
    assert crawl_delayed.crawl_delay == CRAWL_DELAY
    assert crawl_delayed.crawl_delay_waits == crawl_delayed.requests - 1 >= 2
    assert crawl_delayed.crawl_delay_kept == crawl_delayed.crawl_delay_waits
    assert crawl_delayed.smallest_gap.seconds >= CRAWL_DELAY - GAP_AGREEMENT

    pushed = hosts["site2.sim"]
    served_503 = [r for r in server["site2.sim"] if r.status == 503]
    assert len(pushed.retry_after) == len(served_503) >= 2
    for wait in pushed.retry_after:
        assert wait.asked == RETRY_AFTER
        assert wait.kept is True, wait


def urlpath(url: str) -> str:
    return "/" + url.split("/", 3)[3]


async def test_report_politeness_command_over_two_node_directories(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, log = await _crawl(tmp_path)
    # one crawl's log split over two node directories, as two nodes of a shared crawl
    # write them: the ledger joins them
    lines = (out / "crawl.log.jsonl").read_text().splitlines(keepends=True)
    a, b = tmp_path / "node-a", tmp_path / "node-b"
    a.mkdir()
    b.mkdir()
    (a / "crawl-a.log.jsonl").write_text("".join(lines[0::2]))
    (b / "crawl-b.log.jsonl").write_text("".join(lines[1::2]))
    whole = read_ledger(CrawlRef(out, "", None))
    rows = [(h.host, h.requests, h.smallest_gap, h.skipped, h.retry_after) for h in whole.hosts]
    joined = read_ledger(CrawlRef(a, "", None), logs=[b])
    assert [
        (h.host, h.requests, h.smallest_gap, h.skipped, h.retry_after) for h in joined.hosts
    ] == rows
    # a shared crawl: the node directories given with --logs (the store is only named)
    shared = read_ledger(CrawlRef(None, "redis://:s3cret@127.0.0.1:1/0", "news"), logs=[a, b])
    assert [
        (h.host, h.requests, h.smallest_gap, h.skipped, h.retry_after) for h in shared.hosts
    ] == rows
    assert shared.source == "crawl news in redis://:***@127.0.0.1:1/0"

    assert cli_main(["report", "--politeness", "--json", str(out)]) == 0
    data = json.loads(capsys.readouterr().out)
    server = _by_host(log)
    assert {h["host"].split(":")[0]: h["requests"] for h in data["hosts"]} == {
        k: len(v) for k, v in server.items()
    }
    assert cli_main(["report", "--politeness", str(out)]) == 0
    text = capsys.readouterr().out
    assert text.startswith("Politeness ledger: ")
    assert "disallowed" in text and "/private/1" in text
    assert "Retry-After 1 s" in text
