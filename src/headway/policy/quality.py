"""Near-duplicates and host quality (pure): the evidence the priority formula uses.

Contract of ``QualityBook`` (one per node, memory bounded by its caps):

- ``near_duplicate(host, url, fp)``: compares the SimHash ``fp`` of a page of ``host``
  with the pages of that host seen before (the newest ``max_pages_per_host``); returns
  the URL of the first earlier page at most ``max_bits`` bits away (a near-duplicate),
  else None. The page is remembered either way. ``fp`` 0 (no text) is never a
  near-duplicate of anything. The same URL fetched again is not its own duplicate.
- ``observe(host, ok_html=..., error=..., near_dup=...)`` counts one fetch of ``host``
  (the node counts answers with content or an error, not redirects or 304s).
- ``quality(host)`` is in (0, 1], 1 for a host never seen:

      ok_share = (ok_html + M) / (fetches + M)
      dup_rate = near_dups / (ok_html + M)
      err_rate = errors / (fetches + M)
      quality  = (1 + ok_share) / 2 * (1 - dup_rate) * (1 - err_rate)

  with ``M = PRIOR_FETCHES`` imagined perfect fetches, so that a host is not judged on
  its first page or two. A host of nothing but non-HTML files keeps half its quality;
  near-duplicates and errors can take all of it.
- ``note_link(source_host, target_host)`` records a link between two different hosts;
  ``inlink_hosts(host)`` is the number of distinct other hosts seen linking to ``host``
  (at most ``max_inlinks``).
- Hosts are forgotten least recently used first beyond ``max_hosts``.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

from headway.parse.simhash import NEAR_DUPLICATE_BITS

__all__ = ["PRIOR_FETCHES", "QualityBook", "QualityStats"]

PRIOR_FETCHES = 4


@dataclass(slots=True)
class _Host:
    fetches: int = 0
    ok_html: int = 0
    near_dups: int = 0
    errors: int = 0
    pages: list[tuple[int, str]] = field(default_factory=list)  # (simhash, url), oldest first
    inlinks: set[str] = field(default_factory=set)


@dataclass(frozen=True, slots=True)
class QualityStats:
    hosts: int
    pages_checked: int
    near_duplicates: int


class QualityBook:
    def __init__(
        self,
        *,
        max_bits: int = NEAR_DUPLICATE_BITS,
        max_pages_per_host: int = 2000,
        max_hosts: int = 100_000,
        max_inlinks: int = 64,
    ) -> None:
        self.max_bits = max_bits
        self.max_pages_per_host = max_pages_per_host
        self.max_hosts = max_hosts
        self.max_inlinks = max_inlinks
        self._hosts: OrderedDict[str, _Host] = OrderedDict()
        self._checked = 0
        self._near = 0

    def _host(self, host: str) -> _Host:
        rec = self._hosts.get(host)
        if rec is None:
            rec = self._hosts[host] = _Host()
            if len(self._hosts) > self.max_hosts:
                self._hosts.popitem(last=False)
        else:
            self._hosts.move_to_end(host)
        return rec

    def near_duplicate(self, host: str, url: str, fp: int) -> str | None:
        """URL of an earlier page of ``host`` within ``max_bits`` of ``fp``, or None."""
        if fp == 0:
            return None
        rec = self._host(host)
        self._checked += 1
        found = None
        limit = self.max_bits
        for other, other_url in rec.pages:
            if (fp ^ other).bit_count() <= limit and other_url != url:
                found = other_url
                break
        rec.pages.append((fp, url))
        if len(rec.pages) > self.max_pages_per_host:
            del rec.pages[0]
        if found is not None:
            self._near += 1
        return found

    def observe(self, host: str, *, ok_html: bool, error: bool, near_dup: bool) -> None:
        rec = self._host(host)
        rec.fetches += 1
        rec.ok_html += ok_html
        rec.errors += error
        rec.near_dups += near_dup

    def quality(self, host: str) -> float:
        rec = self._hosts.get(host)
        if rec is None:
            return 1.0
        m = PRIOR_FETCHES
        ok_share = (rec.ok_html + m) / (rec.fetches + m)
        dup_rate = min(1.0, rec.near_dups / (rec.ok_html + m))
        err_rate = rec.errors / (rec.fetches + m)
        return max(1e-6, (1.0 + ok_share) / 2 * (1.0 - dup_rate) * (1.0 - err_rate))

    def note_link(self, source_host: str, target_host: str) -> None:
        if source_host == target_host:
            return
        rec = self._host(target_host)
        if len(rec.inlinks) < self.max_inlinks:
            rec.inlinks.add(source_host)

    def inlink_hosts(self, host: str) -> int:
        rec = self._hosts.get(host)
        return len(rec.inlinks) if rec is not None else 0

    def statistics(self) -> QualityStats:
        return QualityStats(len(self._hosts), self._checked, self._near)
