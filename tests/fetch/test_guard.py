"""AddressGuard: every category, IPv4-mapped unwrapping, and what configuration lifts."""

from __future__ import annotations

import pytest

from headway.fetch.guard import AddressGuard

CASES = [
    # (address, reason with the default guard)
    ("8.8.8.8", None),
    ("93.184.215.14", None),
    ("2606:4700:4700::1111", None),
    ("127.0.0.1", "loopback"),
    ("127.255.3.4", "loopback"),
    ("::1", "loopback"),
    ("::ffff:127.0.0.1", "loopback"),
    ("10.1.2.3", "private"),
    ("172.16.0.1", "private"),
    ("172.31.255.254", "private"),
    ("192.168.1.1", "private"),
    ("100.64.0.1", "private"),
    ("100.127.255.255", "private"),
    ("fc00::1", "private"),
    ("fd12:3456::1", "private"),
    ("::ffff:10.0.0.1", "private"),
    ("64:ff9b::a00:1", "private"),
    ("169.254.169.254", "link-local"),
    ("fe80::1", "link-local"),
    ("224.0.0.1", "multicast"),
    ("239.255.255.250", "multicast"),
    ("ff02::1", "multicast"),
    ("240.0.0.1", "reserved"),
    ("255.255.255.255", "reserved"),
    ("192.0.2.1", "reserved"),
    ("198.18.0.1", "reserved"),
    ("0.1.2.3", "reserved"),
    ("2001:db8::1", "reserved"),
    ("0.0.0.0", "unspecified"),
    ("::", "unspecified"),
    ("::ffff:0.0.0.0", "unspecified"),
    ("not-an-ip", "invalid"),
    # 6to4 (2002::/16) is judged by the IPv4 address it embeds
    ("2002:a9fe:a9fe::1", "link-local"),
    ("2002:7f00:1::1", "loopback"),
    ("2002:a00:1::", "private"),
    ("2002:c0a8:101:5::1", "private"),
    ("2002:808:808::1", None),
    ("2002::1", "unspecified"),
    # the rest of the IANA special-purpose registries
    ("192.0.0.9", "reserved"),
    ("192.0.0.170", "reserved"),
    ("192.88.99.1", "reserved"),
    ("198.51.100.7", "reserved"),
    ("203.0.113.9", "reserved"),
    ("::1.2.3.4", "reserved"),  # deprecated IPv4-compatible
    ("::ffff:0:a00:1", "reserved"),  # IPv4-translated (SIIT)
    ("64:ff9b::a9fe:a9fe", "link-local"),
    ("64:ff9b:1::a00:1", "private"),  # local-use translation
    ("100::1", "reserved"),  # discard-only
    ("100:0:0:1::1", "reserved"),  # dummy prefix
    ("2001::1", "reserved"),  # Teredo
    ("2001:0:4136:e378:8000:63bf:3fff:fdd2", "reserved"),
    ("2001:2::1", "reserved"),  # benchmarking
    ("2001:10::1", "reserved"),  # deprecated ORCHID
    ("3fff::1", "reserved"),  # documentation
    ("5f00::1", "reserved"),  # SRv6 SIDs
    ("fec0::1", "reserved"),  # site-local
    ("4000::1", "reserved"),  # outside global unicast
    ("2001:4:112::1", None),  # AS112-v6 is globally reachable
    ("2001:20::1", None),  # ORCHIDv2 is globally reachable
    ("2620:4f:8000::1", None),
]


@pytest.mark.parametrize(("ip", "reason"), CASES)
def test_default_guard(ip: str, reason: str | None) -> None:
    assert AddressGuard().refusal(ip) == reason


@pytest.mark.parametrize(("ip", "reason"), CASES)
def test_allow_loopback_lifts_only_loopback(ip: str, reason: str | None) -> None:
    expected = None if reason == "loopback" else reason
    assert AddressGuard(allow_loopback=True).refusal(ip) == expected


@pytest.mark.parametrize(("ip", "reason"), CASES)
def test_allow_private_lifts_only_private(ip: str, reason: str | None) -> None:
    expected = None if reason == "private" else reason
    assert AddressGuard(allow_private=True).refusal(ip) == expected


def test_172_outside_private_block_is_public() -> None:
    assert AddressGuard().refusal("172.32.0.1") is None
    assert AddressGuard().refusal("172.15.255.255") is None
