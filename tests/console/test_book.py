"""The console's node-side records and the crawl view combined from node snapshots."""

from __future__ import annotations

from headway.console.view import crawl_view
from headway.runtime.book import ConsoleBook, History, HostBook, Problem, Problems


def test_host_book_is_bounded_and_counts_errors_by_kind() -> None:
    book = HostBook(max_hosts=3)
    for host in ("a", "b", "c", "a"):
        book.on_page(host, "ok", 10)
    book.on_page("b", "timeout", 0)
    book.on_page("b", "server_error", 5)
    book.on_page("b", "client_error", 5)  # a 4xx is an answer, not an error
    assert book.hosts["a"].pages == 2 and book.hosts["a"].bytes == 20
    assert book.hosts["b"].errors == {"timeout": 1, "server_error": 1}
    book.on_page("d", "ok", 1)  # a fourth host: the oldest recorded is forgotten
    assert list(book.hosts) == ["b", "c", "d"]


def test_problems_keep_the_last_ones_and_each_host_problem_once() -> None:
    problems = Problems(size=3)
    for i in range(5):
        problems.add(Problem(float(i), "timeout", "h", f"http://h/{i}", "timeout"))
    assert [p.url for p in problems.recent()] == ["http://h/4", "http://h/3", "http://h/2"]
    budget = Problem(9.0, "host-budget", "big.test", "", "reached --host-budget 5")
    assert problems.add_once(budget) is True
    assert problems.add_once(budget) is False
    assert [p.kind for p in problems.hosts()] == ["host-budget"]
    assert problems.recent()[0].url == "http://h/4"  # host problems kept apart


def test_history_is_one_point_per_step_for_a_bounded_span() -> None:
    history = History(step=10.0, points=4)
    t = 1000.0
    errors = 0
    for i in range(10):
        if history.due(t):
            history.add(t, float(i), 100 - i, errors)
        t += 5.0
        errors += 2
    rows = history.to_json()
    assert len(rows) == 4  # bounded
    assert [r[0] for r in rows] == [1010.0, 1020.0, 1030.0, 1040.0]  # one per 10 s
    assert all(r[3] == 4 for r in rows)  # errors since the previous point


def test_seed_state_records_the_first_fetch_and_page_errors_become_problems() -> None:
    book = ConsoleBook()
    book.seeds.use([("http://a.test/", "a.test"), ("http://b.test/", "b.test")])
    book.on_page("http://a.test/", "a.test", "ok", 200, 100, None, 5.0)
    book.on_page("http://a.test/", "a.test", "server_error", 503, 0, None, 6.0)
    book.on_page("http://b.test/x", "b.test", "timeout", None, 0, "read timed out", 7.0)
    rows = book.seeds.rows({"a.test": "rules"}, {"a.test": 2})
    assert rows[0]["first_fetch"] == "ok" and rows[0]["status"] == 200
    assert rows[0]["robots"] == "rules" and rows[0]["host_pages"] == 2
    assert rows[1]["first_fetch"] == ""  # its seed URL was not fetched yet
    recent = book.problems.recent()
    assert [(p.kind, p.url) for p in recent] == [
        ("timeout", "http://b.test/x"),
        ("server_error", "http://a.test/"),
    ]
    assert recent[0].reason == "timeout: read timed out"
    assert recent[1].reason == "server_error (HTTP 503)"


def _snap(node: str, pps: float, fetches: int, running: bool = True) -> dict[str, object]:
    return {
        "node": node,
        "time": 1000.0,
        "running": running,
        "stats": {
            "fetches": fetches,
            "requests": fetches,
            "retries": 0,
            "errors": 1,
            "outcomes": {"ok": fetches - 1, "timeout": 1},
            "pages_per_second": pps,
            "paused": False,
            "stages": [{"name": "parse", "depth": 2, "capacity": 16, "blocked_puts": 1}],
        },
        "process": {"cpu_share": 0.5, "rss_mib": 80.0, "shards_held": 8},
        "history": [[1000.0, pps, 40, 1]],
        "hosts": {
            "known": 2,
            "busiest": [{"host": f"{node}.test", "pages": fetches, "queued": 1, "error_count": 0}],
        },
        "problems": [{"at": 999.0 if node == "a" else 998.0, "kind": "timeout"}],
    }


def test_the_crawl_view_sums_nodes_and_uses_the_store_counts() -> None:
    frontier = {"queued": 40, "leased": 2, "done": 30, "failed": 1, "fetched": 31}
    view = crawl_view(
        [_snap("a", 2.0, 10), _snap("b", 3.0, 20), "not a snapshot"],  # type: ignore[list-item]
        frontier=frontier,
        beats={"a": 998.0},
        now=1001.0,
    )
    now = view["now"]
    assert now["pages"] == 31 and now["fetches"] == 30
    assert now["pages_per_second"] == 5.0
    assert now["outcomes"] == {"ok": 28, "timeout": 2} and now["errors"] == 2
    assert now["frontier"]["queued"] == 40
    assert now["stages"] == [{"name": "parse", "depth": 4, "capacity": 32, "blocked_puts": 2}]
    assert [n["node"] for n in view["nodes"]] == ["a", "b"]
    assert [n["heartbeat_age"] for n in view["nodes"]] == [3.0, 1.0]
    assert [n["shards_held"] for n in view["nodes"]] == [8, 8]
    assert view["history"] == [[1000.0, 5.0, 40, 2]]
    assert [h["host"] for h in view["hosts"]["busiest"]] == ["b.test", "a.test"]
    assert [p["at"] for p in view["problems"]] == [999.0, 998.0]
    assert view["state"] == "running"


def test_a_node_that_stopped_answering_is_shown_so_and_a_drained_crawl_finished() -> None:
    stale = crawl_view([_snap("a", 2.0, 10)], now=1000.0 + 60)
    assert stale["nodes"][0]["state"] == "not answering"
    done = crawl_view(
        [_snap("a", 0.0, 10, running=False)],
        frontier={"queued": 0, "leased": 0, "done": 10},
        now=1001.0,
    )
    assert done["state"] == "finished"


def test_the_page_says_which_figures_are_this_runs() -> None:
    """A resumed crawl's page mixes the whole crawl's figures (pages, the frontier, the
    last hour) with this run's (bytes, errors, per node and per host): each label says
    which, so that they do not read as disagreeing."""
    from importlib import resources

    html = resources.files("headway.console").joinpath("static/index.html").read_text()
    for label in (
        "pages (whole crawl)",
        "bytes (this run)",
        "errors (this run)",
        "fetches this run",
        "errors this run",
        "pages this run",
        "host pages this run",
        "across runs",
    ):
        assert label in html, label
