"""Scope and opt-out: which canonical URLs the crawl may admit.

Contract of :meth:`Scope.check` (pure; called at admission for every discovered link):
it returns ``None`` when the URL is in scope, else the first reason that applies, in
this order:

``"too-long"``      the URL is longer than ``max_url_length`` characters;
``"too-deep"``      ``depth`` is greater than ``max_depth`` (seeds are depth 0);
``"opted-out"``     the host equals, or is a subdomain of, an opt-out domain;
``"out-of-scope"``  the host is not a seed host (``seed-hosts``) or its registered domain
                    is not a seed's (``seed-domains``); ``open`` admits every host;
``"excluded"``      an ``exclude`` regex matches (``re.search`` on the URL);
``"not-included"``  ``include`` regexes are given and none matches.

Seeds are always in scope by host and domain, since the seed sets are built from them;
they still pass through opt-out. Host comparisons ignore the port.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

import ada_url

from headway.errors import ConfigError
from headway.urls.canonical import host_key
from headway.urls.domain import parent_domains, registered_domain, strip_port

__all__ = ["OptOut", "Scope", "ScopeMode", "ScopeRules", "load_optout", "normalize_domain"]

_DOMAIN_OK = re.compile(
    r"^[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?)*$"
)


#: Host verdicts cached by ``Scope.check``; the cache is dropped whole when full.
_VERDICT_CACHE = 100_000
_UNKNOWN: object = object()


class ScopeMode(StrEnum):
    """How far from its seeds a crawl may go."""

    SEED_DOMAINS = "seed-domains"
    SEED_HOSTS = "seed-hosts"
    OPEN = "open"


def _hostname(host: str) -> str:
    return strip_port(host).lower().rstrip(".")


def normalize_domain(text: str) -> str | None:
    """A domain as opt-out and scope compare it (lower-case ASCII/punycode), or None.

    Accepts ``example.org``, ``*.example.org``, ``.example.org``, ``Example.ORG.``,
    Unicode names and a URL (its host is taken).
    """
    t = text.strip()
    if "://" in t:
        try:
            t = str(ada_url.URL(t).hostname)
        except ValueError:
            return None
    t = t.removeprefix("*.").lstrip(".").rstrip(".").lower()
    if not t:
        return None
    if not t.isascii():
        try:
            encoded = ada_url.idna_to_ascii(t)
        except Exception:  # the binding's error types are not part of its API
            return None
        t = encoded.decode() if isinstance(encoded, bytes) else str(encoded)
    return t if _DOMAIN_OK.match(t) else None


class OptOut:
    """Domains whose owners asked not to be crawled; subdomains are covered too.

    Entries are normalized with :func:`normalize_domain`; entries that are not domains
    are ignored here (:func:`load_optout` reports them with line numbers). The list only
    grows (``add``: an operator's opt-out control while the crawl runs).
    """

    __slots__ = ("_domains",)

    def __init__(self, domains: Iterable[str]) -> None:
        found: set[str] = set()
        for d in domains:
            n = normalize_domain(d)
            if n is not None:
                found.add(n)
        self._domains = frozenset(found)

    def add(self, domain: str) -> bool:
        """Opt ``domain`` out from now on (an operator's control while the crawl runs);
        False when it is not a domain or was already in the list."""
        d = normalize_domain(domain)
        if d is None or d in self._domains:
            return False
        self._domains = self._domains | {d}
        return True

    @property
    def domains(self) -> frozenset[str]:
        return self._domains

    def blocks(self, host: str) -> bool:
        """Whether ``host`` (may carry ``:port``) is, or is under, an opted-out domain."""
        domains = self._domains
        if not domains:
            return False
        h = _hostname(host)
        return h in domains or any(p in domains for p in parent_domains(h))

    def __len__(self) -> int:
        return len(self._domains)

    def __repr__(self) -> str:
        return f"OptOut({len(self._domains)} domains)"


def load_optout(path: Path) -> tuple[OptOut, list[str]]:
    """Read an opt-out file: one domain a line, blank and ``#`` lines skipped.

    Returns the list and the problems found (``'line N: ...'``); bad lines are skipped.
    Raises ConfigError('scope.optout_file', ...) when the file cannot be read.
    """
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError("scope.optout_file", f"cannot read {path}: {exc}") from exc
    domains: list[str] = []
    problems: list[str] = []
    for n, line in enumerate(text.splitlines(), start=1):
        entry = line.split(" #", 1)[0].strip()
        if not entry or entry.startswith("#"):
            continue
        norm = normalize_domain(entry)
        if norm is None:
            problems.append(f"line {n}: not a domain: {entry!r}")
            continue
        domains.append(norm)
    return OptOut(domains), problems


@dataclass(frozen=True, slots=True)
class ScopeRules:
    """The scope settings of one crawl (hosts and domains lower-case, without port)."""

    mode: ScopeMode = ScopeMode.SEED_DOMAINS
    seed_hosts: frozenset[str] = frozenset()
    seed_domains: frozenset[str] = frozenset()
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    max_depth: int = 50
    max_url_length: int = 2083


def _compile(patterns: tuple[str, ...], key: str) -> tuple[re.Pattern[str], ...]:
    compiled = []
    for p in patterns:
        try:
            compiled.append(re.compile(p))
        except re.error as exc:
            raise ConfigError(key, f"bad regular expression {p!r}: {exc}") from exc
    return tuple(compiled)


class Scope:
    """Decides, per canonical URL and depth, whether admission may take it."""

    __slots__ = (
        "_domains",
        "_exclude",
        "_host_verdicts",
        "_hosts",
        "_include",
        "_max_depth",
        "_max_len",
        "_mode",
        "_optout",
        "rules",
    )

    def __init__(self, rules: ScopeRules, optout: OptOut | None = None) -> None:
        self.rules = rules
        self._mode = ScopeMode(rules.mode)
        self._hosts = {_hostname(h) for h in rules.seed_hosts}
        self._domains = {_hostname(d) for d in rules.seed_domains}
        self._include = _compile(rules.include, "scope.include")
        self._exclude = _compile(rules.exclude, "scope.exclude")
        self._max_depth = rules.max_depth
        self._max_len = rules.max_url_length
        self._optout = optout  # may grow while the crawl runs (``opted_out``)
        self._host_verdicts: dict[str, object] = {}

    @classmethod
    def for_seeds(
        cls,
        seeds: Iterable[str],
        *,
        mode: ScopeMode = ScopeMode.SEED_DOMAINS,
        include: Iterable[str] = (),
        exclude: Iterable[str] = (),
        max_depth: int = 50,
        max_url_length: int = 2083,
        optout: OptOut | None = None,
    ) -> Scope:
        """A scope around the hosts and registered domains of canonical seed URLs."""
        hosts = {_hostname(host_key(s)) for s in seeds}
        hosts.discard("")
        rules = ScopeRules(
            mode=mode,
            seed_hosts=frozenset(hosts),
            seed_domains=frozenset(registered_domain(h) for h in hosts),
            include=tuple(include),
            exclude=tuple(exclude),
            max_depth=max_depth,
            max_url_length=max_url_length,
        )
        return cls(rules, optout)

    def _host_verdict(self, key: str) -> str | None:
        """Scope decision that depends on the host alone (cached per host key)."""
        host = _hostname(key)
        if not host:
            return "out-of-scope"
        if self._optout is not None and self._optout.blocks(host):
            return "opted-out"
        mode = self._mode
        if mode is ScopeMode.SEED_HOSTS:
            if host not in self._hosts:
                return "out-of-scope"
        elif mode is ScopeMode.SEED_DOMAINS and (
            host not in self._hosts and registered_domain(host) not in self._domains
        ):
            return "out-of-scope"
        return None

    def add_seed_host(self, host: str) -> None:
        """Treat ``host`` (and its registered domain) as a seed's: a seed added while the
        crawl runs, or leased by a node that has not heard of it yet. Opt-out still
        applies to it; a host already a seed's changes nothing."""
        h = _hostname(host)
        if h and (h not in self._hosts or registered_domain(h) not in self._domains):
            self._host_verdicts.clear()
            self._hosts.add(h)
            self._domains.add(registered_domain(h))

    def opted_out(self) -> None:
        """The opt-out list grew: decide every host again."""
        self._host_verdicts.clear()

    @property
    def seed_hosts(self) -> frozenset[str]:
        return frozenset(self._hosts)

    @property
    def seed_domains(self) -> frozenset[str]:
        return frozenset(self._domains)

    def check(self, url: str, depth: int, host: str | None = None) -> str | None:
        """None when ``url`` is in scope at ``depth``, else the reason (module contract).
        ``host`` may pass the URL's ``host_key`` when the caller already has it."""
        if len(url) > self._max_len:
            return "too-long"
        if depth > self._max_depth:
            return "too-deep"
        key = host_key(url) if host is None else host
        verdict = self._host_verdicts.get(key, _UNKNOWN)
        if verdict is _UNKNOWN:
            verdict = self._host_verdict(key)
            if len(self._host_verdicts) >= _VERDICT_CACHE:
                self._host_verdicts.clear()
            self._host_verdicts[key] = verdict
        if verdict is not None:
            return verdict  # type: ignore[return-value]
        for rx in self._exclude:
            if rx.search(url):
                return "excluded"
        if self._include and not any(rx.search(url) for rx in self._include):
            return "not-included"
        return None
