"""Scope: which canonical URLs the crawl may admit (the opt-out list it consults is in
``urls/optout.py``, re-exported here).

Contract of :meth:`Scope.check` (pure; called at admission for every discovered link):
it returns ``None`` when the URL is in scope, else the first reason that applies, in
this order:

``"too-long"``      the URL is longer than ``max_url_length`` characters;
``"too-deep"``      ``depth`` is greater than ``max_depth`` and every seed's own depth
                    (seeds are depth 0);
``"opted-out"``     the host equals, or is a subdomain of, an opt-out domain;
``"out-of-scope"``  no seed's rule takes the URL and no ``include_surts`` prefix matches
                    its SURT key; a seed's rule (its own ``scope=`` in the seeds file, or
                    the crawl's mode) takes its host (``seed-hosts``), hosts of its
                    registered domain (``seed-domains``), URLs under its path prefix
                    (``prefix``: the seed's URL up to its last ``/``, either scheme) or
                    every URL (``open``);
``"too-deep"``      rules take the URL, but ``depth`` is greater than each one's depth;
``"excluded"``      an ``exclude`` regex matches (``re.search`` on the URL) or an
                    ``exclude_surts`` prefix matches the URL's SURT key;
``"not-included"``  ``include`` regexes are given and none matches.

Seeds are always in scope by their own rule, since the rules are built from them; they
still pass through opt-out. Host comparisons ignore the port. ``extra_hops`` says how
many links beyond the scope a page in scope may lead, and to what depth (its rules'
most; admission counts the hops, and a page taken as a hop must still pass
``url_refusal``). SURT prefixes are given as headway writes SURT keys
(``org,example)/docs``), as Heritrix does (``http://(org,example,)/docs``), or as a URL.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum

from headway.errors import ConfigError
from headway.urls.canonical import host_key
from headway.urls.domain import bare_host, registered_domain
from headway.urls.optout import OptOut, load_optout, normalize_domain
from headway.urls.surt import surt

__all__ = [
    "OptOut",
    "Scope",
    "ScopeMode",
    "ScopeRules",
    "SeedRule",
    "SeedScope",
    "load_optout",
    "normalize_domain",
    "surt_prefix",
    "url_prefix",
]

#: Host verdicts cached by ``Scope.check``; the cache is dropped whole when full.
_VERDICT_CACHE = 100_000


class ScopeMode(StrEnum):
    """How far from its seeds a crawl may go."""

    SEED_DOMAINS = "seed-domains"
    SEED_HOSTS = "seed-hosts"
    PREFIX = "prefix"
    OPEN = "open"


@dataclass(frozen=True, slots=True)
class SeedScope:
    """A seed's own scope options (the seeds file's ``scope=``, ``depth=``,
    ``extra-hops=``); None: the crawl's setting."""

    mode: ScopeMode | None = None
    max_depth: int | None = None
    extra_hops: int | None = None


@dataclass(frozen=True, slots=True)
class SeedRule:
    """What one seed takes into scope: URLs ``mode`` relates to ``url``, to
    ``max_depth``, with ``extra_hops`` links beyond."""

    url: str
    mode: ScopeMode
    max_depth: int
    extra_hops: int


def url_prefix(url: str) -> str:
    """A ``prefix`` seed's prefix: its URL up to the last ``/`` of its path, without the
    scheme (``https://a.org/docs/x.html`` -> ``a.org/docs/``)."""
    rest = url.split("://", 1)[-1]
    rest = rest.split("#", 1)[0].split("?", 1)[0]
    host, _sep, path = rest.partition("/")
    return f"{host.lower()}/{path.rsplit('/', 1)[0] + '/' if '/' in path else ''}"


def _schemeless(url: str) -> str:
    return url.split("://", 1)[-1]


def surt_prefix(text: str) -> str | None:
    """A SURT prefix as ``surt`` keys are written (``org,example)/docs``), from that
    form, Heritrix's (``http://(org,example,)/docs``) or a URL; None when empty."""
    t = text.strip()
    if not t:
        return None
    if "://(" in t:
        return t.split("://(", 1)[1].replace(",)", ")").lower()
    if "://" in t:
        key = surt(t)
        if t.endswith("/") and not key.endswith("/"):
            key += "/"
        return key
    return t.lower()


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
    #: seeds with options of their own (or of the ``prefix`` mode): their rules
    seeds: tuple[SeedRule, ...] = ()
    include_surts: tuple[str, ...] = ()
    exclude_surts: tuple[str, ...] = ()
    extra_hops: int = 0
    #: every seed URL the rules were made from (``add_seed`` of one changes nothing)
    seed_urls: frozenset[str] = frozenset()


def _compile(patterns: tuple[str, ...], key: str) -> tuple[re.Pattern[str], ...]:
    compiled = []
    for p in patterns:
        try:
            compiled.append(re.compile(p))
        except re.error as exc:
            raise ConfigError(key, f"bad regular expression {p!r}: {exc}") from exc
    return tuple(compiled)


@dataclass(frozen=True, slots=True)
class _HostScope:
    """What a host's rules say, cached per host key: ``reason`` (opted out), else the
    deepest depth and most extra hops of the rules taking the whole host (-1: none),
    and the ``(prefix, depth, hops)`` of the prefix rules on the host."""

    reason: str | None
    depth: int = -1
    hops: int = 0
    prefixes: tuple[tuple[str, int, int], ...] = ()


class Scope:
    """Decides, per canonical URL and depth, whether admission may take it."""

    __slots__ = (
        "_deepest",
        "_domain_rules",
        "_exclude",
        "_exclude_surts",
        "_host_rules",
        "_host_verdicts",
        "_include",
        "_include_surts",
        "_max_depth",
        "_max_len",
        "_mode",
        "_open",
        "_optout",
        "_prefix_rules",
        "_seed_urls",
        "rules",
    )

    def __init__(self, rules: ScopeRules, optout: OptOut | None = None) -> None:
        self.rules = rules
        self._mode = ScopeMode(rules.mode)
        self._max_depth = rules.max_depth
        self._max_len = rules.max_url_length
        self._include = _compile(rules.include, "scope.include")
        self._exclude = _compile(rules.exclude, "scope.exclude")
        self._include_surts = tuple(rules.include_surts)
        self._exclude_surts = tuple(rules.exclude_surts)
        self._optout = optout  # may grow while the crawl runs (``opted_out``)
        self._host_verdicts: dict[str, _HostScope] = {}
        # host / registered domain -> (depth, hops); host -> [(prefix, depth, hops)]
        self._host_rules: dict[str, tuple[int, int]] = {}
        self._domain_rules: dict[str, tuple[int, int]] = {}
        self._prefix_rules: dict[str, list[tuple[str, int, int]]] = {}
        self._open: tuple[int, int] | None = None
        self._deepest = rules.max_depth
        self._seed_urls = set(rules.seed_urls) | {r.url for r in rules.seeds}
        for h in rules.seed_hosts:
            self._add_host(bare_host(h), self._mode, rules.max_depth, rules.extra_hops)
        if self._mode is ScopeMode.SEED_DOMAINS:
            for d in rules.seed_domains:
                _widen(self._domain_rules, bare_host(d), rules.max_depth, rules.extra_hops)
        if self._mode is ScopeMode.OPEN:
            self._open = (rules.max_depth, rules.extra_hops)
        for r in rules.seeds:
            self._add_rule(r)

    def _add_host(self, host: str, mode: ScopeMode, depth: int, hops: int) -> None:
        if mode in (ScopeMode.SEED_HOSTS, ScopeMode.SEED_DOMAINS) and host:
            _widen(self._host_rules, host, depth, hops)

    def _add_rule(self, r: SeedRule) -> None:
        host = bare_host(host_key(r.url))
        self._deepest = max(self._deepest, r.max_depth)
        if r.mode is ScopeMode.OPEN:
            depth, hops = self._open or (-1, 0)
            self._open = (max(depth, r.max_depth), max(hops, r.extra_hops))
        elif r.mode is ScopeMode.PREFIX:
            if host:
                self._prefix_rules.setdefault(host, []).append(
                    (url_prefix(r.url), r.max_depth, r.extra_hops)
                )
        else:
            self._add_host(host, r.mode, r.max_depth, r.extra_hops)
            if r.mode is ScopeMode.SEED_DOMAINS and host:
                _widen(self._domain_rules, registered_domain(host), r.max_depth, r.extra_hops)
        self._host_verdicts.clear()

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
        seed_scopes: Mapping[str, SeedScope] | None = None,
        include_surts: Iterable[str] = (),
        exclude_surts: Iterable[str] = (),
        extra_hops: int = 0,
    ) -> Scope:
        """A scope around canonical seed URLs: each seed's rule is the crawl's ``mode``,
        ``max_depth`` and ``extra_hops`` unless ``seed_scopes`` gives it its own."""
        own = seed_scopes or {}
        seeds = list(seeds)
        hosts: set[str] = set()
        rules: list[SeedRule] = []
        for s in seeds:
            opts = own.get(s)
            seed_mode = mode if opts is None or opts.mode is None else opts.mode
            if opts is None and seed_mode is not ScopeMode.PREFIX:
                h = bare_host(host_key(s))
                if h:
                    hosts.add(h)
                continue
            rules.append(
                SeedRule(
                    s,
                    seed_mode,
                    max_depth if opts is None or opts.max_depth is None else opts.max_depth,
                    extra_hops if opts is None or opts.extra_hops is None else opts.extra_hops,
                )
            )
        scope_rules = ScopeRules(
            mode=mode,
            seed_hosts=frozenset(hosts),
            seed_domains=frozenset(registered_domain(h) for h in hosts),
            include=tuple(include),
            exclude=tuple(exclude),
            max_depth=max_depth,
            max_url_length=max_url_length,
            seeds=tuple(rules),
            include_surts=tuple(p for p in map(surt_prefix, include_surts) if p),
            exclude_surts=tuple(p for p in map(surt_prefix, exclude_surts) if p),
            extra_hops=extra_hops,
            seed_urls=frozenset(seeds),
        )
        return cls(scope_rules, optout)

    def _host_verdict(self, key: str) -> _HostScope:
        """What the rules say of a host alone (cached per host key)."""
        host = bare_host(key)
        if not host:
            return _HostScope("out-of-scope")
        if self._optout is not None and self._optout.blocks(host):
            return _HostScope("opted-out")
        depth, hops = self._open or (-1, 0)
        found = [self._host_rules.get(host)]
        if self._domain_rules:
            found.append(self._domain_rules.get(registered_domain(host)))
        for rule in found:
            if rule is not None:
                depth, hops = max(depth, rule[0]), max(hops, rule[1])
        return _HostScope(None, depth, hops, tuple(self._prefix_rules.get(host, ())))

    def add_seed_host(self, host: str) -> None:
        """Treat ``host`` (and its registered domain) as a seed's: a seed added while the
        crawl runs, or leased by a node that has not heard of it yet. Opt-out still
        applies to it; a host already a seed's changes nothing."""
        h = bare_host(host)
        if not h:
            return
        rules = self.rules
        self._add_host(h, ScopeMode.SEED_HOSTS, rules.max_depth, rules.extra_hops)
        if self._mode is ScopeMode.SEED_DOMAINS:
            _widen(self._domain_rules, registered_domain(h), rules.max_depth, rules.extra_hops)
        self._host_verdicts.clear()

    def add_seed(self, url: str) -> None:
        """A seed added while the crawl runs (or leased by a node that has not heard of
        it yet): in the ``prefix`` mode its prefix, else its host and domain
        (``add_seed_host``); a seed the rules were made from changes nothing."""
        if url in self._seed_urls:
            return
        self._seed_urls.add(url)
        if self._mode is ScopeMode.PREFIX:
            rules = self.rules
            self._add_rule(SeedRule(url, ScopeMode.PREFIX, rules.max_depth, rules.extra_hops))
        else:
            self.add_seed_host(host_key(url))

    def add_exclude(self, regex: str) -> None:
        """Refuse the URLs ``regex`` matches from now on (an exclude control while the
        crawl runs; ``ConfigError`` naming ``scope.exclude`` when it is no regex)."""
        self._exclude = (*self._exclude, *_compile((regex,), "scope.exclude"))

    def opted_out(self) -> None:
        """The opt-out list grew: decide every host again."""
        self._host_verdicts.clear()

    @property
    def seed_hosts(self) -> frozenset[str]:
        return frozenset(self._host_rules)

    @property
    def seed_domains(self) -> frozenset[str]:
        return frozenset(self._domain_rules) | {registered_domain(h) for h in self._host_rules}

    def _host(self, key: str) -> _HostScope:
        verdict = self._host_verdicts.get(key)
        if verdict is None:
            verdict = self._host_verdict(key)
            if len(self._host_verdicts) >= _VERDICT_CACHE:
                self._host_verdicts.clear()
            self._host_verdicts[key] = verdict
        return verdict

    def _reach(self, url: str, hs: _HostScope) -> tuple[int, int]:
        """The deepest depth and most extra hops of the rules taking ``url`` (-1: none)."""
        depth, hops = hs.depth, hs.hops
        if hs.prefixes:
            bare = _schemeless(url)
            for prefix, d, h in hs.prefixes:
                if bare.startswith(prefix):
                    depth, hops = max(depth, d), max(hops, h)
        if depth < 0 and self._include_surts:
            key = surt(url)
            if any(key.startswith(p) for p in self._include_surts):
                depth, hops = self._max_depth, self.rules.extra_hops
        return depth, hops

    def check(self, url: str, depth: int, host: str | None = None) -> str | None:
        """None when ``url`` is in scope at ``depth``, else the reason (module contract).
        ``host`` may pass the URL's ``host_key`` when the caller already has it."""
        if len(url) > self._max_len:
            return "too-long"
        if depth > self._deepest:
            return "too-deep"
        key = host_key(url) if host is None else host
        hs = self._host_verdicts.get(key) or self._host(key)
        if hs.reason is not None:
            return hs.reason
        if depth > hs.depth or hs.prefixes:
            reach, _hops = self._reach(url, hs)
            if reach < 0:
                return "out-of-scope"
            if depth > reach:
                return "too-deep"
        if not (self._exclude or self._include or self._exclude_surts):
            return None
        return self.url_refusal(url)

    def url_refusal(self, url: str) -> str | None:
        """The refusal of ``url`` by the rules on URLs alone (``excluded``,
        ``not-included``), or None: what a page taken as an extra hop must still pass."""
        for rx in self._exclude:
            if rx.search(url):
                return "excluded"
        if self._exclude_surts:
            key = surt(url)
            if any(key.startswith(p) for p in self._exclude_surts):
                return "excluded"
        if self._include and not any(rx.search(url) for rx in self._include):
            return "not-included"
        return None

    def extra_hops(self, url: str) -> tuple[int, int] | None:
        """How many links beyond the scope a page at ``url`` may lead, and to what depth:
        the most hops and the deepest depth of the rules that take it (depth aside);
        None when none does."""
        hs = self._host(host_key(url))
        if hs.reason is not None:
            return None
        reach, hops = self._reach(url, hs)
        return (hops, reach) if reach >= 0 else None

    @property
    def hops_possible(self) -> bool:
        """Whether any rule allows extra hops (admission counts them only then)."""
        r = self.rules
        return r.extra_hops > 0 or any(x.extra_hops > 0 for x in r.seeds)


def _widen(table: dict[str, tuple[int, int]], key: str, depth: int, hops: int) -> None:
    old = table.get(key)
    table[key] = (depth, hops) if old is None else (max(old[0], depth), max(old[1], hops))
