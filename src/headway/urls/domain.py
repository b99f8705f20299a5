"""Registered domain (eTLD+1) of a host, from the public suffix list bundled with
``publicsuffixlist`` (never fetched over the network).

Contract of :func:`registered_domain`: the input is a host as found in a URL, optionally
with ``:port``; the result is lower-case, without port and trailing dot. The private
section of the list counts (``foo.blogspot.com`` is its own registered domain, because
its owner, not Blogger's, controls it). IP addresses, public suffixes themselves and hosts
whose suffix is not on the list return the host itself.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import TypeVar

from publicsuffixlist import PublicSuffixList

__all__ = ["bare_host", "registered_domain", "strip_port"]

T = TypeVar("T")


@lru_cache(maxsize=1)
def _psl() -> PublicSuffixList:
    # Loading parses the bundled list (tens of milliseconds): do it once, on first use.
    return PublicSuffixList(accept_unknown=False)


def strip_port(host: str) -> str:
    """``host`` without a trailing ``:port``; IPv6 literals keep their brackets."""
    if host.startswith("["):
        end = host.find("]")
        return host[: end + 1] if end >= 0 else host
    colon = host.rfind(":")
    if colon >= 0 and host.count(":") == 1:
        return host[:colon]
    return host


def bare_host(host: str) -> str:
    """``host`` as opt-out and scope compare hosts: no port, lower case, no final dot."""
    return strip_port(host).lower().rstrip(".")


def parent_domains(host: str) -> Iterator[str]:
    """The domains ``host`` lies under, nearest first: ``a.b.example`` yields ``b.example``
    then ``example``."""
    dot = host.find(".")
    while dot >= 0:
        host = host[dot + 1 :]
        yield host
        dot = host.find(".")


def match_host(name: str, exact: Mapping[str, T], suffixes: Mapping[str, T]) -> T | None:
    """The value for ``name``: an exact entry first, else the nearest ``*.suffix`` one
    (``suffixes`` is keyed by the suffix without ``*.``)."""
    if name in exact:
        return exact[name]
    if suffixes:
        for parent in parent_domains(name):
            if parent in suffixes:
                return suffixes[parent]
    return None


def _is_ip(host: str) -> bool:
    if host.startswith("["):
        return True
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


@lru_cache(maxsize=65536)
def registered_domain(host: str) -> str:
    """The registered domain of ``host`` (see the module contract)."""
    h = strip_port(host.strip()).lower().rstrip(".")
    if not h or _is_ip(h):
        return h
    found = _psl().privatesuffix(h)
    return found if isinstance(found, str) else h
