"""The node's control task: applies the crawl's new controls about every second.

Contract:

- ``start()`` (before the node's first fetch) reads the whole log, folds it
  (``state.fold``) for this node and applies the state: paused or not, the seeds added
  so far (admitted again: admission drops what was seen), the opt-out domains (their
  queued URLs dropped) and the host overrides. A stop recorded before the node started
  is not acted on (a stop is for the nodes running when it is given).
- ``run()`` (a task in the node's task group) polls the log every ``interval`` seconds
  and applies what changed: pause, resume, a stop addressed to this node (or to every
  node) recorded after the node started, new seeds, new opt-out domains, changed host
  overrides. A control is applied once; a log that cannot be read is logged (once per
  outage) and read again at the next poll: the crawl goes on.
- It acts only through ``ControlHooks``: the node's narrow interface.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Protocol

from headway.control.log import Control, ControlLog, describe, read_all
from headway.control.state import ControlState, fold
from headway.errors import HeadwayError
from headway.policy.overrides import HostOverride

log = logging.getLogger(__name__)

#: Seconds between two reads of the control log.
POLL_INTERVAL = 1.0
#: The stop reason of a node stopped by a stop control (the summary's "stopped by").
STOPPED_BY_CONTROL = "stop-control"


class ControlHooks(Protocol):
    """What the control task may do to its node."""

    def pause(self) -> None:
        """Start no new fetch until ``resume`` (fetches in flight finish)."""
        ...

    def resume(self) -> None: ...

    def request_stop(self, reason: str) -> None:
        """A clean stop, as Ctrl-C (in flight finish, then the summary)."""
        ...

    async def add_seeds(self, urls: Sequence[str]) -> int:
        """Put ``urls`` in the crawl's seeds (scope) and admit them; how many were new."""
        ...

    async def opt_out(self, domains: Sequence[str]) -> int:
        """Refuse ``domains`` from now on and drop their queued URLs; how many were dropped."""
        ...

    def exclude(self, regexes: Sequence[str]) -> None:
        """Refuse the URLs ``regexes`` match from now on: new links at admission, queued
        ones when they are leased (dropped without a fetch, counted)."""
        ...

    def set_host_overrides(self, overrides: Mapping[str, HostOverride]) -> None:
        """Put these per-host overrides in force (every other host as configured)."""
        ...


@dataclass(frozen=True, slots=True)
class ControlStats:
    """The control task's reading: the last control applied (``seq``), whether the node
    is paused by a control, the seeds added, opt-out domains and host overrides in
    force, and the queued URLs dropped by opt-out controls in this run."""

    seq: int = 0
    paused: bool = False
    seeds_added: int = 0
    optout_domains: int = 0
    optout_dropped: int = 0
    exclusions: int = 0
    overrides: Mapping[str, HostOverride] = field(
        default_factory=lambda: MappingProxyType({}), hash=False
    )


class ControlApplier:
    """Applies node ``node``'s controls (see the module docstring). ``started_at``: the
    node's start (writer's clock): a stop recorded before it is ignored."""

    def __init__(
        self,
        control_log: ControlLog,
        hooks: ControlHooks,
        *,
        node: str,
        started_at: float,
        interval: float = POLL_INTERVAL,
    ) -> None:
        self._log = control_log
        self._hooks = hooks
        self._node = node
        self._started_at = started_at
        self._interval = interval
        self._state = ControlState()
        self._start_seq = 0
        self._seeds_added = 0
        self._dropped = 0
        self._failing = False

    @property
    def state(self) -> ControlState:
        return self._state

    async def start(self) -> ControlState:
        """Apply the log as it stands (see the module docstring)."""
        controls = await self._read_all()
        new = fold(ControlState(), controls, node=self._node)
        self._start_seq = new.seq
        await self._apply(ControlState(), new, at_start=True)
        return new

    async def run(self) -> None:
        """Poll and apply until cancelled."""
        while True:
            await asyncio.sleep(self._interval)
            await self.poll()

    async def poll(self) -> None:
        """Read and apply the controls recorded since the last read."""
        try:
            controls = await self._read_all(self._state.seq)
        except HeadwayError as exc:
            if not self._failing:
                log.warning("cannot read the control log (will retry): %s", exc)
            self._failing = True
            return
        if self._failing:
            log.warning("the control log is readable again")
            self._failing = False
        if controls:
            await self._apply(self._state, fold(self._state, controls, node=self._node))

    def close(self) -> None:
        """Close the control log (the node stops)."""
        self._log.close()

    def statistics(self) -> ControlStats:
        s = self._state
        return ControlStats(
            seq=s.seq,
            paused=s.paused,
            seeds_added=self._seeds_added,
            optout_domains=len(s.optout),
            optout_dropped=self._dropped,
            exclusions=len(s.exclude),
            overrides=s.hosts,
        )

    async def _read_all(self, after: int = 0) -> list[Control]:
        return await asyncio.to_thread(read_all, self._log, after)

    async def _apply(self, old: ControlState, new: ControlState, *, at_start: bool = False) -> None:
        self._state = new
        if new.hosts != old.hosts:
            self._hooks.set_host_overrides(new.hosts)
            log.info("host overrides in force: %d", len(new.hosts))
        patterns = new.exclude[len(old.exclude) :]
        if patterns:
            self._hooks.exclude(patterns)
            level = logging.INFO if at_start else logging.WARNING
            log.log(level, "excluded from now on: %s", " ".join(patterns))
        domains = new.optout[len(old.optout) :]
        if domains:
            dropped = await self._hooks.opt_out(domains)
            self._dropped += dropped
            shown = ", ".join(domains[:5]) + (
                f" and {len(domains) - 5} more" if len(domains) > 5 else ""
            )
            level = logging.INFO if at_start and not dropped else logging.WARNING
            log.log(level, "opt-out %s: %d queued URLs dropped", shown, dropped)
        added = new.seeds[len(old.seeds) :]
        if added:
            n = await self._hooks.add_seeds(added)
            self._seeds_added += n
            if not at_start or n:
                log.info("seeds added by control: %d given, %d new", len(added), n)
        if new.paused != old.paused:
            if new.paused:
                self._hooks.pause()
                log.warning(
                    "paused by control #%d%s; `headway resume` continues",
                    new.pause_seq,
                    " (the crawl was left paused)" if at_start else "",
                )
            else:
                self._hooks.resume()
                log.warning("resumed by control #%d", new.pause_seq)
        stop = new.stop
        if stop is not None and stop != old.stop and self._is_new(stop):
            log.warning("stopping: %s", describe(stop))
            self._hooks.request_stop(STOPPED_BY_CONTROL)

    def _is_new(self, stop: Control) -> bool:
        return stop.seq > self._start_seq or stop.at >= self._started_at
