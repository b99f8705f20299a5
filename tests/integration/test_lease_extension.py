"""Leases of URLs still in a node's pipeline are extended: with a lease shorter than the
time pages wait for a slow parser, two nodes sharing a crawl in Redis fetch no page twice
(checked from the simulated web's own request log)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from headway.runtime.parsepool import PARSE_SLEEP_ENV
from headway.testing.simweb import HostSpec, SimWebSpec
from tests.integration.helpers import TOKEN, ThreadedSimWeb, fetched_urls
from tests.integration.test_distributed import Nodes
from tests.support.redisproc import RedisServer

pytestmark = pytest.mark.slow

#: lease = total timeout + margin = 2 s; each parse takes PARSE_SLEEP, and pages of eight
#: hosts wait in the parse queue behind each other (one page per host at most: a host
#: whose page waits for a parser is not fetched again until it leaves), so many wait
#: longer than a lease
LEASE_ARGS = (
    *("--total-timeout", "1", "--read-timeout", "1", "--connect-timeout", "0.5"),
    *("--metrics-interval", "0.5"),
)
LEASE = 2.0
PARSE_SLEEP = 0.8  # long enough that the wait passes a lease even on a loaded machine


def test_pages_waiting_for_a_slow_parser_keep_their_leases(
    redis_server: RedisServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(PARSE_SLEEP_ENV, str(PARSE_SLEEP))  # the node processes inherit it
    spec = SimWebSpec(
        hosts=8, host_spec=HostSpec(pages=6, links_per_page=3), cross_links=0.3, seed=5
    )
    with ThreadedSimWeb(spec) as web:
        nodes = Nodes(redis_server.url, tmp_path, web)
        try:
            for name in ("n0", "n1"):
                nodes.start(name, extra=LEASE_ARGS)
            nodes.wait(timeout=120)
        finally:
            nodes.stop_all()
        for name, proc in nodes.procs.items():
            assert proc.returncode == 0, nodes.stderr(name)
        expected = web.expected_pages(TOKEN)
        fetched = Counter(fetched_urls(web, web.log))
    assert set(fetched) == expected
    twice = sorted(u for u, n in fetched.items() if n > 1)
    assert twice == [], f"{len(twice)} pages fetched more than once: {twice[:5]}"
    # the case under test happened: pages waited for a parser longer than a lease
    assert max(_parse_queue_ages(tmp_path / n) for n in nodes.procs) > LEASE


def _parse_queue_ages(out: Path) -> float:
    """The longest wait in the parse queue that a node's metrics.jsonl recorded."""
    oldest = 0.0
    for path in out.glob("metrics*.jsonl"):
        for line in path.read_text().splitlines():
            for stage in json.loads(line)["stages"]:
                if stage["name"] == "parse-queue":
                    oldest = max(oldest, stage["oldest_age"])
    return oldest
