"""``headway drop-crawl --store URL --crawl-id ID``: remove a finished shared crawl's
keys from its Redis. It asks nothing: it refuses while nodes of the crawl are live
(``--force`` removes it anyway, and those nodes then stop, their crawl lost), and says
what it removed. What the nodes wrote into their crawl directories is left alone."""

from __future__ import annotations

import argparse
from typing import Any

from headway.cli.sharedflags import add_shared_crawl_flags
from headway.errors import ControlError, StoreError


def add_drop_parser(add_parser: Any) -> None:
    p = add_parser(
        "drop-crawl",
        help="remove a finished shared crawl's keys from its Redis store",
        description="Remove every key of a shared crawl (--store, --crawl-id) from its "
        "Redis: its frontier, seen set, control log and node records. It refuses while a "
        "node of the crawl is live, unless --force. The nodes' crawl directories (WARC "
        "files, index, crawl logs) are left as they are.",
    )
    add_shared_crawl_flags(p)
    p.add_argument(
        "--force",
        action="store_true",
        help="remove it even while nodes are live (they stop: their crawl is lost)",
    )


def drop_command(args: argparse.Namespace) -> int:
    if not args.store or not args.crawl_id:
        raise ControlError("drop-crawl removes a shared crawl: give --store and --crawl-id")
    import redis
    from redis.exceptions import RedisClusterException

    from headway.control.target import CrawlRef, connect_shared
    from headway.frontier.redis.drop import drop_crawl, inspect_crawl

    client, where = connect_shared(CrawlRef(None, args.store, args.crawl_id))
    try:
        found = inspect_crawl(client, args.crawl_id)
        if found is None:
            raise ControlError(f"no crawl {args.crawl_id!r} in {where}")
        if found.live_nodes and not args.force:
            raise ControlError(
                f"crawl {args.crawl_id!r} has live nodes ({', '.join(found.live_nodes)}); "
                f"stop them first (headway stop --store ... --crawl-id {args.crawl_id}), "
                "or give --force to remove it under them"
            )
        dropped = drop_crawl(client, args.crawl_id, found.shards)
    except (redis.RedisError, RedisClusterException) as exc:
        raise StoreError(f"cannot drop the crawl in {where}: {exc}") from None
    finally:
        client.close()
    c = found.counts
    print(
        f"removed crawl {args.crawl_id} from {where}: {dropped.keys} keys over "
        f"{found.shards} shards ({c.seen} URLs seen, {c.done} done, {c.failed} failed, "
        f"{c.queued} still queued, {c.leased} leased)"
    )
    if found.live_nodes:
        print(f"nodes that were live and now find their crawl lost: {', '.join(found.live_nodes)}")
    if dropped.left:
        print(f"{dropped.left} keys of the crawl were written again meanwhile and are left")
        return 1
    return 0
