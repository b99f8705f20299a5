"""Name resolution for the fetch stage: overrides, hosts file, cached system DNS, guard.

``CrawlResolver`` is the aiohttp resolver seam. For a host name it answers, in order:
an exact override, the most specific ``*.suffix`` override, a hosts-file entry, else the
system resolver through a TTL cache of bounded size (failures are cached briefly too).
Every address is then passed through the ``AddressGuard``: refused addresses are dropped,
and when none is left ``AddressRefused`` (an ``OSError``) is raised naming the reason.
A name that does not resolve raises the resolver's ``OSError`` (``socket.gaierror``).
aiohttp wraps both in ``ClientConnectorDNSError``; the client tells them apart by type.

``parse_resolve_rules`` and ``load_hosts_file`` turn settings into the override maps;
bad input is a ``ConfigError`` naming the setting and the offending item.
"""

from __future__ import annotations

import ipaddress
import logging
import re
import socket
import time
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterable, Mapping
from pathlib import Path

from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.resolver import DefaultResolver

from headway.errors import ConfigError
from headway.fetch.guard import AddressGuard
from headway.urls.domain import match_host

log = logging.getLogger(__name__)

_LABEL = re.compile(r"^[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?$")
#: Seconds a failed look-up is remembered (at most; never longer than the TTL).
NEGATIVE_TTL = 30.0


class AddressRefused(OSError):
    """Every address a host resolved to was refused by the address guard."""

    def __init__(self, host: str, ip: str, reason: str) -> None:
        super().__init__(f"{host} resolves to {ip}, refused: {reason}")
        self.host = host
        self.ip = ip
        self.reason = reason


def _normalize_host(host: str) -> str:
    return host.strip().rstrip(".").lower()


def _valid_hostname(name: str) -> bool:
    labels = name.split(".")
    return 0 < len(name) <= 253 and all(_LABEL.match(label) for label in labels)


def _parse_ip(text: str) -> str | None:
    try:
        return str(ipaddress.ip_address(text.strip().strip("[]")))
    except ValueError:
        return None


def parse_resolve_rules(items: Iterable[str]) -> dict[str, str]:
    """``"HOST=ADDR"`` / ``"*.suffix=ADDR"`` items as a map of lower-case host (or
    pattern) to IP address. A malformed item raises ``ConfigError("fetch.resolve", ...)``.
    """
    rules: dict[str, str] = {}
    for item in items:
        host, sep, addr = item.partition("=")
        host = _normalize_host(host)
        ip = _parse_ip(addr)
        name = host[2:] if host.startswith("*.") else host
        if not sep or ip is None or not _valid_hostname(name):
            raise ConfigError(
                "fetch.resolve", f"bad rule {item!r}: expected HOST=IP or *.SUFFIX=IP"
            )
        rules[host] = ip
    return rules


def load_hosts_file(path: Path) -> dict[str, str]:
    """Host name to address from a file in /etc/hosts format (first entry wins)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise ConfigError("fetch.hosts_file", f"cannot read {path}: {exc}") from exc
    entries: dict[str, str] = {}
    for lineno, line in enumerate(text.splitlines(), 1):
        fields = line.split("#", 1)[0].split()
        if len(fields) < 2:
            continue
        ip = _parse_ip(fields[0].split("%", 1)[0])
        if ip is None:
            log.debug("%s:%d: not an address: %r", path, lineno, fields[0])
            continue
        for name in fields[1:]:
            entries.setdefault(_normalize_host(name), ip)
    return entries


def _result(host: str, ip: str, port: int) -> ResolveResult:
    family = socket.AF_INET6 if ":" in ip else socket.AF_INET
    return ResolveResult(
        hostname=host,
        host=ip,
        port=port,
        family=family,
        proto=0,
        flags=socket.AI_NUMERICHOST | socket.AI_NUMERICSERV,
    )


class CrawlResolver(AbstractResolver):
    """aiohttp resolver with overrides, hosts file, a TTL cache and the address guard.

    ``exempt_hosts`` (the proxy, typically) skip the guard; ``system`` replaces aiohttp's
    default resolver and ``clock`` the monotonic clock (both for tests).
    """

    def __init__(
        self,
        *,
        overrides: Mapping[str, str],
        guard: AddressGuard,
        dns_ttl: float = 300.0,
        max_entries: int = 100_000,
        hosts: Mapping[str, str] | None = None,
        exempt_hosts: Collection[str] = (),
        system: AbstractResolver | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._exact = {k: v for k, v in overrides.items() if not k.startswith("*.")}
        self._suffixes = {k[2:]: v for k, v in overrides.items() if k.startswith("*.")}
        self._hosts = dict(hosts or {})
        self._guard = guard
        self._ttl = dns_ttl
        self._max_entries = max(1, max_entries)
        self._exempt = frozenset(_normalize_host(h) for h in exempt_hosts)
        self._clock = clock
        # (host, family) -> (expires_at, addresses or the failure)
        self._cache: OrderedDict[tuple[str, int], tuple[float, list[str] | OSError]]
        self._cache = OrderedDict()
        self._system = system
        self.lookups = 0  # system look-ups made (cache misses)

    def override_for(self, host: str) -> str | None:
        """The configured address of ``host`` (override or hosts file), if any."""
        name = _normalize_host(host)
        ip = match_host(name, self._exact, self._suffixes)
        return ip if ip is not None else self._hosts.get(name)

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        literal = _parse_ip(host)
        fixed = literal or self.override_for(host)
        ips = [fixed] if fixed is not None else await self._lookup(host, family)
        if _normalize_host(host) in self._exempt:
            return [_result(host, ip, port) for ip in ips]
        allowed: list[ResolveResult] = []
        first_refusal: tuple[str, str] | None = None
        for ip in ips:
            reason = self._guard.refusal(ip)
            if reason is None:
                allowed.append(_result(host, ip, port))
            elif first_refusal is None:
                first_refusal = (ip, reason)
        if not allowed:
            ip, reason = first_refusal or ("nothing", "no address")
            raise AddressRefused(host, ip, reason)
        return allowed

    async def _lookup(self, host: str, family: int) -> list[str]:
        key = (_normalize_host(host), int(family))
        now = self._clock()
        cached = self._cache.get(key)
        if cached is not None and cached[0] > now:
            self._cache.move_to_end(key)
            if isinstance(cached[1], OSError):
                err = cached[1]
                raise type(err)(*err.args)  # a fresh exception: no traceback build-up
            return cached[1]
        if self._system is None:
            self._system = DefaultResolver()
        self.lookups += 1
        try:
            answers = await self._system.resolve(key[0], 0, socket.AddressFamily(family))
        except OSError as exc:
            self._store(key, now + min(self._ttl, NEGATIVE_TTL), exc)
            raise
        ips = list(dict.fromkeys(a["host"] for a in answers))
        if not ips:
            empty = socket.gaierror(socket.EAI_NONAME, f"{host}: no address")
            self._store(key, now + min(self._ttl, NEGATIVE_TTL), empty)
            raise empty
        self._store(key, now + self._ttl, ips)
        return ips

    def _store(self, key: tuple[str, int], expires: float, value: list[str] | OSError) -> None:
        self._cache[key] = (expires, value)
        self._cache.move_to_end(key)
        while len(self._cache) > self._max_entries:
            self._cache.popitem(last=False)

    def cache_size(self) -> int:
        return len(self._cache)

    async def close(self) -> None:
        if self._system is not None:
            await self._system.close()
            self._system = None
