"""A Redis outage longer than ``--store-outage-limit`` ends the node with exit code 2 and
one line saying so (no traceback), instead of waiting forever or crashing."""

from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path

import pytest

from headway.testing.simweb import HostSpec, SimWebSpec
from tests.integration.helpers import UA, ThreadedSimWeb, fetched_urls
from tests.support.argv import headway_argv
from tests.support.redisproc import RedisServer

pytestmark = pytest.mark.slow

LIMIT = 2
LOG_LINE = re.compile(r"^\d\d:\d\d:\d\d (WARNING|ERROR) ")
#: Seconds the test waits for the node to end once Redis is gone (the limit, the last
#: request's timeouts, the stop; generous for a loaded machine).
END_WAIT = 60


def test_outage_longer_than_the_limit_ends_the_node_with_one_line(tmp_path: Path) -> None:
    server = RedisServer(tmp_path / "redis", appendonly=True)
    server.start()
    spec = SimWebSpec(hosts=4, host_spec=HostSpec(pages=200, links_per_page=4), seed=7)
    seeds = tmp_path / "seeds.txt"
    err_path = tmp_path / "node.err"
    try:
        with ThreadedSimWeb(spec) as web:
            seeds.write_text("\n".join(web.seeds()) + "\n")
            argv = headway_argv(
                tmp_path / "c",
                "--delay",
                "0.05",
                "--store-outage-limit",
                str(LIMIT),
                user_agent=UA,
                seeds=seeds,
                store=server.url,
                crawl_id="outage",
            )
            with err_path.open("wb") as err:
                proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err)
            try:
                deadline = time.monotonic() + 60
                while len(fetched_urls(web, web.log)) < 10:
                    assert proc.poll() is None, err_path.read_text()
                    assert time.monotonic() < deadline, "the crawl made no progress"
                    time.sleep(0.05)
                server.kill()  # Redis is gone for good
                killed_at = time.monotonic()
                code = proc.wait(END_WAIT)
                waited = time.monotonic() - killed_at
            finally:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
    finally:
        server.stop()
    stderr = err_path.read_text(errors="replace")
    assert code == 2, stderr
    assert waited >= LIMIT, waited  # the node waited the outage out first
    assert "Traceback" not in stderr, stderr
    errors = [line for line in stderr.splitlines() if "headway: error" in line]
    assert len(errors) == 1, stderr
    assert f"unreachable for {LIMIT} s" in errors[0], errors[0]
    assert "stopping: finished" not in stderr, stderr
    # the rest is the log's warnings (one line each), nothing else
    others = [line for line in stderr.splitlines() if line not in errors]
    assert all(LOG_LINE.match(line) for line in others), others
