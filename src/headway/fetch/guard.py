"""Address guard: decides whether the crawler may connect to an IP address.

A crawler fed by the open web must not be steered into the operator's own network
(loopback services, private ranges, cloud metadata on link-local). ``AddressGuard``
answers, for one address, ``None`` (allowed) or the name of the category that refuses
it: ``"loopback"``, ``"private"``, ``"link-local"``, ``"multicast"``, ``"reserved"``,
``"unspecified"`` (or ``"invalid"`` for a string that is not an IP address).

IPv4-mapped IPv6 addresses (``::ffff:a.b.c.d``) and the NAT64 well-known prefix
(``64:ff9b::a.b.c.d``) are judged by the IPv4 address they carry. Only loopback and
private can be allowed by configuration; the other categories are always refused.
"""

from __future__ import annotations

import ipaddress
from typing import Final

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_PRIVATE: Final = tuple(
    ipaddress.ip_network(n)
    for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "fc00::/7")
)
_NAT64: Final = ipaddress.IPv6Network("64:ff9b::/96")


def _unwrap(addr: IPAddress) -> IPAddress:
    """The IPv4 address an IPv6 address carries, when it is only a wrapper for one."""
    if isinstance(addr, ipaddress.IPv6Address):
        if addr.ipv4_mapped is not None:
            return addr.ipv4_mapped
        if addr in _NAT64:
            return ipaddress.IPv4Address(int(addr) & 0xFFFFFFFF)
    return addr


def address_category(ip: str) -> str | None:
    """The non-public category of ``ip``, or None when it is a public address."""
    try:
        addr = _unwrap(ipaddress.ip_address(ip.strip("[]")))
    except ValueError:
        return "invalid"
    if addr.is_unspecified:
        return "unspecified"
    if addr.is_loopback:
        return "loopback"
    if addr.is_link_local:
        return "link-local"
    if addr.is_multicast:
        return "multicast"
    if any(addr in net for net in _PRIVATE):
        return "private"
    # Everything else that is not globally routable: 0/8, 240/4, broadcast, documentation
    # and benchmarking ranges, IPv6 site-local and reserved blocks.
    if addr.is_reserved or not addr.is_global:
        return "reserved"
    if isinstance(addr, ipaddress.IPv6Address) and addr.is_site_local:
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
