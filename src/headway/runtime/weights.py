"""What an item of a pipeline stage weighs in memory, for the stages' byte bounds, and
what a page costs a parser, for the parse queue's sharing between hosts.

Estimates, not measurements: body bytes count as they are; every link or URL counts its
characters plus ``PER_URL`` bytes for the Python objects around it (a ``str`` header, a
tuple slot, a ``UrlEntry`` with its fields). They only have to be proportional and
never zero for a large item, so that a stage's ``max_bytes`` bounds its memory.
"""

from __future__ import annotations

from collections.abc import Hashable

from headway.work.items import FetchedPage, SettleItem, SkippedUrl, Work

#: Bytes of Python objects per link or queued URL, beyond its characters.
PER_URL = 120
#: Bytes of any item, beyond its bodies and links.
PER_ITEM = 512
#: What parsing a page costs beyond its body, counted in bytes of body: a page of a few
#: KB takes about as long again as its own size (the round trip to a parser process, the
#: page's fixed work), next to about 40 ns a byte for a page full of links.
PARSE_BASE = 4096


def page_weight(work: Work) -> int:
    """An item on its way to a parser or the store: its bodies and links."""
    size = PER_ITEM
    if isinstance(work, SkippedUrl):
        return size
    res = work.result
    size += len(res.raw_body)
    if res.body is not res.raw_body:
        size += len(res.body)
    if isinstance(work, FetchedPage) and work.parsed is not None:
        size += sum(len(link) + PER_URL for link in work.parsed.links)
    return size


def settle_weight(item: SettleItem) -> int:
    """A settlement with the links it admits."""
    return PER_ITEM + sum(len(e.url) + PER_URL for e in item.discovered)


def page_host(work: FetchedPage) -> Hashable:
    """The host a page belongs to: hosts share the parse queue by cost."""
    return work.lease.host


def parse_cost(work: FetchedPage) -> int:
    """What a page costs a parser, in bytes: the body it reads (decoded, cut to
    ``--max-parsed`` for HTML) plus ``PARSE_BASE``. Known before parsing, and parse
    time grows with it."""
    return PARSE_BASE + len(work.result.body)
