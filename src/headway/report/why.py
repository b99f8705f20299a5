"""``headway why URL``: why a URL was or was not crawled, decided from the crawl's own
records (no IO here: ``cli/why.py`` reads them and hands them over as values).

Contract of ``explain`` (the first line is the verdict, the next ones its grounds):

- the crawl log has lines for the URL: the last one decides: ``fetched 200 at T``,
  ``disallowed by robots.txt of host H (version fetched at T, digest D)``, or
  ``not fetched: <outcome> (<why>) at T``; a frontier record that queues it again
  (a retry, a revisit) is added;
- else the frontier's record: ``queued at depth D (priority P ...)``, ``in flight:
  leased by node N until T``, ``parked: waiting for its revisit``, ``done`` or
  ``failed`` (without a crawl log line);
- else seen without a record: admitted once, then shed, or settled in a shared crawl
  whose crawl logs were not given;
- else never seen: the admission rules the crawl last started with (``--scope``,
  ``--include``, ``--exclude``, ``--max-url-length``, the opt-out file and the opt-out
  controls) applied to it as a seed-depth link: ``opted out: domain D (control #N)``,
  ``out of scope: rule --scope seed-domains ...``, ``out of scope: rule --exclude P``,
  or ``never seen: in scope, but no page of the crawl linked to it``.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from headway.control.log import Control, ControlKind
from headway.frontier.store import FoundUrl, UrlState
from headway.policy.decisions import ROBOTS_DISALLOWED
from headway.urls.domain import registered_domain, strip_port
from headway.urls.scope import OptOut, Scope, ScopeMode


@dataclass(frozen=True, slots=True)
class WhyRecords:
    """What the crawl's records hold about one canonical URL and its host. ``lines``: its
    crawl log lines (JSON objects, in file order); ``robots``: its host's robots.txt
    lines; ``admission``: the rules the crawl last started with (None: not recorded);
    ``seeds``: the crawl's seed URLs or hosts; ``optout_file``: the domains of the
    opt-out file the rules name (None: none, or unreadable)."""

    url: str
    host: str
    found: FoundUrl
    lines: Sequence[Mapping[str, Any]] = ()
    robots: Sequence[Mapping[str, Any]] = ()
    admission: Mapping[str, Any] | None = None
    seeds: Sequence[str] = ()
    controls: Sequence[Control] = ()
    optout_file: frozenset[str] | None = None
    logs_read: bool = True
    shed: int = 0
    notes: tuple[str, ...] = field(default=())


def _when(at: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(at))


def _robots_version(rec: WhyRecords, before: str) -> str:
    """The robots.txt version in force at ``before`` (crawl log time, ISO text: ordered
    as strings): the last answered fetch of the host's robots.txt up to it."""
    used = [r for r in rec.robots if str(r.get("time", "")) <= before and r.get("status")]
    if not used:
        return "no robots.txt fetch of it in the crawl logs read"
    last = used[-1]
    return f"version fetched at {last.get('time')}, digest {last.get('digest') or 'none'}"


def _from_log(rec: WhyRecords) -> list[str]:
    last = rec.lines[-1]
    at = str(last.get("time", "?"))
    note = last.get("note")
    status = last.get("status")
    outcome = str(last.get("outcome", "?"))
    fetched = sum(1 for line in rec.lines if line.get("status") is not None)
    out: list[str]
    if note == ROBOTS_DISALLOWED:
        out = [f"disallowed by robots.txt of host {rec.host} ({_robots_version(rec, at)}), at {at}"]
    elif status is not None and outcome in ("ok", "not_modified", "redirect"):
        out = [f"fetched {status} at {at} (depth {last.get('depth')}, {outcome})"]
        if note:
            out.append(f"note: {note}")
    else:
        why = note or last.get("error") or (f"HTTP {status}" if status is not None else "")
        out = [f"not fetched: {outcome}" + (f" ({why})" if why else "") + f" at {at}"]
    if last.get("via"):
        out.append(f"found on {last['via']}")
    if len(rec.lines) > 1:
        out.append(f"{len(rec.lines)} crawl log lines for it, {fetched} with an HTTP answer")
    if rec.found.state is UrlState.QUEUED:
        out.append("queued again: " + _queued(rec.found))
    return out


def _queued(f: FoundUrl) -> str:
    text = f"at depth {f.depth} (priority {f.priority}, {f.attempts} attempts before"
    if f.not_before and f.not_before > 0:
        text += f", not before {_when(f.not_before)}"
    return text + ")"


def _from_frontier(rec: WhyRecords) -> list[str]:
    f = rec.found
    out: list[str]
    match f.state:
        case UrlState.QUEUED:
            out = ["queued " + _queued(f)]
        case UrlState.LEASED:
            until = _when(f.lease_expires) if f.lease_expires else "?"
            out = [f"in flight: leased by node {f.owner} until {until} (depth {f.depth})"]
        case UrlState.PARKED:
            out = [f"parked: fetched {f.fetches} times, its revisit due at {_when(f.not_before)}"]
        case UrlState.DONE:
            out = [f"fetched ({f.fetches} times; the frontier says done, no crawl log line)"]
        case _:
            out = ["failed (the frontier says so; no crawl log line says why)"]
    if f.via:
        out.append(f"found on {f.via}")
    return out


def _optout_control(rec: WhyRecords, host: str) -> Control | None:
    for c in rec.controls:
        if c.kind is ControlKind.OPT_OUT and OptOut([str(c.args.get("domain", ""))]).blocks(host):
            return c
    return None


def _scope(rec: WhyRecords, rules: Mapping[str, Any]) -> Scope:
    seeds = list(rec.seeds)
    for c in rec.controls:
        if c.kind is ControlKind.ADD_SEEDS:
            seeds += [str(u) for u in c.args.get("urls", ())]
    urls = [s if "://" in s else f"http://{s}/" for s in seeds]
    return Scope.for_seeds(
        urls,
        mode=ScopeMode(str(rules.get("scope", "seed-domains"))),
        include=[str(p) for p in rules.get("include", [])],
        exclude=[str(p) for p in rules.get("exclude", [])],
        max_depth=int(rules.get("max_depth", 50)),
        max_url_length=int(rules.get("max_url_length", 2083)),
    )


def _never_seen(rec: WhyRecords) -> list[str]:
    host = strip_port(rec.host)
    control = _optout_control(rec, host)
    if control is not None:
        return [
            f"opted out: domain {control.args.get('domain')} (control #{control.seq} at "
            f"{_when(control.at)} by {control.origin})"
        ]
    rules = rec.admission
    if rules is None:
        return [
            "never seen",
            "the crawl recorded no admission rules (it last started with an earlier "
            "version): scope not judged",
        ]
    if rec.optout_file is not None and OptOut(rec.optout_file).blocks(host):
        return [f"opted out: listed in the opt-out file {rules.get('optout_file')}"]
    scope = _scope(rec, rules)
    reason = scope.check(rec.url, 0)
    mode = str(rules.get("scope", "seed-domains"))
    match reason:
        case "out-of-scope" if mode == "seed-hosts":
            return [f"out of scope: rule --scope seed-hosts: {host} is not a seed's host"]
        case "out-of-scope":
            return [
                f"out of scope: rule --scope {mode}: {host} is not a seed's host and its "
                f"registered domain {registered_domain(host)} is not a seed's"
            ]
        case "excluded":
            hit = next(p for p in rules.get("exclude", []) if re.search(str(p), rec.url))
            return [f"out of scope: rule --exclude {hit!r} matches it"]
        case "not-included":
            patterns = ", ".join(repr(str(p)) for p in rules.get("include", []))
            return [f"out of scope: rule --include: none of {patterns} matches it"]
        case "too-long":
            return [
                f"out of scope: rule --max-url-length {rules.get('max_url_length')}: it has "
                f"{len(rec.url)} characters"
            ]
        case "opted-out":  # (not reached: opt-outs are judged above)
            return ["opted out"]
    return [
        "never seen: in scope by the crawl's rules, but no page of the crawl linked to it "
        "(or not yet)"
    ]


def explain(rec: WhyRecords) -> list[str]:
    """The verdict on ``rec.url`` and its grounds (module contract), then notes on what
    was read."""
    if rec.lines:
        out = _from_log(rec)
    elif rec.found.state is not None:
        out = _from_frontier(rec)
    elif rec.found.seen:
        out = ["admitted once, but the frontier keeps no record of it now"]
        if rec.shed:
            out.append(f"shed, perhaps: {rec.shed} URLs were shed (host budget, full frontier)")
        if not rec.logs_read:
            out.append("or settled: give the nodes' crawl directories with --logs DIR")
    else:
        out = _never_seen(rec)
    return out + list(rec.notes)
