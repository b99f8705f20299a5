"""The simulated web measures how late it started each handler after the request reached
its socket (kernel receive times), so that a busy server's log still shows the gaps the
site saw."""

from __future__ import annotations

import asyncio
import sys
import threading
import time
import urllib.request

import pytest

from headway.testing.simweb import HostSpec, SimWeb, SimWebSpec

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="kernel receive times: Linux"
)

BLOCK = 0.3


async def test_a_request_reaching_a_blocked_server_is_logged_as_late() -> None:
    sent: list[float] = []
    async with SimWeb(SimWebSpec(hosts=1, host_spec=HostSpec(pages=3))) as web:
        url = f"http://127.0.0.1:{web.port}/p/1"

        def get() -> None:
            req = urllib.request.Request(url, headers={"Host": web.hosts[0]})
            sent.append(time.monotonic())
            with urllib.request.urlopen(req, timeout=10) as resp:
                resp.read()

        fetched = threading.Thread(target=get)
        blocked_at = time.monotonic()
        fetched.start()
        time.sleep(BLOCK)  # the server's event loop is busy while the request arrives
        unblocked_at = time.monotonic()
        while fetched.is_alive():
            await asyncio.sleep(0.01)
        # and one more while the server is idle
        await asyncio.to_thread(get)
    busy, idle = web.log
    assert busy.late is not None and idle.late is not None
    # handled once the block was over, but stamped as it reached the socket: during it
    assert busy.start >= unblocked_at
    assert blocked_at <= sent[0] <= busy.arrival < unblocked_at
    assert idle.late < BLOCK / 2
