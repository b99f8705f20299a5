"""A crawl's control state, folded from its control log (pure).

Contract: ``fold(state, controls, node=N)`` applies ``controls`` (in ``seq`` order, each
at most once: controls at or below ``state.seq`` are skipped) and returns the new state,
as node ``N`` sees it (``node=None``: the crawl as a whole).

- ``paused``: the last pause or resume addressed to every node or to ``N`` wins.
- ``stop``: the last stop addressed to every node or to ``N`` (a stop is an event: a
  node acts only on a stop recorded after it started, see ``applier.py``).
- ``seeds``: every URL of every add-seeds control, first mention order, once each.
- ``optout``: every opt-out domain, once each.
- ``exclude``: every exclude control's regular expression, once each.
- ``hosts``: the override of each host: host-override values merge over earlier ones,
  host-exclude excludes the host, host-clear removes the host's override.

Everything but the stop is state: a node (re)starting folds the whole log and so
starts paused when the crawl was left paused, with every seed, opt-out domain and host
override given so far.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType

from headway.control.log import Control, ControlKind
from headway.policy.overrides import HostOverride

_EMPTY: Mapping[str, HostOverride] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class ControlState:
    """What the controls up to ``seq`` ask of one node (or of the crawl)."""

    seq: int = 0
    paused: bool = False
    pause_seq: int = 0  # the control that set ``paused`` (0: none)
    stop: Control | None = None
    seeds: tuple[str, ...] = ()
    optout: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    hosts: Mapping[str, HostOverride] = field(default_factory=lambda: _EMPTY, hash=False)


def fold(state: ControlState, controls: Iterable[Control], *, node: str | None) -> ControlState:
    """``state`` with ``controls`` applied (see the module docstring)."""
    seq, paused, pause_seq, stop = state.seq, state.paused, state.pause_seq, state.stop
    seeds = list(state.seeds)
    seed_set = set(seeds)
    optout = list(state.optout)
    exclude = list(state.exclude)
    hosts = dict(state.hosts)
    for c in sorted(controls, key=lambda c: c.seq):
        if c.seq <= seq:
            continue
        seq = c.seq
        mine = c.node is None or node is None or c.node == node
        a = c.args
        match c.kind:
            case ControlKind.PAUSE | ControlKind.RESUME if mine:
                if c.node is None or node is not None:
                    paused, pause_seq = c.kind is ControlKind.PAUSE, c.seq
            case ControlKind.STOP if mine:
                stop = c
            case ControlKind.ADD_SEEDS:
                for url in a.get("urls", ()):
                    if url not in seed_set:
                        seed_set.add(url)
                        seeds.append(url)
            case ControlKind.OPT_OUT:
                domain = a.get("domain")
                if isinstance(domain, str) and domain not in optout:
                    optout.append(domain)
            case ControlKind.EXCLUDE:
                regex = a.get("regex")
                if isinstance(regex, str) and regex not in exclude:
                    exclude.append(regex)
            case ControlKind.HOST_OVERRIDE:
                host = a.get("host")
                if isinstance(host, str):
                    try:
                        later = HostOverride(
                            delay=a.get("delay"),
                            budget=a.get("budget"),
                            concurrency=a.get("concurrency"),
                        )
                    except (TypeError, ValueError):
                        continue  # written by another tool: ignored, never a crash
                    hosts[host] = hosts.get(host, HostOverride()).merged(later)
            case ControlKind.HOST_EXCLUDE:
                host = a.get("host")
                if isinstance(host, str):
                    hosts[host] = hosts.get(host, HostOverride()).merged(HostOverride(exclude=True))
            case ControlKind.HOST_CLEAR:
                hosts.pop(str(a.get("host")), None)
            case _:
                pass
    return replace(
        state,
        seq=seq,
        paused=paused,
        pause_seq=pause_seq,
        stop=stop,
        seeds=tuple(seeds),
        optout=tuple(optout),
        exclude=tuple(exclude),
        hosts=MappingProxyType(hosts),
    )
