"""The benchmark's web with known PageRank, and the offline crawl orders."""

from __future__ import annotations

import pytest

from headway.testing import rankweb
from headway.testing.graph import SimWebSpec, links_of, log_uniform
from headway.testing.rankweb import PageGraph


def _graph(links: list[tuple[int, ...]], seeds: tuple[int, ...] = (0,)) -> PageGraph:
    pages = tuple((i, "/") for i in range(len(links)))
    return PageGraph(pages, tuple(links), seeds, frozenset())


def test_pagerank_of_a_page_and_a_dangling_page_solved_by_hand() -> None:
    # A -> B, B links nowhere (its rank is spread over both): with d = 0.85,
    # r_A = 0.075 + 0.425 r_B and r_A + r_B = 1, so r_A = 0.5 / 1.425
    rank = rankweb.pagerank(_graph([(1,), ()]))
    assert rank[0] == pytest.approx(0.5 / 1.425, abs=1e-6)
    assert rank[1] == pytest.approx(1 - 0.5 / 1.425, abs=1e-6)


def test_pagerank_of_a_cycle_is_uniform_and_a_hub_ranks_highest() -> None:
    assert rankweb.pagerank(_graph([(1,), (2,), (0,)])) == pytest.approx([1 / 3] * 3)
    star = rankweb.pagerank(_graph([(1,), (0,), (0,), (0,)]))
    assert sum(star) == pytest.approx(1.0)
    assert star[0] == max(star) and star[2] == pytest.approx(star[3])


def test_offline_orders_on_a_small_graph() -> None:
    # 0 -> 1, 2; 1 -> 3; 2 -> 3, 4; 3 -> 0; 4 -> 3
    g = _graph([(1, 2), (3,), (3, 4), (0,), (3,)])
    assert rankweb.bfs_order(g, 10) == [0, 1, 2, 3, 4]
    # OPIC: 0 gives 1/3 to each of 1, 2, 3 (ties: the lower index first); 1 gives its
    # 1/3 to 4, and 2 another 1/3: 4 (2/3) goes before 3 (1/3), unlike breadth-first
    fan = _graph([(1, 2, 3), (4,), (4,), (4,), ()])
    assert rankweb.bfs_order(fan, 10) == [0, 1, 2, 3, 4]
    assert rankweb.opic_order(fan, 10) == [0, 1, 2, 4, 3]
    assert rankweb.opic_order(fan, 3) == [0, 1, 2]
    rank = [0.1, 0.1, 0.3, 0.2, 0.3]
    assert rankweb.omniscient_order(g, rank, 10) == [0, 2, 4, 3, 1]
    assert sorted(rankweb.random_order(g, 10)) == [0, 1, 2, 3, 4]
    assert rankweb.captured([0, 2, 2, 4], rank, 2) == pytest.approx(0.4 / 1.0)


def test_the_ranked_web_is_whole_skewed_and_deterministic() -> None:
    web = rankweb.ranked_web(100, 1000, seed=4)
    g = rankweb.page_graph(web)
    every = {(h, "/") for h in range(web.hosts)} | {
        (h, f"/p/{i}") for h in range(web.hosts) for i in range(web.spec_for(h).pages)
    }
    assert set(g.pages) == every  # every page reachable from the seeds
    assert g.farm == {i for i, (h, _) in enumerate(g.pages) if h >= web.farm[0]}
    assert web.farm == (99, 100)
    inbound = [0] * web.hosts
    for i, outs in enumerate(g.links):
        for j in outs:
            if g.pages[j][0] != g.pages[i][0]:
                inbound[g.pages[j][0]] += 1
    assert inbound[0] == max(inbound)  # host 0 is the biggest hub
    assert sum(inbound[:10]) > sum(inbound[50:])
    again = rankweb.page_graph(rankweb.ranked_web(100, 1000, seed=4))
    assert again == g


def test_a_farm_links_only_into_the_farm() -> None:
    web = rankweb.ranked_web(200, 2000)
    start, end = web.farm
    for host in range(start, end):
        for i in range(0, web.spec_for(host).pages, 17):
            targets = {ln.host for ln in links_of(web, host, f"/p/{i}")}
            assert targets <= set(range(start, end))


def test_log_uniform_covers_its_range_and_favours_low_indices() -> None:
    assert log_uniform(10, 0.0) == 0 and log_uniform(10, 0.999999) == 9
    draws = [log_uniform(1000, k / 10_000) for k in range(10_000)]
    assert min(draws) == 0 and max(draws) == 999
    assert draws.count(0) > draws.count(500) * 100


def test_hubs_off_keeps_the_uniform_web() -> None:
    """A web without ``hubs`` has no home-page directory and no skew (its links are
    what they were before the option)."""
    web = SimWebSpec(hosts=8, cross_links=0.5, seed=2)
    home = links_of(web, 0, "/")
    assert all(ln.host == 0 for ln in home)
