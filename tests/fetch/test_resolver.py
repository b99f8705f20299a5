"""Resolve rules, hosts files, and CrawlResolver's order, cache and guard."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from aiohttp.abc import AbstractResolver, ResolveResult

from headway.errors import ConfigError
from headway.fetch.guard import AddressGuard
from headway.fetch.resolver import (
    AddressRefused,
    CrawlResolver,
    load_hosts_file,
    parse_resolve_rules,
)


@pytest.mark.parametrize(
    ("items", "expected"),
    [
        ([], {}),
        (["site-a.test=127.0.0.1"], {"site-a.test": "127.0.0.1"}),
        (["Site-A.Test.=127.0.0.2"], {"site-a.test": "127.0.0.2"}),
        ([" a.test = 10.0.0.1 "], {"a.test": "10.0.0.1"}),
        (["*.sim.test=127.0.0.1"], {"*.sim.test": "127.0.0.1"}),
        (["v6.test=::1"], {"v6.test": "::1"}),
        (["v6.test=[::1]"], {"v6.test": "::1"}),
        (
            ["_srv.a-b.test=1.2.3.4", "x.test=5.6.7.8"],
            {"_srv.a-b.test": "1.2.3.4", "x.test": "5.6.7.8"},
        ),
        (["a.test=1.1.1.1", "a.test=2.2.2.2"], {"a.test": "2.2.2.2"}),
    ],
)
def test_parse_resolve_rules(items: list[str], expected: dict[str, str]) -> None:
    assert parse_resolve_rules(items) == expected


@pytest.mark.parametrize(
    "item",
    [
        "",
        "site-a.test",
        "site-a.test=",
        "=127.0.0.1",
        "site-a.test=not-an-ip",
        "site-a.test=127.0.0.1:8080",
        "site-a.test=999.0.0.1",
        "*=127.0.0.1",
        "*.=127.0.0.1",
        "a.*.test=127.0.0.1",
        "bad host.test=127.0.0.1",
        "-lead.test=127.0.0.1",
    ],
)
def test_parse_resolve_rules_rejects(item: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_resolve_rules(["ok.test=127.0.0.1", item])
    assert info.value.key == "fetch.resolve"
    assert repr(item) in str(info.value)


def test_load_hosts_file(tmp_path: Path) -> None:
    path = tmp_path / "hosts"
    path.write_text(
        "# comment line\n"
        "127.0.0.1   localhost Site-A.test  # trailing comment\n"
        "\n"
        "::1 v6.test\n"
        "10.0.0.9 site-a.test other.test\n"
        "garbage-line-without-address name.test\n"
        "fe80::1%eth0 ll.test\n"
    )
    assert load_hosts_file(path) == {
        "localhost": "127.0.0.1",
        "site-a.test": "127.0.0.1",
        "v6.test": "::1",
        "other.test": "10.0.0.9",
        "ll.test": "fe80::1",
    }


def test_load_hosts_file_unreadable(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load_hosts_file(tmp_path / "missing")
    assert info.value.key == "fetch.hosts_file"


class FakeSystem(AbstractResolver):
    """Answers from a table; counts look-ups."""

    def __init__(self, table: dict[str, list[str]]) -> None:
        self.table = table
        self.calls: list[str] = []

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        self.calls.append(host)
        if host not in self.table:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return [
            ResolveResult(
                hostname=host, host=ip, port=port, family=socket.AF_INET, proto=0, flags=0
            )
            for ip in self.table[host]
        ]

    async def close(self) -> None:
        pass


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def make_resolver(
    system: FakeSystem,
    clock: Clock | None = None,
    guard: AddressGuard | None = None,
    **kwargs: object,
) -> CrawlResolver:
    return CrawlResolver(
        overrides=kwargs.pop("overrides", {}),  # type: ignore[arg-type]
        guard=guard or AddressGuard(),
        system=system,
        clock=clock or Clock(),
        **kwargs,  # type: ignore[arg-type]
    )


async def ips(resolver: CrawlResolver, host: str) -> list[str]:
    return [r["host"] for r in await resolver.resolve(host, 80)]


async def test_order_exact_then_wildcard_then_hosts_then_system() -> None:
    system = FakeSystem({"sys.test": ["8.8.8.8"], "x.deep.test": ["9.9.9.9"]})
    resolver = make_resolver(
        system,
        overrides={"x.deep.test": "1.1.1.1", "*.deep.test": "2.2.2.2", "*.test": "3.3.3.3"},
        hosts={"x.deep.test": "4.4.4.4", "h.example": "5.5.5.5"},
    )
    assert await ips(resolver, "X.Deep.Test.") == ["1.1.1.1"]
    assert await ips(resolver, "y.deep.test") == ["2.2.2.2"]
    assert await ips(resolver, "a.b.deep.test") == ["2.2.2.2"]
    assert await ips(resolver, "other.test") == ["3.3.3.3"]
    assert await ips(resolver, "h.example") == ["5.5.5.5"]
    assert system.calls == []
    resolver2 = make_resolver(system, overrides={"*.deep.test": "2.2.2.2"})
    assert await ips(resolver2, "sys.test") == ["8.8.8.8"]
    assert system.calls == ["sys.test"]


async def test_results_carry_port_and_family() -> None:
    resolver = make_resolver(FakeSystem({}), overrides={"a.test": "2606:4700::1"})
    [result] = await resolver.resolve("a.test", 8080)
    assert result["port"] == 8080 and result["family"] == socket.AF_INET6
    assert result["hostname"] == "a.test"


async def test_system_answers_cached_for_ttl() -> None:
    system = FakeSystem({"a.example": ["8.8.4.4"]})
    clock = Clock()
    resolver = make_resolver(system, clock, dns_ttl=60.0)
    for _ in range(3):
        assert await ips(resolver, "a.example") == ["8.8.4.4"]
    assert system.calls == ["a.example"]
    clock.now += 61
    system.table["a.example"] = ["8.8.8.8"]
    assert await ips(resolver, "a.example") == ["8.8.8.8"]
    assert system.calls == ["a.example"] * 2


async def test_failures_cached_briefly() -> None:
    system = FakeSystem({})
    clock = Clock()
    resolver = make_resolver(system, clock, dns_ttl=300.0)
    for _ in range(2):
        with pytest.raises(OSError):
            await resolver.resolve("gone.example")
    assert system.calls == ["gone.example"]
    clock.now += 31
    with pytest.raises(OSError):
        await resolver.resolve("gone.example")
    assert len(system.calls) == 2


async def test_cache_is_bounded() -> None:
    system = FakeSystem({f"h{i}.example": ["8.8.8.8"] for i in range(10)})
    resolver = make_resolver(system, max_entries=3)
    for i in range(10):
        await resolver.resolve(f"h{i}.example")
    assert resolver.cache_size() == 3
    await resolver.resolve("h9.example")  # most recent: still cached
    await resolver.resolve("h0.example")  # evicted long ago: asked again
    assert system.calls[-1] == "h0.example" and len(system.calls) == 11


async def test_guard_refuses_and_filters() -> None:
    system = FakeSystem({"evil.example": ["127.0.0.1"], "mixed.example": ["10.0.0.1", "8.8.8.8"]})
    resolver = make_resolver(system, overrides={"meta.test": "169.254.169.254"})
    with pytest.raises(AddressRefused) as info:
        await resolver.resolve("evil.example")
    assert info.value.reason == "loopback" and info.value.ip == "127.0.0.1"
    assert isinstance(info.value, OSError)
    with pytest.raises(AddressRefused) as info:
        await resolver.resolve("meta.test")
    assert info.value.reason == "link-local"
    assert await ips(resolver, "mixed.example") == ["8.8.8.8"]
    with pytest.raises(AddressRefused):
        await resolver.resolve("127.0.0.1")


async def test_exempt_host_skips_guard() -> None:
    resolver = make_resolver(
        FakeSystem({}), overrides={"proxy.lan": "192.168.1.5"}, exempt_hosts=("proxy.lan",)
    )
    assert await ips(resolver, "proxy.lan") == ["192.168.1.5"]


async def test_allow_loopback_passes_override() -> None:
    resolver = make_resolver(
        FakeSystem({}),
        guard=AddressGuard(allow_loopback=True),
        overrides={"site-a.test": "127.0.0.1"},
    )
    assert await ips(resolver, "site-a.test") == ["127.0.0.1"]
