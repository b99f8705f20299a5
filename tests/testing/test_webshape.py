"""The soak's web: its shape (long tail, behaviours) and the pages a correct crawler
fetches from it, computed from the graph alone."""

from __future__ import annotations

from headway.testing.graph import (
    UNIQUE_BRANCHES,
    Feature,
    HostSpec,
    Kind,
    SimWebSpec,
    kind_of,
    links_of,
    unique_depth,
)
from headway.testing.webshape import (
    HUGE_HOSTS,
    Reachable,
    ShapedWeb,
    linked,
    reachable,
    shaped_web,
)


def url_of(host: int, path: str, query: str) -> str:
    return f"http://site{host}.sim:8000{path}" + (f"?{query}" if query else "")


def reach(shape: ShapedWeb, depth: int = 6, budget: int = 10**6) -> Reachable:
    return reachable(shape, url_of, max_depth=depth, host_budget=budget)


def test_the_shape_has_a_long_tail_and_every_behaviour() -> None:
    shape = shaped_web(2000, 40_000, seed=3)
    sizes = sorted((shape.host_pages(h) for h in range(2000)), reverse=True)
    assert sizes[:HUGE_HOSTS] == [4000] * HUGE_HOSTS
    assert sizes[1000] <= 5  # most hosts: a handful of pages
    assert 34_000 <= sum(sizes) <= 44_000
    specs = [shape.web.spec_for(h) for h in range(2000)]
    assert specs[0].features == {Feature.UNIQUE_URLS}
    assert any(s.crawl_delay for s in specs) and any(s.delay for s in specs)
    assert any(Feature.TRAP in s.features for s in specs)
    assert any(Feature.SESSION_IDS in s.features for s in specs)
    assert any(s.robots is None for s in specs)
    assert any(s.robots and "Disallow: /p/" in s.robots for s in specs)
    assert shape.pushback and {p.status for p in shape.pushback} <= {429, 503}
    assert shaped_web(2000, 40_000, seed=3) == shape  # deterministic


def test_the_unique_url_host_is_a_comb_whose_depths_are_exact() -> None:
    spec = HostSpec(pages=0, features=frozenset({Feature.UNIQUE_URLS}))
    web = SimWebSpec(hosts=1, host_spec=spec)
    assert kind_of(spec, "/u/0-1").kind is Kind.HTML
    assert kind_of(spec, "/u/x-1").kind is Kind.OTHER
    spine = [ln.path for ln in links_of(web, 0, "/u/0-2")]
    assert spine == ["/", "/u/0-3", *(f"/u/{UNIQUE_BRANCHES + j}-1" for j in (1, 2, 3))]
    assert [ln.path for ln in links_of(web, 0, "/u/5-1")] == ["/", "/u/5-2"]
    assert unique_depth("/u/0-2") == 2
    assert unique_depth(f"/u/{UNIQUE_BRANCHES + 1}-1") == 3  # started from /u/0-2
    assert unique_depth("/u/5-4") == 2 + 4


def test_reachable_cuts_the_unique_host_at_the_depth_limit() -> None:
    shape = shaped_web(20, 300, seed=1)
    for depth in (3, 6):
        got = {u for u in reach(shape, depth).pages if u.startswith("http://site0.sim:8000/u/")}
        # the spine to the limit, and each branch started at spine depth d: depth - d
        want = depth + UNIQUE_BRANCHES * depth * (depth - 1) // 2
        assert len(got) == want
        for u in got:
            d = unique_depth(u.split(":8000")[1])
            assert d is not None and d <= depth


def test_reachable_obeys_robots_and_leaves_traps_out() -> None:
    shape = shaped_web(2000, 8000, seed=2)
    r = reach(shape)
    for h in range(2000):
        spec = shape.web.spec_for(h)
        home = url_of(h, "/", "")
        if spec.robots == "User-agent: *\nDisallow: /\n":
            assert not any(u.startswith(home) for u in r.pages)
        elif spec.robots and spec.robots.startswith("User-agent: *\nDisallow: /p/"):
            prefix = spec.robots.split("Disallow: ")[1].strip()
            assert not any(u.startswith(url_of(h, prefix, "")) for u in r.pages)
    assert not any("/cal/" in u or "?sid=" in u for u in r.pages)
    assert any("/cal/" in u for u in r.traps) and any("?sid=" in u for u in r.traps)


def test_every_page_of_a_plain_host_is_reachable() -> None:
    shape = shaped_web(50, 800, seed=4)
    r = reach(shape)
    for h in range(1, 50):
        spec = shape.web.spec_for(h)
        if spec.robots == "User-agent: *\nDisallow: /private/\n" and not spec.features:
            pages = {url_of(h, f"/p/{i}", "") for i in range(spec.pages)}
            assert pages <= r.pages
            assert url_of(h, "/", "") in r.pages


def test_hosts_over_the_budget_are_named_not_enumerated() -> None:
    shape = shaped_web(20, 2000, seed=1)
    r = reach(shape, budget=150)
    big = shape.web.host_name(1)  # a huge host: 200 pages
    assert r.over_budget[big] > 150
    assert not any(u.startswith(f"http://{big}:8000/") for u in r.pages)


def test_linked_is_what_the_fetched_pages_link_to_within_the_depth_limit() -> None:
    shape = shaped_web(20, 300, seed=1)
    homes = {(h, "/") for h in range(20)}
    assert linked(shape, [], max_depth=3) == homes
    got = linked(shape, [(0, "/"), (0, "/u/0-3")], max_depth=3)
    # the home page links the spine's first page; /u/0-3 (depth 3) links only deeper ones
    assert got == homes | {(0, "/u/0-1")}
    page = next(ln for ln in links_of(shape.web, 1, "/p/0") if not ln.query)
    assert (page.host, page.path) in linked(shape, [(1, "/p/0")], max_depth=3)
