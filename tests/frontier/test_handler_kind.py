"""Contract: the content handler a URL was admitted with (a document: a sitemap, a feed)
is stored with it and returned by every lease, through every way back to the queue and
across a reopen; an ordinary link has none. Runs over every backend."""

from __future__ import annotations

from headway.frontier.store import Completion, FrontierStore, LeasedUrl, Settle
from tests.frontier.conftest import OpenStore, entry, lease

SITEMAP = "http://a.test/sitemap.xml"
FEED = "http://a.test/feed.xml"
PAGE = "http://a.test/page"


def _by_url(got: list[LeasedUrl]) -> dict[str, LeasedUrl]:
    return {u.url: u for u in got}


def _add_three(store: FrontierStore) -> None:
    store.add([entry(SITEMAP, handler="sitemap"), entry(FEED, handler="feed"), entry(PAGE)], now=0)


def test_handler_given_at_admission_reaches_the_lease(store: FrontierStore) -> None:
    _add_three(store)
    got = _by_url(lease(store, "a.test", 3, now=0, lease_seconds=60))
    assert {u: got[u].handler for u in got} == {SITEMAP: "sitemap", FEED: "feed", PAGE: None}


def test_handler_survives_retry_requeue_reclaim_release_and_revisit(
    store: FrontierStore,
) -> None:
    _add_three(store)
    got = _by_url(lease(store, "a.test", 3, now=0, lease_seconds=60))
    store.complete(
        [
            Completion(got[SITEMAP].id, Settle.RETRY, not_before=1),
            Completion(got[FEED].id, Settle.REQUEUE, not_before=1),
            Completion(got[PAGE].id, Settle.DONE, revisit_at=1, validators="v"),
        ],
        [],
        now=0,
    )
    again = _by_url(lease(store, "a.test", 3, now=1, lease_seconds=10))
    assert {u: again[u].handler for u in again} == {SITEMAP: "sitemap", FEED: "feed", PAGE: None}
    assert again[SITEMAP].attempts == 1 and again[PAGE].fetches == 1
    # an expired lease reclaimed, then this node's own leases released
    assert store.reclaim_expired(now=100) == 3
    third = _by_url(lease(store, "a.test", 3, now=100, lease_seconds=10))
    assert third[SITEMAP].handler == "sitemap" and third[FEED].handler == "feed"
    assert store.release_own_leases() == 3
    fourth = _by_url(lease(store, "a.test", 3, now=100, lease_seconds=10))
    assert {u: fourth[u].handler for u in fourth} == {SITEMAP: "sitemap", FEED: "feed", PAGE: None}
    # a document settled DONE with a revisit keeps its handler for the revisit
    store.complete(
        [Completion(fourth[SITEMAP].id, Settle.DONE, revisit_at=200, validators="s")], [], now=100
    )
    (revisit,) = lease(store, "a.test", 1, now=200, lease_seconds=10)
    assert (revisit.url, revisit.handler, revisit.fetches) == (SITEMAP, "sitemap", 1)


def test_handler_survives_close_and_reopen(open_store: OpenStore) -> None:
    store = open_store()
    _add_three(store)
    store.close()
    again = open_store()
    got = _by_url(lease(again, "a.test", 3, now=0, lease_seconds=60))
    assert {u: got[u].handler for u in got} == {SITEMAP: "sitemap", FEED: "feed", PAGE: None}


def test_a_url_admitted_as_a_link_first_stays_a_link(store: FrontierStore) -> None:
    store.add([entry(SITEMAP)], now=0)
    assert store.add([entry(SITEMAP, handler="sitemap")], now=0).duplicates == 1
    (got,) = lease(store, "a.test", 5, now=0, lease_seconds=60)
    assert got.handler is None
