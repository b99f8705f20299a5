"""The control log's values and protocol (no IO here).

Contract:

- A ``Control`` is one operator action, recorded once and never changed: a sequence
  number ``seq`` (1, 2, 3 ... per crawl, in the order the log took them), its ``kind``,
  the node it addresses (``node``: None for every node; only pause, resume and stop
  address one node), its arguments (``args``, JSON values, checked by ``check_args``),
  who asked (``origin``, e.g. ``cli alice@host1``, ``console 127.0.0.1``) and when
  (``at``, unix seconds of the writer's clock).
- ``ControlLog.append`` records a control and returns it with its ``seq``; any number
  of processes may append to one crawl's log at once (a CLI while nodes run), each
  control gets its own ``seq``. ``read_after(seq)`` returns the controls with a larger
  ``seq``, in order. The log is the record of every control: nothing is deleted from it.
- Arguments by kind (``check_args`` normalizes and rejects anything else with a
  one-line ``ControlError``):

  ========================  ===============================================================
  pause, resume, stop       none
  add-seeds                 ``urls``: list of URLs (http/https) or bare domains
  opt-out                   ``domain``: a domain (normalized; its subdomains are covered)
  host-override             ``host``, and at least one of ``delay`` (s), ``budget``
                            (pages), ``concurrency`` (requests in flight)
  host-exclude, host-clear  ``host``
  exclude                   ``regex``: a regular expression (Python ``re``, searched in the
                            URL) refusing the URLs it matches, queued ones included
  ========================  ===============================================================
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol

from headway.errors import ControlError
from headway.urls.scope import normalize_domain


class ControlKind(StrEnum):
    PAUSE = "pause"
    RESUME = "resume"
    STOP = "stop"
    ADD_SEEDS = "add-seeds"
    OPT_OUT = "opt-out"
    HOST_OVERRIDE = "host-override"
    HOST_EXCLUDE = "host-exclude"
    HOST_CLEAR = "host-clear"
    EXCLUDE = "exclude"


#: Kinds that may address one node (``Control.node``); the others are crawl-wide.
NODE_KINDS = frozenset({ControlKind.PAUSE, ControlKind.RESUME, ControlKind.STOP})
#: Most URLs one add-seeds control carries.
MAX_SEEDS = 10_000
#: Longest regular expression an exclude control carries.
MAX_REGEX = 2000


@dataclass(frozen=True, slots=True)
class Control:
    """One recorded control (see the module docstring)."""

    seq: int
    kind: ControlKind
    node: str | None
    args: Mapping[str, Any] = field(hash=False)
    origin: str
    at: float

    def to_json(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "kind": str(self.kind),
            "node": self.node,
            "args": dict(self.args),
            "origin": self.origin,
            "at": self.at,
        }


class ControlLog(Protocol):
    """One crawl's durable control log (see the module docstring)."""

    def append(
        self,
        kind: ControlKind,
        args: Mapping[str, Any],
        *,
        node: str | None,
        origin: str,
        at: float,
    ) -> Control:
        """Record a control (``args`` as ``check_args`` returned them); returns it."""
        ...

    def read_after(self, seq: int, limit: int = 1000) -> list[Control]:
        """Up to ``limit`` controls with a sequence number above ``seq``, oldest first."""
        ...

    def close(self) -> None: ...


def read_all(log: ControlLog, after: int = 0, batch: int = 1000) -> list[Control]:
    """Every control of ``log`` with a sequence number above ``after``, oldest first
    (read ``batch`` at a time)."""
    out: list[Control] = []
    while True:
        got = log.read_after(out[-1].seq if out else after, batch)
        out.extend(got)
        if len(got) < batch:
            return out


def check_args(
    kind: ControlKind | str, args: Mapping[str, Any], node: str | None = None
) -> dict[str, Any]:
    """The arguments of a control of ``kind``, normalized; ``ControlError`` (one line)
    when the kind, the node or an argument is not acceptable."""
    try:
        kind = ControlKind(kind)
    except ValueError:
        known = ", ".join(k.value for k in ControlKind)
        raise ControlError(f"unknown control {kind!r} (one of: {known})") from None
    if node is not None and kind not in NODE_KINDS:
        raise ControlError(f"{kind} applies to the whole crawl, not to one node")
    if node is not None and (not node or any(c in node for c in " |{}")):
        raise ControlError(f"bad node id {node!r}")
    if kind in NODE_KINDS:
        _no_more(kind, args, ())
        return {}
    if kind is ControlKind.ADD_SEEDS:
        _no_more(kind, args, ("urls",))
        urls = args.get("urls")
        if not isinstance(urls, Sequence) or isinstance(urls, str) or not urls:
            raise ControlError("add-seeds needs at least one URL")
        if len(urls) > MAX_SEEDS:
            raise ControlError(f"add-seeds takes at most {MAX_SEEDS} URLs at a time")
        out = []
        for u in urls:
            if not isinstance(u, str) or not u.strip() or any(c.isspace() for c in u.strip()):
                raise ControlError(f"not a URL: {u!r}")
            u = u.strip()
            scheme = u.split("://", 1)[0].lower() if "://" in u else None
            if scheme is not None and scheme not in ("http", "https"):
                raise ControlError(f"not an http or https URL: {u!r}")
            if scheme is None and normalize_domain(u) is None:
                raise ControlError(f"not a URL or a domain: {u!r}")
            out.append(u)
        return {"urls": out}
    if kind is ControlKind.EXCLUDE:
        _no_more(kind, args, ("regex",))
        regex = args.get("regex")
        if not isinstance(regex, str) or not regex or len(regex) > MAX_REGEX:
            raise ControlError(f"exclude needs a regular expression of 1-{MAX_REGEX} characters")
        try:
            re.compile(regex)
        except re.error as exc:
            raise ControlError(f"exclude: bad regular expression {regex!r}: {exc}") from None
        return {"regex": regex}
    if kind is ControlKind.OPT_OUT:
        _no_more(kind, args, ("domain",))
        raw = args.get("domain")
        domain = normalize_domain(raw) if isinstance(raw, str) else None
        if domain is None:
            raise ControlError(f"opt-out needs a domain, got {raw!r}")
        return {"domain": domain}
    host = check_host(args.get("host"))
    if kind is not ControlKind.HOST_OVERRIDE:
        _no_more(kind, args, ("host",))
        return {"host": host}
    _no_more(kind, args, ("host", "delay", "budget", "concurrency"))
    out2: dict[str, Any] = {"host": host}
    delay = args.get("delay")
    if delay is not None:
        if isinstance(delay, bool) or not isinstance(delay, int | float):
            raise ControlError(f"delay must be a number of seconds, got {delay!r}")
        if not (math.isfinite(delay) and 0 <= delay <= 86_400):
            raise ControlError(f"delay must be from 0 to 86400 seconds, got {delay!r}")
        out2["delay"] = float(delay)
    for name, low in (("budget", 0), ("concurrency", 1)):
        value = args.get(name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ControlError(f"{name} must be a whole number, at least {low}, got {value!r}")
        out2[name] = value
    if len(out2) == 1:
        raise ControlError("host-override needs --delay, --budget or --concurrency")
    return out2


def check_host(raw: object) -> str:
    """A host as the frontier keys it (lower-case, ``:port`` kept); ``ControlError``."""
    if not isinstance(raw, str):
        raise ControlError(f"a host is needed, got {raw!r}")
    text = raw.strip().lower().rstrip(".")
    name, colon, port = text.rpartition(":") if text.count(":") == 1 else (text, "", "")
    if colon and not (port.isdigit() and 0 < int(port) < 65536):
        raise ControlError(f"bad port in host {raw!r}")
    if normalize_domain(name) != name and not _is_address(name):
        raise ControlError(f"not a host name: {raw!r} (give it as the crawl log does)")
    return text


def _is_address(name: str) -> bool:
    parts = name.split(".")
    return len(parts) == 4 and all(p.isdigit() and int(p) < 256 for p in parts)


def _no_more(kind: ControlKind, args: Mapping[str, Any], allowed: Sequence[str]) -> None:
    extra = sorted(set(args) - set(allowed))
    if extra:
        raise ControlError(f"{kind} takes no {', '.join(extra)}")


def describe(control: Control) -> str:
    """One line saying what a control asks, e.g. ``#3 pause node n1 (cli bob@h, ...)``."""
    a = control.args
    what = str(control.kind)
    if control.kind is ControlKind.ADD_SEEDS:
        urls = list(a.get("urls", ()))
        shown = " ".join(urls[:3]) + (f" and {len(urls) - 3} more" if len(urls) > 3 else "")
        what += f" {shown}"
    elif control.kind is ControlKind.OPT_OUT:
        what += f" {a.get('domain')}"
    elif control.kind is ControlKind.EXCLUDE:
        what += f" {a.get('regex')}"
    elif control.kind is ControlKind.HOST_OVERRIDE:
        sets = ", ".join(f"{k} {_num(a[k])}" for k in ("delay", "budget", "concurrency") if k in a)
        what += f" {a.get('host')}: {sets}"
    elif "host" in a:
        what += f" {a['host']}"
    if control.kind in NODE_KINDS:
        what += f" node {control.node}" if control.node else " (every node)"
    return f"#{control.seq} {what} by {control.origin}"


def _num(value: object) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def encode_args(args: Mapping[str, Any]) -> str:
    return json.dumps(dict(args), separators=(",", ":"), sort_keys=True)


def control_from_row(
    seq: int, kind: str, node: str | None, args: str | Mapping[str, Any], origin: str, at: float
) -> Control | None:
    """A stored control read back (``args``: its JSON text, or the value parsed from it);
    None for a row this version cannot read (a kind it does not know: skipped, never a
    crash)."""
    try:
        k = ControlKind(kind)
        parsed = json.loads(args) if isinstance(args, str) else args
    except ValueError:
        return None
    if not isinstance(parsed, dict):
        return None
    return Control(int(seq), k, node or None, parsed, str(origin), float(at))


def encode_record(
    kind: ControlKind, args: Mapping[str, Any], node: str | None, origin: str, at: float
) -> str:
    """A control as one JSON record ``{"at", "kind", "node", "args", "origin"}`` (its
    ``seq`` is where it is stored); read back by ``control_from_json``."""
    record = {"at": at, "kind": str(kind), "node": node, "args": dict(args), "origin": origin}
    return json.dumps(record, separators=(",", ":"), sort_keys=True)


def control_from_json(seq: int, text: str | bytes) -> Control | None:
    """Control ``seq`` stored as one JSON record ``{"at", "kind", "node", "args",
    "origin"}`` read back (``control_from_row``); None for a record this version cannot
    read."""
    try:
        r = json.loads(text)
        return control_from_row(
            seq,
            str(r["kind"]),
            r.get("node"),
            r.get("args", {}),
            str(r.get("origin", "")),
            float(r.get("at", 0.0)),
        )
    except (ValueError, KeyError, TypeError):
        return None
