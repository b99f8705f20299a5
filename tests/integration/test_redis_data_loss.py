"""After a Redis restart that lost data, a node forgets its recently admitted URLs and
offers its seeds again: what the lost writes had admitted is admitted again when it is
found again, and the crawl still fetches every page.

The loss is made exact: mid-crawl Redis is killed and started again from a snapshot that
holds only the crawl's meta record (its stored seeds, as written when the crawl began)
and its epoch keys (a crawl that lost every key is lost, and ends the node: see
``test_redis_epoch.py``),
as if the server had come back from a snapshot taken right after the crawl started. The
node's recent-URL memory then names every URL it had admitted, none of which Redis knows
any more."""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import pytest
import redis

from headway.frontier.redis.keys import CrawlKeys
from headway.testing.simweb import HostSpec, SimWebSpec
from tests.integration.helpers import TOKEN, UA, ThreadedSimWeb, fetched_urls
from tests.support.argv import headway_argv
from tests.support.redisproc import RedisServer

pytestmark = pytest.mark.slow

CRAWL = "lost"


def _snapshot_of_meta(server: RedisServer, scratch: Path) -> Path:
    """An RDB file holding only the crawl's meta record and its shards' epoch keys (what
    says the crawl exists) as ``server`` has them now, made by a second server of the
    test's own: everything the crawl wrote after it began is lost, the crawl is not."""
    keys = [CrawlKeys(CRAWL).meta]
    with redis.Redis.from_url(server.url) as client:
        keys += [k.decode() for k in client.scan_iter(match="*:epoch:*")]
        dumped = [(key, client.dump(key)) for key in keys]
    assert dumped[0][1] is not None, "the crawl wrote no meta record"
    assert len(dumped) > 1, "the crawl wrote no epoch keys"
    other = RedisServer(scratch)
    other.start()
    try:
        with redis.Redis.from_url(other.url) as client:
            for key, value in dumped:
                client.restore(key, 0, value)
            client.save()
    finally:
        other.stop()
    return other.dir / "dump.rdb"


def test_restart_that_lost_data_offers_seeds_and_forgotten_links_again(tmp_path: Path) -> None:
    server = RedisServer(tmp_path / "redis")  # no AOF: a restart keeps what its RDB has
    server.start()
    # hosts link only within themselves; the last one is a lone page, fetched before
    # the loss and linked from nowhere: only its seed being offered again brings it back
    spec = SimWebSpec(
        hosts=4,
        host_spec=HostSpec(pages=25, links_per_page=4),
        overrides={3: HostSpec(pages=0)},
        cross_links=0.0,
        seed=9,
    )
    seeds = tmp_path / "seeds.txt"
    err_path = tmp_path / "node.err"
    try:
        with ThreadedSimWeb(spec) as web:
            seed_urls = web.seeds()
            seeds.write_text("\n".join(seed_urls) + "\n")
            argv = headway_argv(
                tmp_path / "c",
                "--delay",
                "0.05",
                user_agent=UA,
                seeds=seeds,
                store=server.url,
                crawl_id=CRAWL,
            )
            with err_path.open("wb") as err:
                proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err)
            try:
                deadline = time.monotonic() + 60
                lone = seed_urls[3]
                while len(fetched_urls(web, web.log)) < 20 or lone not in fetched_urls(
                    web, web.log
                ):
                    assert proc.poll() is None, err_path.read_text()
                    assert time.monotonic() < deadline, "the crawl made no progress"
                    time.sleep(0.02)
                snapshot = _snapshot_of_meta(server, tmp_path / "scratch")
                server.kill()
                shutil.copy(snapshot, server.dir / "dump.rdb")
                before = len(fetched_urls(web, web.log))
                server.start()  # the crawl's meta is back, everything else is lost
                code = proc.wait(120)
            finally:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
            fetched = fetched_urls(web, web.log)
            expected = web.expected_pages(TOKEN)
    finally:
        server.stop()
    stderr = err_path.read_text(errors="replace")
    assert code == 0, stderr
    # the lost writes took the note that the seeds were admitted: all are offered again
    assert f"offered again, and {len(seed_urls)} of {len(seed_urls)} seeds" in stderr, stderr
    assert before < len(expected), "the crawl ended before Redis lost its data"
    after = fetched[before:]
    # the seeds were offered again (they had all been fetched before the loss) ...
    assert set(seed_urls) <= set(fetched[:before])
    assert set(seed_urls) <= set(after), sorted(set(seed_urls) - set(after))
    # ... and the links found again were admitted again, not skipped as recently
    # admitted: pages fetched before the loss are fetched again, and the crawl is whole
    assert set(fetched[:before]) <= set(after), sorted(set(fetched[:before]) - set(after))
    assert set(fetched) == expected, sorted(expected - set(fetched))
