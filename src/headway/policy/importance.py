"""Which ready host goes next when more are ready than can be served (pure).

Politeness decides when a host may be asked; this decides who, among the hosts it lets
go, is asked first. A host's importance is the evidence that it matters, divided by what
this run already took from it:

    importance = quality * (1 + inlink_hosts) / (1 + fetched)

``inlink_hosts``: distinct other hosts seen linking to it (``QualityBook``, at most its
``max_inlinks``; every link from another host counts, to a new URL or a known one);
``quality``: the host's quality (``policy/quality.py``, in (0, 1], 1 for a host not
judged yet: a host of near-duplicates and errors, such as a link farm whose hosts link
each other, loses its in-links' worth); ``fetched``: pages of it this node handed out
for fetching in this run.
A host nobody links to yet counts as one in-link, so a new host (fetched 0) goes before a
host already fetched from unless that one is linked from more hosts than it has given
pages: a host linked from 20 hosts gets about 20 pages for every page of a host linked
from none, and the crawl reaches new hosts as soon as they matter more than going deeper
into the ones it holds.
"""

from __future__ import annotations

__all__ = ["host_importance"]


def host_importance(inlink_hosts: int, fetched: int, quality: float = 1.0) -> float:
    """Higher goes first (see the module docstring)."""
    return min(1.0, max(0.0, quality)) * (1 + max(0, inlink_hosts)) / (1 + max(0, fetched))
