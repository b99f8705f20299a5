"""Which ready host goes next: importance from in-link hosts and pages taken."""

from __future__ import annotations

import pytest

from headway.policy.importance import host_importance


@pytest.mark.parametrize(
    ("inlinks", "fetched", "want"),
    [
        (0, 0, 1.0),  # a new host nobody links to yet
        (9, 0, 10.0),
        (9, 9, 1.0),  # linked from 9 hosts, 9 pages taken: as a new unlinked host
        (3, 1, 2.0),
        (0, 3, 0.25),
        (-1, -1, 1.0),  # nonsense counts read as none
    ],
)
def test_importance_table(inlinks: int, fetched: int, want: float) -> None:
    assert host_importance(inlinks, fetched) == pytest.approx(want)


def test_more_in_links_or_fewer_pages_taken_rank_higher() -> None:
    assert host_importance(5, 2) > host_importance(4, 2) > host_importance(4, 3)


@pytest.mark.parametrize(
    ("quality", "want"),
    [(1.0, 4.0), (0.5, 2.0), (0.0, 0.0), (2.0, 4.0), (-1.0, 0.0)],
)
def test_a_poor_host_loses_its_in_links_worth(quality: float, want: float) -> None:
    assert host_importance(3, 0, quality) == pytest.approx(want)
