"""Seeds: where a crawl starts.

Contract of :func:`parse_seeds`: one seed a line, either a URL (``https://example.org/x``)
or a bare domain with an optional path or port (``example.org``, ``example.org/news``,
``example.org:8080``), which gets ``default_scheme``. A line without a scheme whose host
is one bare word (no dot, not ``localhost``, not an IP address) is no domain and is
unusable (``intranet``, or a stray ``g`` out of binary bytes); with its scheme
(``http://intranet/``) such a host is a seed. Blank lines and lines starting with
``#`` are skipped; a trailing `` # comment`` (whitespace before ``#``) is dropped. The
URL may be followed by scope options of its own, ``key=value`` separated by whitespace
(``https://example.org/docs/ scope=prefix depth=3 extra-hops=1``: ``scope`` one of the
``ScopeMode`` values, ``depth`` 0-10000, ``extra-hops`` 0-100); an unknown option or a
bad value makes the line unusable, reported with its number. The
result (:class:`SeedList`) is the canonical URLs, de-duplicated in first-seen order,
the options of those that have them (``scopes``),
one :class:`SeedProblem` per unusable line (1-based line numbers; at most
``MAX_PROBLEMS`` kept) and the count of all unusable lines. A bad line never stops the
rest: only :func:`load_seeds` raises, when the file itself is unusable.

:func:`load_seeds` reads the file as a stream in bounded memory, whatever it is (a
pipe, a device that never ends): a line longer than ``MAX_SEED_LINE`` bytes is skipped
as a problem without being held, a line that is not UTF-8 is skipped as a problem, a
file longer than ``MAX_SEEDS_BYTES`` is refused, and a problem shows at most
``SHOWN_CHARS`` of its line.
"""

from __future__ import annotations

import contextlib
import ipaddress
import re
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import BinaryIO
from urllib.parse import urlsplit

from headway.errors import SeedError
from headway.urls.canonical import DEFAULT_OPTIONS, CanonOptions, canonicalize
from headway.urls.scope import ScopeMode, SeedScope

__all__ = ["SeedList", "SeedProblem", "Unreadable", "load_seeds", "parse_seeds"]

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")
_TRAILING_COMMENT = re.compile(r"\s+#.*$")
_MAX_PROBLEMS_SHOWN = 5

#: Longest seed line read, in bytes (no usable URL is longer); longer lines are problems.
MAX_SEED_LINE = 8192
#: Largest seeds file read, in bytes; past it the file is refused (an endless source).
MAX_SEEDS_BYTES = 64 * 1024 * 1024
#: Problems kept per file (the rest are counted in the log, not kept).
MAX_PROBLEMS = 1000
#: Characters of an unusable line shown in its problem.
SHOWN_CHARS = 100
_READ = 64 * 1024


@dataclass(frozen=True, slots=True)
class SeedProblem:
    """A seed line that could not be used, and why."""

    line_no: int
    line: str
    reason: str


@dataclass(frozen=True, slots=True)
class SeedList:
    """The usable seeds of a file, the problems kept (at most ``MAX_PROBLEMS``) and the
    number of unusable lines in all."""

    urls: list[str]
    problems: list[SeedProblem]
    unusable: int
    #: canonical seed URL -> its own scope options (seeds file ``key=value``)
    scopes: dict[str, SeedScope] = field(default_factory=dict)


class Unreadable(StrEnum):
    """A line that was not read as text: why (the problem's reason)."""

    TOO_LONG = f"line longer than {MAX_SEED_LINE} bytes"
    NOT_UTF8 = "not UTF-8"


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


#: Seed options: name -> (lowest, highest) for numbers; ``scope`` takes a ScopeMode.
_NUMBER_OPTIONS = {"depth": (0, 10_000), "extra-hops": (0, 100)}
_OPTION_NAMES = ("scope", "depth", "extra-hops")


def _seed_options(tokens: list[str]) -> tuple[SeedScope | None, str]:
    """(the options, '') of a seed line's ``key=value`` tokens, or (None, reason)."""
    values: dict[str, object] = {}
    for token in tokens:
        key, _eq, value = token.partition("=")
        key = key.lower()
        if key not in _OPTION_NAMES:
            return None, f"unknown seed option {key!r} (one of {', '.join(_OPTION_NAMES)})"
        if key in values:
            return None, f"seed option {key!r} given twice"
        if key == "scope":
            try:
                values[key] = ScopeMode(value.lower())
            except ValueError:
                modes = ", ".join(m.value for m in ScopeMode)
                return None, f"scope={value!r}: one of {modes}"
            continue
        low, high = _NUMBER_OPTIONS[key]
        if not value.isdigit() or not low <= int(value) <= high:
            return None, f"{key}={value!r}: a whole number from {low} to {high}"
        values[key] = int(value)
    mode = values.get("scope")
    depth = values.get("depth")
    hops = values.get("extra-hops")
    return (
        SeedScope(
            mode=mode if isinstance(mode, ScopeMode) else None,
            max_depth=depth if isinstance(depth, int) else None,
            extra_hops=hops if isinstance(hops, int) else None,
        ),
        "",
    )


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


_HOST_AS_TYPED = re.compile(r"^(\[[^\]]*\]|[^/?#:]*)")


def _bare_word_problem(text: str) -> str | None:
    """Why a seed given without a scheme is no domain, or None: a host typed as one bare
    word (no dot, not ``localhost``, not an IP address: ``intranet``, ``g``, ``7``, which
    the URL parser would read as the address 0.0.0.7) is a typo or noise, not a site."""
    m = _HOST_AS_TYPED.match(text)
    host = m.group(1).lower() if m is not None else ""
    if "." in host or host == "localhost":
        return None
    try:
        ipaddress.ip_address(host.strip("[]"))
        return None
    except ValueError:
        pass
    return f"{host!r} is a bare word, not a domain (write http://{host}/ to crawl it)"


def parse_seeds(
    lines: Iterable[str | Unreadable],
    *,
    default_scheme: str = "https",
    options: CanonOptions = DEFAULT_OPTIONS,
    max_length: int | None = None,
) -> SeedList:
    """Canonical seed URLs and the problems of the lines that were skipped; a line given
    as ``Unreadable`` could not be read as text. ``max_length``: longer canonical URLs are
    problems (admission would refuse them)."""
    if default_scheme not in ("http", "https"):
        raise ValueError(f"default_scheme must be 'http' or 'https', not {default_scheme!r}")
    seeds: list[str] = []
    seen: set[str] = set()
    scopes: dict[str, SeedScope] = {}
    problems: list[SeedProblem] = []
    texts: set[str] = set()
    unusable = 0

    def problem(line_no: int, line: str, reason: str) -> None:
        nonlocal unusable
        unusable += 1
        if len(problems) < MAX_PROBLEMS:
            shown = line if len(line) <= SHOWN_CHARS else line[:SHOWN_CHARS] + "..."
            problems.append(SeedProblem(line_no, shown, reason))

    for line_no, raw in enumerate(lines, start=1):
        if isinstance(raw, Unreadable):
            problem(line_no, "", raw.value)
            continue
        line = raw.rstrip("\r\n")
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        if text in texts:  # a repeated line costs a set look-up, not a parse
            continue
        texts.add(text)
        text = _TRAILING_COMMENT.sub("", text)
        own: SeedScope | None = None
        tokens = text.split()
        if len(tokens) > 1 and all("=" in t for t in tokens[1:]):
            own, reason = _seed_options(tokens[1:])
            if own is None:
                problem(line_no, line, reason)
                continue
            text = tokens[0]
        url, reason = _seed_url(text, default_scheme)
        if url is None:
            problem(line_no, line, reason)
            continue
        canonical = canonicalize(url, None, options)
        if canonical is None:
            problem(line_no, line, "not a valid URL")
            continue
        if max_length is not None and len(canonical) > max_length:
            problem(line_no, line, f"URL longer than {max_length} characters")
            continue
        host_problem = _host_problem(canonical)
        if host_problem is None and url != text:
            host_problem = _bare_word_problem(text)
        if host_problem is not None:
            problem(line_no, line, host_problem)
            continue
        if canonical not in seen:
            seen.add(canonical)
            seeds.append(canonical)
            if own is not None:
                scopes[canonical] = own
    return SeedList(seeds, problems, unusable, scopes)


def _read_lines(fh: BinaryIO, path: Path) -> Iterator[str | Unreadable]:
    """The lines of a seeds file, decoded; ``Unreadable`` for a line over
    ``MAX_SEED_LINE`` bytes (read past, never held) or one that is not UTF-8. Raises
    SeedError past ``MAX_SEEDS_BYTES``."""
    buf = b""
    overlong = False
    total = 0
    line_no = 0

    def decode(raw: bytes) -> str | Unreadable:
        try:
            return raw.decode("utf-8-sig" if line_no == 1 else "utf-8")
        except UnicodeDecodeError:
            return Unreadable.NOT_UTF8

    while True:
        chunk = fh.read(_READ)
        if not chunk:
            break
        total += len(chunk)
        if total > MAX_SEEDS_BYTES:
            raise SeedError(
                f"seeds file {path} is larger than {MAX_SEEDS_BYTES // (1024 * 1024)} MiB "
                "(an endless device or pipe?); split it and give the parts to later runs"
            )
        buf += chunk
        start = 0
        while True:
            end = buf.find(b"\n", start)
            if end < 0:
                break
            line_no += 1
            if overlong or end - start > MAX_SEED_LINE:
                yield Unreadable.TOO_LONG
            else:
                yield decode(buf[start:end])
            overlong = False
            start = end + 1
        buf = buf[start:]
        if len(buf) > MAX_SEED_LINE:
            overlong = True
            buf = b""
    if buf or overlong:
        line_no += 1
        yield Unreadable.TOO_LONG if overlong else decode(buf)


def load_seeds(
    path: Path,
    *,
    default_scheme: str = "https",
    options: CanonOptions = DEFAULT_OPTIONS,
    max_length: int | None = None,
) -> SeedList:
    """Read and parse a seeds file (UTF-8) in bounded memory (see the module docstring).
    ``-`` reads standard input. Raises SeedError when the file cannot be read, is too
    large, or holds no usable seed."""
    try:
        with contextlib.ExitStack() as stack:
            fh = sys.stdin.buffer if str(path) == "-" else stack.enter_context(path.open("rb"))
            result = parse_seeds(
                _read_lines(fh, path),
                default_scheme=default_scheme,
                options=options,
                max_length=max_length,
            )
    except OSError as exc:
        raise SeedError(f"cannot read seeds file {path}: {exc.strerror or exc}") from None
    if not result.urls:
        detail = "; ".join(
            f"line {p.line_no}: {p.reason}" for p in result.problems[:_MAX_PROBLEMS_SHOWN]
        )
        raise SeedError(
            f"no usable seed in {path}"
            + (f" ({detail})" if detail else " (no line but blank lines and # comments)")
        )
    return result
