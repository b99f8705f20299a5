"""The scheduler gives each host its limiter, with the operator's ceiling overrides."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from headway.frontier.sqlite import SqliteFrontier
from headway.policy.politeness import HostLimitParams
from headway.policy.robots import RobotsCache
from headway.runtime.scheduler import Scheduler
from headway.runtime.worker import ThreadWorker


async def _noop(*_: Any) -> None:
    return None


def _scheduler(tmp_path: Path, ceilings: dict[str, int]) -> Scheduler:
    return Scheduler(
        SqliteFrontier(tmp_path / "f.sqlite3"),
        ThreadWorker("test"),
        limits=HostLimitParams(min_gap=1.0, ceiling=1),
        robots=RobotsCache(),
        robots_ttl=3600,
        crawl_delay_max=30,
        lease_seconds=60,
        optout=None,
        on_skip=_noop,
        host_ceilings=ceilings,
    )


def test_ceiling_overrides_exact_then_longest_suffix(tmp_path: Path) -> None:
    s = _scheduler(tmp_path, {"big.example": 4, "*.cdn.example": 8, "*.example": 2})
    assert s.limiter("big.example").statistics().limit <= 4
    assert s.limiter("big.example").params.ceiling == 4
    assert s.limiter("img.cdn.example:8080").params.ceiling == 8
    assert s.limiter("other.example").params.ceiling == 2
    assert s.limiter("elsewhere.org").params.ceiling == 1
