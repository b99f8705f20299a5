"""The opt-out list: domains whose owners asked not to be crawled (subdomains covered),
read from the operator's file and grown by the opt-out control; and the one form in which
opt-out and scope compare domains (``normalize_domain``). Pure but for reading the file."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

import ada_url

from headway.errors import ConfigError
from headway.urls.domain import bare_host, parent_domains

__all__ = ["OptOut", "load_optout", "normalize_domain"]

_DOMAIN_OK = re.compile(
    r"^[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?)*$"
)


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
        h = bare_host(host)
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
