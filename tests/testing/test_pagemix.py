"""The real page mix: a seeded log-normal of page sizes (median 138 KB, mean 242 KB),
links growing with size, pages rendered at their drawn size; the fixed mix untouched."""

from __future__ import annotations

import statistics

import pytest

from headway.testing.features import Renderer
from headway.testing.graph import HostSpec, SimWebSpec, links_of, links_per_page, page_bytes
from headway.testing.pagemix import (
    MAX_PAGE_BYTES,
    MEAN_BYTES,
    MEDIAN_BYTES,
    links_for_size,
    real_page_bytes,
    size_quantile,
)

SAMPLE = [real_page_bytes(0, h, f"/p/{i}") for h in range(200) for i in range(200)]


def test_sizes_are_a_function_of_seed_host_and_path() -> None:
    again = [real_page_bytes(0, h, f"/p/{i}") for h in range(200) for i in range(200)]
    assert again == SAMPLE
    other_seed = [real_page_bytes(1, h, f"/p/{i}") for h in range(20) for i in range(20)]
    assert other_seed != SAMPLE[:400]
    assert len(set(SAMPLE)) > len(SAMPLE) * 0.9  # drawn, not a handful of values


def test_median_and_mean_match_the_measured_figures() -> None:
    # 40,000 draws: the median within 3% of 138 KB, the mean within 5% of 242 KB (the
    # mean of a long tail moves more from sample to sample)
    assert statistics.median(SAMPLE) == pytest.approx(MEDIAN_BYTES, rel=0.03)
    assert statistics.mean(SAMPLE) == pytest.approx(MEAN_BYTES, rel=0.05)
    assert size_quantile(0.5) == pytest.approx(MEDIAN_BYTES)


def test_the_tail_is_long_and_cut_at_the_largest_page() -> None:
    over_256k = sum(s > 256 * 1024 for s in SAMPLE) / len(SAMPLE)
    assert 0.24 < over_256k < 0.31  # about a quarter cut by the default max_body
    assert sum(s > 1_000_000 for s in SAMPLE) > 0.02 * len(SAMPLE)
    assert max(SAMPLE) <= MAX_PAGE_BYTES
    assert min(SAMPLE) > 1_000


def test_links_grow_with_size_less_than_in_proportion() -> None:
    sizes = [10_000, 50_000, 138_000, 262_144, 1 << 20, MAX_PAGE_BYTES]
    links = [links_for_size(s) for s in sizes]
    assert links == sorted(links) and len(set(links)) == len(links)
    assert links[2] == 152
    per_kib = [n / s for n, s in zip(links, sizes, strict=True)]
    assert per_kib == sorted(per_kib, reverse=True)


def test_rendered_pages_have_their_drawn_size_and_links() -> None:
    web = SimWebSpec(hosts=3, host_spec=HostSpec(pages=30, page_mix="real"), suffix="sim.test")
    renderer = Renderer(web, [f"http://site{i}.sim.test:8" for i in range(3)])
    for host in range(3):
        for i in range(0, 30, 3):
            path = f"/p/{i}"
            want = page_bytes(web, host, path)
            assert want == real_page_bytes(web.seed, host, path)
            body = renderer.respond(host, path).body
            assert want <= len(body) <= want * 1.06 + 2_000
            count = links_per_page(web, host, path)
            assert count == links_for_size(want)
            assert len(links_of(web, host, path)) == count + 1  # and the nav's home link
            assert body.count(b"<a href=") == count + 1


def test_the_fixed_mix_keeps_page_bytes_and_links_per_page() -> None:
    web = SimWebSpec(hosts=2, host_spec=HostSpec(pages=10, links_per_page=7, page_bytes=5000))
    for i in range(10):
        assert page_bytes(web, 0, f"/p/{i}") == 5000
        assert len(links_of(web, 0, f"/p/{i}")) == 7 + 1


def test_an_unknown_mix_is_refused() -> None:
    with pytest.raises(ValueError, match="page_mix"):
        HostSpec(page_mix="huge")
