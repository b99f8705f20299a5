"""Address guard: decides whether the crawler may connect to an IP address.

A crawler fed by the open web must not be steered into the operator's own network
(loopback services, private ranges, cloud metadata on link-local). ``AddressGuard``
answers, for one address, ``None`` (allowed) or the name of the category that refuses
it: ``"loopback"``, ``"private"``, ``"link-local"``, ``"multicast"``, ``"reserved"``,
``"unspecified"`` (or ``"invalid"`` for a string that is not an IP address).

The tables below follow the IANA IPv4 and IPv6 Special-Purpose Address Registries: every
block they list as not globally reachable is refused, and so is every IPv6 address
outside global unicast (``2000::/3``). They do not depend on the Python version's
``ipaddress`` tables. Addresses that only wrap an IPv4 address are judged by the address
they carry: IPv4-mapped (``::ffff:a.b.c.d``), the NAT64 well-known prefix
(``64:ff9b::a.b.c.d``) and 6to4 (``2002:AABB:CCDD::/48`` carries ``AA.BB.CC.DD``).
Only loopback and private can be allowed by configuration; the other categories are
always refused. docs/politeness.md lists every block.
"""

from __future__ import annotations

import ipaddress
from typing import Final

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
_Net = ipaddress.IPv4Network | ipaddress.IPv6Network


def _table(*rows: tuple[str, str]) -> tuple[tuple[_Net, str], ...]:
    return tuple((ipaddress.ip_network(net), category) for net, category in rows)


#: IPv4 blocks refused, most specific first within overlaps (IANA IPv4 Special-Purpose
#: Address Registry, plus multicast 224.0.0.0/4 and the reserved 240.0.0.0/4).
IPV4_REFUSED: Final = _table(
    ("0.0.0.0/32", "unspecified"),
    ("0.0.0.0/8", "reserved"),  # "this network"
    ("10.0.0.0/8", "private"),
    ("100.64.0.0/10", "private"),  # shared address space (carrier-grade NAT)
    ("127.0.0.0/8", "loopback"),
    ("169.254.0.0/16", "link-local"),  # includes cloud metadata 169.254.169.254
    ("172.16.0.0/12", "private"),
    ("192.0.0.0/24", "reserved"),  # IETF protocol assignments (DS-Lite, NAT64 discovery)
    ("192.0.2.0/24", "reserved"),  # documentation TEST-NET-1
    ("192.88.99.0/24", "reserved"),  # deprecated 6to4 relay anycast
    ("192.168.0.0/16", "private"),
    ("198.18.0.0/15", "reserved"),  # benchmarking
    ("198.51.100.0/24", "reserved"),  # documentation TEST-NET-2
    ("203.0.113.0/24", "reserved"),  # documentation TEST-NET-3
    ("224.0.0.0/4", "multicast"),
    ("255.255.255.255/32", "reserved"),  # limited broadcast
    ("240.0.0.0/4", "reserved"),  # reserved for future use
)

#: IPv6 blocks refused (IANA IPv6 Special-Purpose Address Registry); wrappers of IPv4
#: addresses are unwrapped before this table is read, and anything outside 2000::/3 that
#: is not listed here is refused as ``reserved``.
IPV6_REFUSED: Final = _table(
    ("::/128", "unspecified"),
    ("::1/128", "loopback"),
    ("64:ff9b:1::/48", "private"),  # local-use IPv4/IPv6 translation
    ("100::/64", "reserved"),  # discard-only
    ("100:0:0:1::/64", "reserved"),  # dummy prefix
    ("2001::/23", "reserved"),  # IETF protocol assignments: Teredo, benchmarking, ORCHID
    ("2001:db8::/32", "reserved"),  # documentation
    ("3fff::/20", "reserved"),  # documentation
    ("5f00::/16", "reserved"),  # segment routing (SRv6) SIDs
    ("fc00::/7", "private"),  # unique local
    ("fe80::/10", "link-local"),
    ("fec0::/10", "reserved"),  # deprecated site-local
    ("ff00::/8", "multicast"),
)

#: Globally reachable blocks inside a refused IPv6 block (IANA: "Globally Reachable").
IPV6_GLOBAL_EXCEPTIONS: Final = tuple(
    ipaddress.IPv6Network(n)
    for n in (
        "2001:1::1/128",  # port control protocol anycast
        "2001:1::2/128",  # TURN anycast
        "2001:1::3/128",  # DNS-SD service registration anycast
        "2001:3::/32",  # AMT
        "2001:4:112::/48",  # AS112-v6
        "2001:20::/28",  # ORCHIDv2
        "2001:30::/28",  # drone remote ID
    )
)

_GLOBAL_UNICAST: Final = ipaddress.IPv6Network("2000::/3")
_NAT64: Final = ipaddress.IPv6Network("64:ff9b::/96")
_SIX_TO_FOUR: Final = ipaddress.IPv6Network("2002::/16")


def _unwrap(addr: IPAddress) -> IPAddress:
    """The IPv4 address an IPv6 address carries, when it is only a wrapper for one."""
    if isinstance(addr, ipaddress.IPv6Address):
        if addr.ipv4_mapped is not None:
            return addr.ipv4_mapped
        if addr in _NAT64:
            return ipaddress.IPv4Address(int(addr) & 0xFFFFFFFF)
        if addr in _SIX_TO_FOUR:
            return ipaddress.IPv4Address((int(addr) >> 80) & 0xFFFFFFFF)
    return addr


def address_category(ip: str) -> str | None:
    """The non-public category of ``ip``, or None when it is a public address."""
    try:
        addr = _unwrap(ipaddress.ip_address(ip.strip("[]")))
    except ValueError:
        return "invalid"
    if isinstance(addr, ipaddress.IPv4Address):
        for net4, category in IPV4_REFUSED:
            if addr in net4:
                return category
        return None
    for net6, category in IPV6_REFUSED:
        if addr in net6:
            if any(addr in ok for ok in IPV6_GLOBAL_EXCEPTIONS):
                return None
            return category
    if addr not in _GLOBAL_UNICAST:
        return "reserved"
    return None


class AddressGuard:
    """Refuses connections to non-public addresses unless configured otherwise."""

    __slots__ = ("_allowed",)

    def __init__(self, *, allow_loopback: bool = False, allow_private: bool = False) -> None:
        allowed: set[str] = set()
        if allow_loopback:
            allowed.add("loopback")
        if allow_private:
            allowed.add("private")
        self._allowed = frozenset(allowed)

    def refusal(self, ip: str) -> str | None:
        """None when ``ip`` may be connected to; else the reason it may not."""
        category = address_category(ip)
        if category is None or category in self._allowed:
            return None
        return category
