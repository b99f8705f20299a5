"""Precise scope in a crawl, asserted from the simulated web's own request log: two
seeds on one host with scopes and depths of their own (seeds file options), one of
them with an extra hop to the pages of another host that it links to; a bad option is
reported with its line number."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from headway.testing.graph import links_of
from headway.testing.simweb import HostSpec, SimWebSpec
from tests.integration.helpers import ThreadedSimWeb, crawl_argv, page_requests

pytestmark = pytest.mark.slow

SPEC = SimWebSpec(hosts=2, host_spec=HostSpec(pages=20, links_per_page=4), cross_links=0.4, seed=7)


def _expected() -> set[tuple[str, str]]:
    """What the two seeds' rules take (see the seeds file in the test):
    ``/`` at depth 0 only (prefix ``/``, depth 0); ``/p/7`` and everything under
    ``/p/`` to depth 1 (so the home page's and /p/7's links there); and, one hop out,
    the pages of site1 that /p/7 links to (at depth 1, within its seed's depth)."""
    found = {("site0.sim", "/"), ("site0.sim", "/p/7")}
    for page in ("/", "/p/7"):
        for link in links_of(SPEC, 0, page):
            if link.host == 0 and link.path.startswith("/p/") and not link.nofollow:
                found.add(("site0.sim", link.path))
            elif link.host == 1 and page == "/p/7":
                found.add(("site1.sim", link.path))
    return found


def test_seeds_with_scopes_of_their_own_on_one_host(tmp_path: Path) -> None:
    expected = _expected()
    assert any(h == "site1.sim" for h, _ in expected), "the graph must link out from /p/7"
    with ThreadedSimWeb(SPEC) as web:
        seeds = tmp_path / "seeds.txt"
        seeds.write_text(
            f"{web.url('site0.sim', '/')} scope=prefix depth=0\n"
            f"{web.url('site0.sim', '/p/7')} scope=prefix depth=1 extra-hops=1\n"
            f"{web.url('site1.sim', '/')} colour=blue\n"
        )
        out = tmp_path / "crawl"
        argv = crawl_argv(seeds, out, "--delay", "0", "--scope", "seed-hosts")
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert "line 3 skipped: unknown seed option 'colour'" in done.stderr
        fetched = {(r.host, r.path) for r in page_requests(web.log)}
    assert fetched == expected


def test_seed_options_are_refused_for_a_shared_crawl(tmp_path: Path) -> None:
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("http://site0.sim/docs/ scope=prefix\n")
    argv = crawl_argv(seeds, tmp_path / "c", "--store", "redis://127.0.0.1:1/0", "--crawl-id", "x")
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "a shared crawl (--store) does not keep them yet" in done.stderr
    assert "Traceback" not in done.stderr
