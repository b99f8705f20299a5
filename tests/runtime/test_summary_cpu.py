"""The summary's CPU time counts the parser processes, which the node's own rusage (and
``/usr/bin/time``) cannot see."""

from __future__ import annotations

from pathlib import Path

import pytest

from headway.runtime import node as node_module
from headway.runtime.node import Node
from headway.testing.simweb import HostSpec, SimWeb, SimWebSpec
from tests.integration.helpers import crawl_settings

pytestmark = pytest.mark.slow


async def test_summary_cpu_includes_the_parser_processes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # freeze the node's own CPU clock: all that is left in the summary is the parsers'
    monkeypatch.setattr(node_module, "process_cpu_seconds", lambda: 100.0)
    spec = SimWebSpec(hosts=1, host_spec=HostSpec(pages=40, links_per_page=60))
    async with SimWeb(spec) as web:
        settings = crawl_settings(tmp_path / "c", delay=0.0, parsers=2, max_duration=60)
        node = Node(settings, web.seeds())
        summary = await node.run()
    assert summary.fetches >= 40
    parsers = node.parts.pool.cpu_seconds()
    assert parsers > 0, "parsing 40 pages took measurable CPU in the parser processes"
    assert summary.cpu_seconds == pytest.approx(parsers)
