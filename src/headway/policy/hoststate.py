"""What a node remembers of a host across restarts and handovers (pure): its robots.txt
verdict (with the text it was read from, so it is not fetched again before it expires)
and its politeness wait (the earliest next request and the backoff gap).

The frontier stores one opaque string per host (``FrontierStore.put_host_states``); this
module turns a ``HostState`` into that string and back. ``merge`` overlays the parts one
writer knows on what was stored, so a limiter save never erases the robots part and a
robots save never erases the wait. An unreadable string decodes to an empty state (the
host is then treated as new: its robots.txt is fetched again), never an error.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass

from headway.policy.politeness import HostLimiter
from headway.policy.robots import RobotsRules, robots_from_state, robots_state

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class HostWait:
    """The limiter's memory worth keeping: no request before ``ready_at``; ``backoff``:
    the pushback gap in force."""

    ready_at: float
    backoff: float


@dataclass(frozen=True, slots=True)
class HostState:
    """A host's saved state; ``robots`` is the JSON-ready verdict (``robots_state``)."""

    robots: dict[str, object] | None = None
    wait: HostWait | None = None


def wait_of(lim: HostLimiter, now: float) -> HostWait | None:
    """The limiter's wait, or None when it holds nothing back (nothing worth saving)."""
    st = lim.statistics()
    ready = lim.gap_ready_at()
    if st.backoff <= 0 and ready <= now:
        return None
    return HostWait(ready if math.isfinite(ready) else now, st.backoff)


def waits_of(limiters: Mapping[str, HostLimiter], now: float) -> list[tuple[str, HostState]]:
    """The wait of each of ``limiters`` that holds one, as the state to save."""
    waits = ((host, wait_of(lim, now)) for host, lim in limiters.items())
    return [(host, HostState(wait=w)) for host, w in waits if w is not None]


def encode(state: HostState) -> str:
    out: dict[str, object] = {"v": 1}
    if state.robots is not None:
        out["robots"] = state.robots
    if state.wait is not None:
        out["wait"] = {"ready_at": state.wait.ready_at, "backoff": state.wait.backoff}
    return json.dumps(out, separators=(",", ":"))


def decode(text: str | None) -> HostState:
    if not text:
        return HostState()
    try:
        data = json.loads(text)
        if not isinstance(data, dict) or data.get("v") != 1:
            raise ValueError("unknown host state version")
        robots = data.get("robots")
        wait = data.get("wait")
        return HostState(
            robots=robots if isinstance(robots, dict) else None,
            wait=HostWait(float(wait["ready_at"]), float(wait["backoff"]))
            if isinstance(wait, dict)
            else None,
        )
    except (ValueError, TypeError, KeyError) as exc:
        log.warning("ignoring an unreadable saved host state: %s", exc)
        return HostState()


def merge(stored: HostState, new: HostState) -> HostState:
    """``new``'s parts over ``stored``'s."""
    return HostState(
        robots=new.robots if new.robots is not None else stored.robots,
        wait=new.wait if new.wait is not None else stored.wait,
    )


def restore(state: HostState, lim: HostLimiter, user_agent: str, now: float) -> RobotsRules | None:
    """Apply the saved wait to ``lim``; return the saved robots verdict when it is still
    valid at ``now`` (else None: fetch robots.txt again)."""
    if state.wait is not None:
        lim.restore_wait(state.wait.ready_at, state.wait.backoff)
    if state.robots is None:
        return None
    rules = robots_from_state(state.robots, user_agent)
    if rules is None or now >= rules.expires_at:
        return None
    return rules


__all__ = [
    "HostState",
    "HostWait",
    "decode",
    "encode",
    "merge",
    "restore",
    "robots_state",
    "wait_of",
]
