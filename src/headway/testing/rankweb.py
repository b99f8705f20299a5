"""A simulated web with known PageRank, and the crawl orders a crawler is measured
against: pure values, computed from the graph alone (never from a crawl).

Contract:
- ``ranked_web(hosts, pages, seed)`` is a deterministic ``SimWebSpec`` with
  ``hubs`` on (``graph.py``: log-uniform in-links, so the low-numbered hosts are hubs,
  and a directory of home pages that reaches every host from host 0), a long tail of
  host sizes (Pareto, the ``HUB_HOSTS`` largest given to hosts 0..), and a link farm of
  the last ``FARM_SHARE`` of the hosts (``FARM_PAGES`` thin near-duplicate pages each,
  ``FARM_LINKS`` links a page, all to farm pages); ``cross_links`` of an ordinary page's
  links go to other hosts, ``home_links`` of those to a home page. ``seeds(web)`` are the hub hosts'
  home pages.
- ``page_graph(web)`` lists every HTML page (a host's home page and its ``/p/`` pages)
  with its distinct followable out-links, found by following links from the seeds; every
  page is reachable (``PageGraph.pages`` is the whole web).
- ``pagerank(graph)``: PageRank (damping ``DAMPING``, uniform teleport, power iteration
  to an L1 change below ``tol``); the scores sum to 1.
- Orders (lists of page indices, at most ``budget`` long): ``bfs_order`` (first in first
  out from the seeds), ``random_order`` (a uniformly random discovered page next, Cho et
  al. 1998's worst case), ``opic_order`` (OPIC, Abiteboul et al. 2003, offline: the
  discovered page holding the most cash next; a fetched page splits its cash equally
  among its out-links), ``omniscient_order`` (the discovered page of highest true
  PageRank next). None of them knows politeness.
- ``captured(order, rank, n)``: the share of the total PageRank in the first ``n`` pages
  of ``order`` (a page counted once).
"""

from __future__ import annotations

import heapq
import random
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from headway.testing.graph import Feature, HostSpec, SimWebSpec, links_of

HUB_HOSTS = 10
FARM_SHARE = 0.01
FARM_PAGES = 150
FARM_LINKS = 40
LINKS_PER_PAGE = 8
CROSS_LINKS = 0.2
HOME_LINKS = 0.5
DAMPING = 0.85
ROBOTS = "User-agent: *\nDisallow: /private/\n"


def ranked_web(
    hosts: int = 1000,
    pages: int = 20_000,
    seed: int = 0,
    *,
    cross_links: float = CROSS_LINKS,
    home_links: float = HOME_LINKS,
) -> SimWebSpec:
    """The benchmark's web (see the module contract); ``pages`` counts the ordinary
    hosts' ``/p/`` pages (about: sizes are drawn), the farm's come on top."""
    if hosts < 2 * HUB_HOSTS or pages < hosts:
        raise ValueError(f"need hosts >= {2 * HUB_HOSTS} and pages >= hosts")
    rng = random.Random(f"ranked:{seed}")
    farm = max(1, round(hosts * FARM_SHARE))
    ordinary = hosts - farm
    raw = [rng.paretovariate(1.1) for _ in range(ordinary)]
    cap = max(2, pages // 20)
    scale = pages / sum(raw)
    sizes = [max(1, min(cap, round(r * scale))) for r in raw]
    specs: dict[int, HostSpec] = {}
    overrides: dict[int, HostSpec] = {}
    for index, size in enumerate(sizes):
        if size not in specs:
            specs[size] = HostSpec(pages=size, links_per_page=LINKS_PER_PAGE, robots=ROBOTS)
        overrides[index] = specs[size]
    spam = HostSpec(
        pages=FARM_PAGES,
        links_per_page=FARM_LINKS,
        robots=ROBOTS,
        features=frozenset({Feature.SPAM}),
    )
    for index in range(ordinary, hosts):
        overrides[index] = spam
    return SimWebSpec(
        hosts=hosts,
        host_spec=specs[sizes[0]],
        overrides=overrides,
        cross_links=cross_links,
        seed=seed,
        hubs=True,
        home_links=home_links,
        farm=(ordinary, hosts),
    )


def seeds(web: SimWebSpec) -> list[tuple[int, str]]:
    """(host, path) of the hub hosts' home pages."""
    return [(h, "/") for h in range(min(HUB_HOSTS, web.hosts))]


@dataclass(frozen=True, slots=True)
class PageGraph:
    """``pages[i]`` is (host, path); ``links[i]`` the distinct pages it links to (not
    itself); ``seeds`` the indices of the seeds; ``farm`` the indices of farm pages."""

    pages: tuple[tuple[int, str], ...]
    links: tuple[tuple[int, ...], ...]
    seeds: tuple[int, ...]
    farm: frozenset[int]

    def index(self) -> dict[tuple[int, str], int]:
        return {p: i for i, p in enumerate(self.pages)}


def page_graph(web: SimWebSpec) -> PageGraph:
    """Every HTML page of ``web`` and its out-links (see the module contract)."""
    start = seeds(web)
    ids: dict[tuple[int, str], int] = {p: i for i, p in enumerate(start)}
    order: list[tuple[int, str]] = list(start)
    out: list[tuple[int, ...]] = []
    queue = deque(range(len(start)))
    targets: list[list[int]] = [[] for _ in start]
    while queue:
        i = queue.popleft()
        host, path = order[i]
        mine: list[int] = []
        for link in links_of(web, host, path):
            if link.nofollow or link.feed or link.query:
                continue
            node = (link.host, link.path)
            j = ids.get(node)
            if j is None:
                j = ids[node] = len(order)
                order.append(node)
                targets.append([])
                queue.append(j)
            if j != i and j not in mine:
                mine.append(j)
        targets[i] = mine
    out = [tuple(t) for t in targets]
    first, end = web.farm
    farm = frozenset(i for i, (h, _) in enumerate(order) if first <= h < end)
    return PageGraph(tuple(order), tuple(out), tuple(range(len(start))), farm)


def pagerank(graph: PageGraph, *, tol: float = 1e-9, max_iter: int = 200) -> list[float]:
    """PageRank of every page of ``graph`` (see the module contract)."""
    n = len(graph.pages)
    rank = [1.0 / n] * n
    for _ in range(max_iter):
        nxt = [0.0] * n
        dangling = 0.0
        for i, outs in enumerate(graph.links):
            if not outs:
                dangling += rank[i]
                continue
            share = DAMPING * rank[i] / len(outs)
            for j in outs:
                nxt[j] += share
        base = (1.0 - DAMPING) / n + DAMPING * dangling / n
        nxt = [v + base for v in nxt]
        change = sum(abs(a - b) for a, b in zip(nxt, rank, strict=True))
        rank = nxt
        if change < tol:
            break
    total = sum(rank)
    return [r / total for r in rank]


def bfs_order(graph: PageGraph, budget: int) -> list[int]:
    seen = set(graph.seeds)
    queue = deque(graph.seeds)
    out: list[int] = []
    while queue and len(out) < budget:
        i = queue.popleft()
        out.append(i)
        for j in graph.links[i]:
            if j not in seen:
                seen.add(j)
                queue.append(j)
    return out


def random_order(graph: PageGraph, budget: int, seed: int = 0) -> list[int]:
    rng = random.Random(f"random-order:{seed}")
    seen = set(graph.seeds)
    frontier = list(graph.seeds)
    out: list[int] = []
    while frontier and len(out) < budget:
        k = rng.randrange(len(frontier))
        frontier[k], frontier[-1] = frontier[-1], frontier[k]
        i = frontier.pop()
        out.append(i)
        for j in graph.links[i]:
            if j not in seen:
                seen.add(j)
                frontier.append(j)
    return out


def _best_first(graph: PageGraph, budget: int, score: Sequence[float], *, opic: bool) -> list[int]:
    """Greedy: the discovered, unfetched page of highest ``score`` next; with ``opic``
    the scores are cash, passed on along the links of each fetched page."""
    cash = list(score)
    fetched: set[int] = set()
    heap = [(-cash[i], i) for i in graph.seeds]
    heapq.heapify(heap)
    out: list[int] = []
    while heap and len(out) < budget:
        neg, i = heapq.heappop(heap)
        if i in fetched or -neg != cash[i]:
            continue  # fetched, or a stale entry (its cash grew since)
        fetched.add(i)
        out.append(i)
        outs = graph.links[i]
        if opic and outs:
            share = cash[i] / len(outs)
            cash[i] = 0.0
        for j in outs:
            if opic:
                cash[j] += share
            if j not in fetched:
                heapq.heappush(heap, (-cash[j], j))
    return out


def opic_order(graph: PageGraph, budget: int) -> list[int]:
    start = [0.0] * len(graph.pages)
    for i in graph.seeds:
        start[i] = 1.0 / len(graph.seeds)
    return _best_first(graph, budget, start, opic=True)


def omniscient_order(graph: PageGraph, rank: Sequence[float], budget: int) -> list[int]:
    return _best_first(graph, budget, rank, opic=False)


def captured(order: Iterable[int], rank: Sequence[float], n: int) -> float:
    """Share of the total PageRank in the first ``n`` distinct pages of ``order``."""
    seen: set[int] = set()
    for i in order:
        if len(seen) >= n:
            break
        seen.add(i)
    return sum(rank[i] for i in seen) / sum(rank)
