"""Seeds: where a crawl starts.

Contract of :func:`parse_seeds`: one seed a line, either a URL (``https://example.org/x``)
or a bare domain with an optional path or port (``example.org``, ``example.org/news``,
``example.org:8080``), which gets ``default_scheme``. Blank lines and lines starting with
``#`` are skipped; a trailing `` # comment`` (whitespace before ``#``) is dropped. The
result is the canonical URLs, de-duplicated in first-seen order, and one
:class:`SeedProblem` per unusable line (1-based line numbers). A bad line never stops
the rest: only :func:`load_seeds` raises, when the file itself is unusable.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from headway.errors import SeedError
from headway.urls.canonical import DEFAULT_OPTIONS, CanonOptions, canonicalize

__all__ = ["SeedProblem", "load_seeds", "parse_seeds"]

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")
_TRAILING_COMMENT = re.compile(r"\s+#.*$")
_MAX_PROBLEMS_SHOWN = 5


@dataclass(frozen=True, slots=True)
class SeedProblem:
    """A seed line that could not be used, and why."""

    line_no: int
    line: str
    reason: str


def _seed_url(text: str, default_scheme: str) -> tuple[str | None, str]:
    """(absolute URL, '') for one seed text, or (None, reason)."""
    if any(c.isspace() for c in text):
        return None, "whitespace inside the URL"
    m = _SCHEME.match(text)
    if m is not None and text[m.end() : m.end() + 2] == "//":
        scheme = m.group(1).lower()
        if scheme not in ("http", "https"):
            return None, f"unsupported scheme {scheme!r} (only http and https)"
        return text, ""
    if m is not None and not text[m.end() :].split("/", 1)[0].isdigit():
        # 'mailto:x', 'javascript:...'; whereas 'example.org:8080/x' is a host and port.
        return None, f"unsupported scheme {m.group(1).lower()!r} (only http and https)"
    if text.startswith(("/", ".", "?")):
        return None, "not a URL or domain"
    return f"{default_scheme}://{text}", ""


_LABEL = re.compile(r"^(?!-)[a-z0-9_-]{1,63}(?<!-)$")


def _host_problem(url: str) -> str | None:
    """Why the host of a canonical seed URL cannot be a real host name, or None.

    The WHATWG parser accepts almost any host text (``ht!tp``, ``a..b``); a seed is a
    promise of a real site, so it must be an IP address or DNS labels of letters,
    digits, hyphens (and underscores, which real sub-domains use)."""
    host = urlsplit(url).hostname or ""
    if not host:
        return "no host name"
    try:
        ipaddress.ip_address(host.strip("[]"))
        return None
    except ValueError:
        pass
    if len(host) > 253 or not all(_LABEL.match(label) for label in host.split(".")):
        return f"{host!r} is not a valid host name"
    return None


def parse_seeds(
    lines: Iterable[str],
    *,
    default_scheme: str = "https",
    options: CanonOptions = DEFAULT_OPTIONS,
) -> tuple[list[str], list[SeedProblem]]:
    """Canonical seed URLs and the problems of the lines that were skipped."""
    if default_scheme not in ("http", "https"):
        raise ValueError(f"default_scheme must be 'http' or 'https', not {default_scheme!r}")
    seeds: list[str] = []
    seen: set[str] = set()
    problems: list[SeedProblem] = []
    for line_no, raw in enumerate(lines, start=1):
        line = raw.rstrip("\r\n")
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        text = _TRAILING_COMMENT.sub("", text)
        url, reason = _seed_url(text, default_scheme)
        if url is None:
            problems.append(SeedProblem(line_no, line, reason))
            continue
        canonical = canonicalize(url, None, options)
        if canonical is None:
            problems.append(SeedProblem(line_no, line, "not a valid URL"))
            continue
        host_problem = _host_problem(canonical)
        if host_problem is not None:
            problems.append(SeedProblem(line_no, line, host_problem))
            continue
        if canonical not in seen:
            seen.add(canonical)
            seeds.append(canonical)
    return seeds, problems


def load_seeds(
    path: Path,
    *,
    default_scheme: str = "https",
    options: CanonOptions = DEFAULT_OPTIONS,
) -> tuple[list[str], list[SeedProblem]]:
    """Read and parse a seeds file (UTF-8). Raises SeedError when the file cannot be
    read, is not UTF-8, or holds no usable seed."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SeedError(f"cannot read seeds file {path}: {exc.strerror or exc}") from exc
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line_no = data[: exc.start].count(b"\n") + 1
        raise SeedError(f"seeds file {path} is not UTF-8 (line {line_no})") from exc
    seeds, problems = parse_seeds(text.splitlines(), default_scheme=default_scheme, options=options)
    if not seeds:
        detail = "; ".join(f"line {p.line_no}: {p.reason}" for p in problems[:_MAX_PROBLEMS_SHOWN])
        raise SeedError(
            f"no valid seed in {path}" + (f" ({detail})" if detail else " (file is empty)")
        )
    return seeds, problems
