"""Page sizes and link counts of the simulated web's *real* page mix, as pure functions.

The *fixed* mix (the default) gives every ``/p/`` page the host's ``page_bytes`` and
``links_per_page``. The *real* mix draws each ``/p/`` page's size from a log-normal
distribution fitted to two figures measured on a crawl of the web: a median of 138 KB
and a mean of 242 KB (1 KB = 1,000 bytes). For a log-normal, median = ``e^mu`` and
mean = ``e^(mu + sigma^2 / 2)``, so ``mu = ln(138,000)`` (11.835) and
``sigma = sqrt(2 ln(242 / 138))`` (1.060): a long tail (the 99th percentile is about
1.6 MB). A draw is cut at ``MAX_PAGE_BYTES`` (4 MiB, above the 99.9th percentile) so the
server never builds a page a crawler would not read; a crawler's own ``max_body`` (256
KiB by default) cuts about a quarter of the pages, as a real crawl cuts them.

Links grow with size, less than in proportion (larger pages carry more inline script,
style and text per link): ``links = round(8 * KiB ** 0.6)``, at least ``MIN_LINKS`` and
at most ``MAX_LINKS``: 48 links at 20 KiB, 152 at 138 KB, 223 at 256 KiB, 512 at 1 MiB. This rule is
chosen, not fitted (the measurements give sizes, not link counts); it keeps the bench's
fixed page (about 3.4 links a KiB at 80 KiB) in the same range at median sizes.

Every draw is a deterministic function of (seed, host, path).
"""

from __future__ import annotations

import math
import random
from enum import StrEnum
from statistics import NormalDist

__all__ = [
    "MAX_PAGE_BYTES",
    "MEAN_BYTES",
    "MEDIAN_BYTES",
    "MU",
    "SIGMA",
    "PageMix",
    "links_for_size",
    "real_page_bytes",
    "size_quantile",
]


class PageMix(StrEnum):
    FIXED = "fixed"  # every page the host's page_bytes and links_per_page
    REAL = "real"  # sizes drawn from the log-normal below, links growing with size


MEDIAN_BYTES = 138_000
MEAN_BYTES = 242_000
MU = math.log(MEDIAN_BYTES)
SIGMA = math.sqrt(2 * math.log(MEAN_BYTES / MEDIAN_BYTES))
MAX_PAGE_BYTES = 4 * 1024 * 1024
MIN_LINKS = 10
MAX_LINKS = 2_000
_NORMAL = NormalDist()


def size_quantile(q: float) -> float:
    """The ``q`` quantile (0 < q < 1) of the log-normal, before the cut, in bytes."""
    return math.exp(MU + SIGMA * _NORMAL.inv_cdf(q))


def real_page_bytes(seed: int, host: int, path: str) -> int:
    """The size of page ``path`` of ``host`` in the real mix (bytes, at most
    ``MAX_PAGE_BYTES``)."""
    u = random.Random(f"{seed}:{host}:{path}:size").random()
    u = min(max(u, 1e-12), 1 - 1e-12)  # inv_cdf needs 0 < u < 1
    return min(MAX_PAGE_BYTES, round(size_quantile(u)))


def links_for_size(size: int) -> int:
    """Links on a real-mix page of ``size`` bytes (see the module docstring)."""
    return min(MAX_LINKS, max(MIN_LINKS, round(8 * math.pow(size / 1024, 0.6))))
