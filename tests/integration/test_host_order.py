"""The order between ready hosts on the simulated web, from the server's log: neither order
ever cuts a host's gap under a capacity limit. How many more hosts the importance order
reaches (131 -> 196, 107 -> 122, 124 -> 166 in three runs) is printed, not asserted: it
depends on the machine's load; the order's rule is asserted without timing in
tests/policy/test_readyheap.py and test_schedule.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from headway.runtime.node import Node
from headway.testing import rankweb
from headway.testing.simweb import SimWeb
from tests.integration.helpers import crawl_settings, page_requests, politeness_violations

pytestmark = pytest.mark.slow

DELAY = 0.05


SPEC = rankweb.ranked_web(400, 4000, seed=1)


def _most_linked(n: int) -> set[str]:
    """The ``n`` hosts linked from the most other hosts (from the graph alone)."""
    g = rankweb.page_graph(SPEC)
    sources: dict[int, set[int]] = {}
    for i, outs in enumerate(g.links):
        for j in outs:
            if g.pages[j][0] != g.pages[i][0]:
                sources.setdefault(g.pages[j][0], set()).add(g.pages[i][0])
    best = sorted(sources, key=lambda h: -len(sources[h]))[:n]
    return {SPEC.host_name(h) for h in best}


async def _crawl(tmp_path: Path, order: str) -> tuple[float, int, list[str]]:
    """The most linked hosts' share of the crawl's first half of fetches, the hosts
    reached in it, and the politeness problems."""
    spec = SPEC
    async with SimWeb(spec) as web:
        seeds = [web.url(web.hosts[h], p) for h, p in rankweb.seeds(spec)]
        settings = crawl_settings(
            tmp_path / order,
            scope="open",
            delay=DELAY,
            concurrency=4,
            max_pages=800,
            host_order=order,
        )
        await Node(settings, seeds).run()
        pages = page_requests(web.log)
        problems = politeness_violations(web.log, {}, DELAY)
    first = sorted(pages, key=lambda r: r.arrival)[: len(pages) // 2]
    hubs = _most_linked(20)
    share = sum(1 for r in first if r.host in hubs) / len(first)
    return share, len({r.host for r in first}), problems


async def test_neither_order_cuts_a_gap_under_a_capacity_limit(
    tmp_path: Path,
) -> None:
    ready_share, ready_hosts, ready_problems = await _crawl(tmp_path, "ready")
    ranked_share, ranked_hosts, ranked_problems = await _crawl(tmp_path, "importance")
    print(
        f"\nfirst 400 fetches: the 20 most linked hosts' share: ready {ready_share:.0%}, "
        f"importance {ranked_share:.0%}; hosts reached: ready {ready_hosts}, "
        f"importance {ranked_hosts}"
    )
    assert not ready_problems, ready_problems[:5]
    assert not ranked_problems, ranked_problems[:5]
    assert ready_hosts > 0 and ranked_hosts > 0
