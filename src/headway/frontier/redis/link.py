"""The shared backend's connection to Redis: first contact, retries through an outage,
and noticing a server that restarted.

Contract of ``RedisLink.retry``: a call that fails because Redis cannot be reached, or
because a Redis Cluster says it is down or failing over (``CLUSTERDOWN``, ``TRYAGAIN``,
too many redirections: a master lost, until its replica takes over or it comes back), is
retried with backoff (one warning when the outage starts, one when Redis is back) for up
to ``outage_limit`` seconds, then ``StoreError``; any other Redis error is a
``StoreError`` at once. A cluster client reads the cluster's layout again before each
retry, so that it finds a replica that took over a lost master.

A server that restarted may have lost its last writes: ``server_restarts`` counts the
restarts seen, so the node can offer recent links again. Every connection the client
opens reads the server's run id before its first command and compares it with the run
ids seen before; a restart is noticed there even when it was so quick that no call
failed (the client opens a new connection without a word), and after an outage the run
ids are compared again. A replica promoted to master (a failover) keeps its run id but
starts a new replication history (``master_replid``): that counts as a restart too.
A script's refusal for want of its crawl epoch key is a ``CrawlLostError`` (see
``epoch.py``).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

import redis
from redis.exceptions import ClusterError, RedisClusterException, TryAgainError

from headway.errors import StoreError
from headway.frontier.redis.connect import StoreUrl, connect
from headway.frontier.redis.epoch import CrawlLostError, is_lost_reply

log = logging.getLogger(__name__)

T = TypeVar("T")

#: Errors of a store that was reached and will answer again: it cannot be reached, or it
#: is a cluster failing over (ClusterDownError, MasterDownError and the "TTL exhausted"
#: of endless redirections are ClusterErrors).
OUTAGE = (redis.ConnectionError, redis.TimeoutError, ClusterError, TryAgainError)
#: The INFO field naming the replication history a server serves: a replica promoted to
#: master starts a new one (its run id stays), and may lack its old master's last writes.
_REPLID = "master_replid"


class RedisLink:
    """One client of the store at ``url``, reached once at construction."""

    def __init__(self, url: StoreUrl, *, outage_limit: float) -> None:
        self.url = url
        self._lock = threading.Lock()  # connections open in the frontier and heartbeat threads
        self._run_ids: frozenset[str] | None = None  # every server run id seen
        self._outage_limit = outage_limit
        self._down_since: float | None = None
        self.client: Any = self._connect()
        self.server_restarts = 0  # times a Redis server was found restarted
        self._first_contact()
        self._seen(self.retry(self._server_run_ids))
        self._first_run_ids = self._run_ids  # the servers of the crawl's start

    def _connect(self) -> Any:
        """The client. A cluster some of whose listed nodes answer, but which cannot be
        used yet (a master lost and not yet replaced: the client's first commands fail),
        is an outage, waited for; a store none of whose nodes answers is an error at once."""
        delay = 0.1
        since: float | None = None
        while True:
            try:
                return connect(self.url, on_connection=self._on_connection)
            except StoreError as exc:
                if not self.url.cluster or not isinstance(exc.__cause__, OUTAGE):
                    raise
                if not _some_node_answers(self.url):
                    raise
                now = time.monotonic()
                if since is None:
                    since = now
                    log.warning(
                        "Redis %s answers but cannot be used yet (%s): waiting",
                        self.url.masked(),
                        exc.__cause__,
                    )
                elif now - since > self._outage_limit:
                    raise StoreError(
                        f"Redis {self.url.masked()} down for {self._outage_limit:.0f} s"
                    ) from exc
                time.sleep(delay)
                delay = min(delay * 2, 2.0)

    def _first_contact(self) -> None:
        """Reach the server once before anything else: a store that cannot be reached at
        start-up is a wrong address or a server not started, reported at once instead of
        waited for (outages of a store that was reached are waited for, see ``retry``).
        A cluster client is made only once one of the listed nodes answered: the cluster
        was reached, and a node of it that fails or a cluster that says it is down (a
        node started during a failover) is an outage."""
        if self.url.cluster:
            self.retry(self.client.ping)
            return
        try:
            self.client.ping()
        except (redis.ConnectionError, redis.TimeoutError) as exc:
            raise StoreError(f"cannot reach Redis {self.url.masked()}: {exc}") from exc
        except redis.RedisError as exc:
            raise StoreError(f"Redis {self.url.masked()} refused the connection: {exc}") from exc

    def retry(self, fn: Callable[[], T]) -> T:
        """``fn()``, retried through an outage (see the module docstring)."""
        delay = 0.1
        while True:
            try:
                result = fn()
            except OUTAGE as exc:
                now = time.monotonic()
                if self._down_since is None:
                    self._down_since = now
                    log.warning(
                        "Redis %s unreachable (%s): frontier calls wait and retry",
                        self.url.masked(),
                        exc,
                    )
                elif now - self._down_since > self._outage_limit:
                    raise StoreError(
                        f"Redis {self.url.masked()} unreachable for {self._outage_limit:.0f} s"
                    ) from exc
                time.sleep(delay)
                delay = min(delay * 2, 2.0)
                self._refresh_layout()
                continue
            except redis.RedisError as exc:
                if is_lost_reply(exc):
                    raise CrawlLostError(str(exc)) from exc
                raise StoreError(f"Redis frontier failed: {exc}") from exc
            if self._down_since is not None:
                log.warning(
                    "Redis %s reachable again after %.1f s",
                    self.url.masked(),
                    time.monotonic() - self._down_since,
                )
                self._down_since = None
                self._check_restart()
            return result

    def _refresh_layout(self) -> None:
        """A cluster client reads the cluster's slots again before a retry: after a
        failover the slots of the lost master are served by its replica, and a client
        that refreshed its layout only at the first error (before the failover) would
        keep asking the dead master until it came back."""
        if not self.url.cluster:
            return
        # (no node answers yet: the next retry tries again)
        with contextlib.suppress(redis.RedisError, RedisClusterException):
            self.client.nodes_manager.initialize()

    def _server_run_ids(self) -> frozenset[str]:
        """The identities of every server of the store: its run id, and the replication
        id of the history it serves (``replid:...``), which a replica promoted to master
        changes although its run id stays (a cluster's INFO goes to one node unless all
        are named: the others would look restarted at their first connection)."""
        ids: set[str] = set()
        for section, field, prefix in (
            ("server", "run_id", ""),
            ("replication", _REPLID, "replid:"),
        ):
            if self.url.cluster:
                info = self.client.info(section, target_nodes=self.client.ALL_NODES)
            else:
                info = self.client.info(section)
            rows = [info] if field in info else info.values()  # one server, or each of all
            ids.update(prefix + str(r[field]) for r in rows if isinstance(r, dict) and field in r)
        return frozenset(ids)

    def _check_restart(self) -> None:
        try:
            ids = self._server_run_ids()
        except redis.RedisError:
            return
        self._seen(ids)

    def _on_connection(self, conn: Any) -> None:
        """A new connection: the run id of the server it reached, before anything else
        (from the first look at the servers on, which reads them all)."""
        if self._run_ids is None:
            return
        found: set[str] = set()
        for section, prefix in (("server", "run_id:"), ("replication", _REPLID + ":")):
            conn.send_command("INFO", section)
            try:
                info = conn.read_response()
            except redis.ResponseError:
                return  # INFO not allowed: restarts are noticed after outages only
            text = info.decode() if isinstance(info, bytes) else str(info)
            for line in text.splitlines():
                if line.startswith(prefix):
                    value = line.partition(":")[2].strip()
                    found.add(value if prefix == "run_id:" else f"replid:{value}")
        if found:
            self._seen(frozenset(found))

    def _seen(self, ids: frozenset[str]) -> None:
        """Note the run ids of servers reached; one not seen before is a restart (or a
        new master of a cluster, which may lack writes too)."""
        with self._lock:
            if self._run_ids is None:  # the first look
                self._run_ids = ids
                return
            if ids <= self._run_ids:
                return
            self._run_ids |= ids
            self.server_restarts += 1
        log.warning("Redis %s was restarted", self.url.masked())

    def restarted_since_start(self) -> bool:
        """Whether a server's run id differs from the one seen at start (asked now)."""
        try:
            return self._server_run_ids() != self._first_run_ids
        except (redis.RedisError, RedisClusterException):
            return self.server_restarts > 0

    def close(self) -> None:
        self.client.close()


def _some_node_answers(url: StoreUrl) -> bool:
    """Whether any node listed in a cluster store URL answers a PING."""
    for host, port in url.nodes:
        probe = redis.Redis(
            host=host,
            port=port,
            username=url.username,
            password=url.password,
            ssl=url.tls,
            socket_timeout=1.0,
            socket_connect_timeout=1.0,
        )
        try:
            if probe.ping():
                return True
        except redis.RedisError:
            continue
        finally:
            probe.close()
    return False
