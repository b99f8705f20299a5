"""A node opens its shared crawl's control log without asking whether the crawl exists:
its frontier opened the crawl already, and a crawl lost since (a restart without AOF, a
flush) is the frontier's to notice and say, with the crawl-lost message, not a
'no crawl' from the control log that would end the node with another line."""

from __future__ import annotations

from pathlib import Path

import pytest

from headway.control.target import CrawlRef, open_control_log
from headway.errors import ControlError
from headway.runtime.controls import control_log_for_node
from headway.settings import build_settings
from tests.support.redisproc import RedisServer

UA = "testbot/1.0 (+https://example.org/bot)"


def test_a_node_opens_the_control_log_of_a_crawl_its_store_no_longer_holds(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    crawl = "gone-before-controls"
    settings = build_settings(
        {"user_agent": UA, "store": redis_server.url, "crawl_id": crawl, "out": str(tmp_path)}
    )
    log = control_log_for_node(settings, tmp_path)
    try:
        assert log.read_after(0) == []
    finally:
        log.close()
    # a person's command still says there is no such crawl
    with pytest.raises(ControlError, match="no crawl"):
        open_control_log(CrawlRef(tmp_path, redis_server.url, crawl))
