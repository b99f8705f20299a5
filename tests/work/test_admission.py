"""Admission: scope, traps and redirect chains decide what reaches the frontier."""

from __future__ import annotations

from headway.urls.canonical import host_key
from headway.urls.fingerprint import fingerprint
from headway.urls.scope import OptOut, Scope, ScopeMode, SeedScope
from headway.work.admission import Admission


def _admission(**kw: object) -> Admission:
    scope = Scope.for_seeds(
        ["https://example.org/"], max_depth=3, optout=OptOut(["blocked.example.org"])
    )
    return Admission(scope, current_year=2026, **kw)  # type: ignore[arg-type]


def test_entries_carry_host_fingerprint_and_depth_priority() -> None:
    adm = _admission()
    [e] = adm.admit(["https://www.example.org:8443/a"], 2, "https://example.org/")
    assert e.host == host_key(e.url) == "www.example.org:8443"
    assert e.fp == fingerprint(e.url)
    assert e.depth == 2 and e.priority == 2 and e.via == "https://example.org/"


def test_rejections_are_counted_by_reason() -> None:
    adm = _admission()
    urls = [
        "https://example.org/ok",
        "https://elsewhere.net/",
        "https://blocked.example.org/x",
        "https://example.org/" + "a" * 3000,
        "https://example.org/cal/2150/01/",
        "https://example.org/a/b/a/b/a/b/a/b/",
    ]
    kept = adm.admit(urls, 1, None)
    assert [e.url for e in kept] == ["https://example.org/ok"]
    assert adm.rejected == {
        "out-of-scope": 1,
        "opted-out": 1,
        "too-long": 1,
        "trap-suspect": 2,
    }
    assert adm.admit(["https://example.org/deep"], 4, None) == []
    assert adm.rejected["too-deep"] == 1


def test_trap_check_can_be_switched_off_and_spares_normal_dates() -> None:
    adm = _admission(trap_check=False)
    assert len(adm.admit(["https://example.org/cal/2150/01/"], 1, None)) == 1
    adm = _admission()
    assert len(adm.admit(["https://example.org/news/2026/05/12/story"], 1, None)) == 1


def test_redirect_chains_are_cut_after_the_cap() -> None:
    adm = _admission(max_redirects=2)
    first = adm.admit_redirect("https://example.org/r1", "https://example.org/r0", 0)
    second = adm.admit_redirect("https://example.org/r2", "https://example.org/r1", 0)
    third = adm.admit_redirect("https://example.org/r3", "https://example.org/r2", 0)
    assert len(first) == 1 and len(second) == 1 and third == []
    assert adm.rejected["redirect-chain"] == 1


def test_recently_admitted_urls_are_known_duplicates_and_memory_is_bounded() -> None:
    adm = _admission(recent_urls=4)
    first = adm.admit([f"https://example.org/{i}" for i in range(3)], 1, None)
    assert len(first) == 3
    again = adm.admit(
        ["https://example.org/0", "https://example.org/1", "https://example.org/9"], 1, None
    )
    assert [e.url for e in again] == ["https://example.org/9"]
    assert adm.known == 2
    # rejected URLs are not remembered: a URL too deep here may be in scope from a
    # shallower page later
    assert adm.admit(["https://example.org/deep"], 4, None) == []
    assert len(adm.admit(["https://example.org/deep"], 2, None)) == 1
    # two generations of recent_urls // 2: old entries fall out, memory stays bounded
    adm.admit([f"https://example.org/x{i}" for i in range(10)], 1, None)
    assert len(adm._recent) + len(adm._recent_old) <= 4
    assert (
        len(adm.admit(["https://example.org/0"], 1, None)) == 1
    )  # forgotten: the frontier decides


def test_memory_pressure_sheds_the_deepest_links_first_and_recovers() -> None:
    adm = _admission()
    adm.admit(["https://example.org/x3"], 3, None)  # the deepest admitted so far: 3
    adm.adjust_for_memory(True, max_depth=3)
    adm.adjust_for_memory(True, max_depth=3)  # two seconds over target: depth 1 and less
    assert adm.shed_depth == 1
    assert adm.admit(["https://example.org/d2"], 2, None) == []
    assert adm.rejected["memory"] == 1
    assert len(adm.admit(["https://example.org/d1"], 1, None)) == 1
    # shed links were not remembered: once memory is back under target they are admitted
    adm.adjust_for_memory(False, max_depth=3)
    adm.adjust_for_memory(False, max_depth=3)
    assert adm.shed_depth is None
    assert len(adm.admit(["https://example.org/d2"], 2, None)) == 1


def test_every_trap_reaches_the_trap_check_through_admission() -> None:
    """Shallow traps too: the cheap pre-filter must not let them past the full check."""
    adm = _admission()
    traps = [
        "https://example.org/a/a/a",  # a segment three times, five slashes in all
        "https://example.org/a/a/a/",
        "https://example.org/x/b/x/x",
        "https://example.org/" + "/".join(f"d{i}" for i in range(16)),  # 16 segments
        "https://example.org/cal?from=1850-01",  # a far year in the query
        "https://example.org/" + "q" * 1000,
    ]
    assert adm.admit(traps, 1, None) == []
    assert adm.rejected == {"trap-suspect": len(traps)}
    fine = [
        "https://example.org/a/a",  # twice is allowed
        "https://example.org/a/b/c",
        "https://example.org/a//a/b",
        "https://example.org/" + "/".join(f"d{i}" for i in range(15)),
    ]
    assert [e.url for e in adm.admit(fine, 1, None)] == fine


def test_recent_lastmod_raises_priority_under_quality_priority() -> None:
    from headway.policy.quality import QualityBook

    adm = _admission(quality=QualityBook())
    urls = ["https://example.org/new", "https://example.org/old", "https://example.org/none"]
    ages = {urls[0]: 3600.0, urls[1]: 400 * 86400.0}
    new, old, none = adm.admit(urls, 1, "https://example.org/sitemap.xml", lastmod_age=ages)
    assert new.priority < old.priority == none.priority


def test_every_link_from_another_host_counts_as_an_in_link_new_or_known() -> None:
    """A popular host's pages are mostly known already: links to them still count its
    in-link hosts (the importance order between hosts reads them); links within the
    linking page's own host never do."""
    from headway.policy.quality import QualityBook

    book = QualityBook()
    adm = _admission(quality=book)  # the seed's domain: every host of example.org
    hub = "https://hub.example.org/"
    first = adm.admit([hub, "https://a.example.org/x"], 1, "https://a.example.org/")
    assert [e.url for e in first] == [hub, "https://a.example.org/x"]
    assert book.inlink_hosts("hub.example.org") == 1
    assert book.inlink_hosts("a.example.org") == 0  # its own page
    for source in ("b", "c", "d"):  # the hub's URL is known by now: no entry, still counted
        assert adm.admit([hub], 2, f"https://{source}.example.org/page") == []
    assert book.inlink_hosts("hub.example.org") == 4


def test_extra_hops_fetch_pages_beyond_the_scope_but_follow_them_no_further() -> None:
    scope = Scope.for_seeds(
        ["https://a.org/"], mode=ScopeMode.SEED_HOSTS, extra_hops=2, exclude=(r"/trap",)
    )
    adm = Admission(scope, recent_urls=0)

    def admitted(urls: list[str], via: str) -> list[str]:
        return [e.url for e in adm.admit(urls, 1, via)]

    assert admitted(["https://b.org/", "https://b.org/trap"], "https://a.org/") == [
        "https://b.org/"
    ]  # one hop out; an exclusion is never a hop
    assert admitted(["https://c.org/"], "https://b.org/") == ["https://c.org/"]  # two hops
    assert admitted(["https://d.org/", "https://a.org/x"], "https://c.org/") == [
        "https://a.org/x"
    ]  # a third hop is refused; a link back into the scope is in scope
    assert adm.rejected["out-of-scope"] == 1 and adm.rejected["excluded"] == 1
    assert adm.extra_hops_admitted == 2
    assert admitted(["https://e.org/"], "https://unknown.net/") == []  # no hops left known


def test_no_extra_hops_by_default() -> None:
    adm = Admission(Scope.for_seeds(["https://a.org/"]), recent_urls=0)
    assert adm.admit(["https://b.org/"], 1, "https://a.org/") == []
    assert adm.rejected["out-of-scope"] == 1


def test_an_extra_hop_keeps_to_its_seeds_depth() -> None:
    seeds = ["https://a.org/docs/"]
    scope = Scope.for_seeds(
        seeds, seed_scopes={seeds[0]: SeedScope(ScopeMode.PREFIX, max_depth=1, extra_hops=1)}
    )
    adm = Admission(scope, recent_urls=0)
    assert [e.url for e in adm.admit(["https://b.org/"], 1, seeds[0])] == ["https://b.org/"]
    assert adm.admit(["https://c.org/"], 2, "https://a.org/docs/x") == []
