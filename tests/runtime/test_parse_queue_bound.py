"""The parse stage's byte bound is the one --parse-queue-mib sets (not the store stage's
--store-queue-mib, not a default)."""

from __future__ import annotations

from pathlib import Path

from headway.runtime.node import Node
from headway.runtime.stats import NodeStats
from headway.testing.simweb import HostSpec, SimWeb, SimWebSpec
from tests.integration.helpers import crawl_argv, crawl_settings

MIB = 1 << 20


async def test_parse_stage_bound_is_parse_queue_mib(tmp_path: Path) -> None:
    spec = SimWebSpec(hosts=1, host_spec=HostSpec(pages=3, links_per_page=2), seed=3)
    readings: list[NodeStats] = []
    async with SimWeb(spec) as web:
        settings = crawl_settings(
            tmp_path / "c", parse_queue_mib=3, store_queue_mib=7, delay=0.4, max_duration=5
        )
        assert settings.runtime.parse_queue_mib == 3
        node = Node(settings, web.seeds(), on_stats=readings.append, stats_interval=0.3)
        summary = await node.run()
    assert summary.fetches > 0
    assert readings
    stages = {st.name: st for st in readings[-1].stages}
    assert stages["parse-queue"].max_bytes == 3 * MIB
    assert stages["store"].max_bytes == 7 * MIB


def test_the_flag_sets_the_setting(tmp_path: Path) -> None:
    """``--parse-queue-mib`` on the command line reaches ``runtime.parse_queue_mib``."""
    from headway.cli.parsers import build_parser
    from headway.settings import KEYS, settings_from_sources

    seeds = tmp_path / "seeds.txt"
    seeds.write_text("http://a.test/\n")
    argv = crawl_argv(seeds, tmp_path / "c", "--parse-queue-mib", "3")
    args = build_parser().parse_args(argv[argv.index("crawl") :])
    flags = {k.name: getattr(args, k.name) for k in KEYS if hasattr(args, k.name)}
    settings = settings_from_sources(None, {}, flags)
    assert settings.runtime.parse_queue_mib == 3
