"""The control stage: an operator steering a running crawl (pause, resume, stop, seeds
added, opt-out domains, per-host overrides) through a durable control log kept beside
the frontier, read by every node of the crawl.

- ``log``: the values (``Control``, ``ControlKind``), the ``ControlLog`` protocol (append
  a control, read the controls after a sequence number) and argument checks.
- ``state``: the crawl's control state folded from the log (pure).
- ``sqlite_log`` / ``redis_log``: the log in the crawl directory's frontier file, or
  under the shared crawl's key prefix in Redis.
- ``target``: which crawl a command or the console names (``CrawlRef``) and its log.
- ``applier``: the node's periodic task that applies new controls.
"""

from __future__ import annotations

from headway.control.log import (
    Control,
    ControlKind,
    ControlLog,
    check_args,
    describe,
    read_all,
)
from headway.control.state import ControlState, fold
from headway.control.target import CrawlRef, open_control_log

__all__ = [
    "Control",
    "ControlKind",
    "ControlLog",
    "ControlState",
    "CrawlRef",
    "check_args",
    "describe",
    "fold",
    "open_control_log",
    "read_all",
]
