"""URL canonicalization (draft; being completed)."""

from __future__ import annotations

from dataclasses import dataclass

import ada_url


@dataclass(frozen=True, slots=True)
class CanonOptions:
    strip_params: frozenset[str] = frozenset()
    strip_prefixes: tuple[str, ...] = ("utm_",)
    sort_query: bool = True


DEFAULT_OPTIONS = CanonOptions()


def canonicalize(url: str, base: str | None = None,
                 options: CanonOptions = DEFAULT_OPTIONS) -> str | None:
    try:
        u = ada_url.URL(url.strip(), base) if base else ada_url.URL(url.strip())
    except ValueError:
        return None
    if u.protocol not in ("http:", "https:"):
        return None
    u.hash = ""
    return str(u.href)
