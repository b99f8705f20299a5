"""Throw-away Redis servers for tests and benchmarks: one ``redis-server`` or a
Redis Cluster (3 masters by default, with replicas if asked) on free loopback ports, in
a directory of their own.

Contract: ``start()`` returns once the server answers PING (the cluster: once every master
reports ``cluster_state:ok``) or raises ``RedisProcError`` after ``timeout`` seconds;
``stop()`` ends the processes it started (and only those) and waits for them. Servers
keep no data outside their directory. ``kill()`` / ``start()`` on a ``RedisServer``
simulate an outage: the same port and directory are used again, so with ``appendonly``
the data survives.
"""

from __future__ import annotations

import contextlib
import random
import shutil
import socket
import subprocess
import time
from pathlib import Path

START_TIMEOUT = 15.0
#: A server still reading its data back (it answers LOADING) is waited for up to this
#: many start time-outs.
LOADING_TIMEOUTS = 20


class RedisProcError(RuntimeError):
    """A test Redis server could not be started."""


def _port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port(bus: bool = False) -> int:
    """A loopback port free now (and ``port + 10000`` too when ``bus``: the cluster bus)."""
    rng = random.Random()
    for _ in range(200):
        port = rng.randrange(20_000, 45_000)
        if _port_free(port) and (not bus or _port_free(port + 10_000)):
            return port
    raise RedisProcError("no free loopback port found")


def redis_binaries() -> tuple[str, str]:
    """Paths of redis-server and redis-cli, or a clear error naming what is missing."""
    server = shutil.which("redis-server")
    cli = shutil.which("redis-cli")
    if server is None or cli is None:
        raise RedisProcError(
            "redis-server and redis-cli are needed (Debian: apt-get install redis-server)"
        )
    return server, cli


class RedisServer:
    """One redis-server process on 127.0.0.1."""

    def __init__(
        self,
        root: Path,
        *,
        port: int | None = None,
        appendonly: bool = False,
        cluster: bool = False,
        timeout: float = START_TIMEOUT,
    ) -> None:
        self.port = port if port is not None else free_port(bus=cluster)
        self.dir = root / f"redis-{self.port}"
        self.dir.mkdir(parents=True, exist_ok=True)
        self._appendonly = appendonly
        self._cluster = cluster
        self._timeout = timeout
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> None:
        server, _ = redis_binaries()
        argv = [
            server,
            "--port",
            str(self.port),
            "--bind",
            "127.0.0.1",
            "--dir",
            str(self.dir),
            "--save",
            "",
            "--appendonly",
            "yes" if self._appendonly else "no",
            "--appendfsync",
            "everysec",
            "--logfile",
            "redis.log",
            "--daemonize",
            "no",
        ]
        if self._cluster:
            argv += [
                "--cluster-enabled",
                "yes",
                "--cluster-config-file",
                "nodes.conf",
                "--cluster-node-timeout",
                "3000",
            ]
        self._proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        started = time.monotonic()
        deadline = started + self._timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise RedisProcError(f"redis-server on port {self.port} exited; see {self.dir}")
            reply = self.cli("PING")
            if reply == "PONG":
                return
            if reply.startswith("LOADING"):
                # reading its AOF back (a restart of a busy server): it is progressing,
                # so wait on, up to LOADING_TIMEOUTS times the start time-out in all
                deadline = min(started + LOADING_TIMEOUTS * self._timeout, time.monotonic() + 5)
            time.sleep(0.05)
        self.stop()
        raise RedisProcError(f"redis-server on port {self.port} did not answer in time")

    def cli(self, *args: str) -> str:
        """Run one redis-cli command against this server; its output, or '' on failure."""
        _, cli = redis_binaries()
        try:
            done = subprocess.run(
                [cli, "-h", "127.0.0.1", "-p", str(self.port), *args],
                capture_output=True,
                timeout=5,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return ""
        return done.stdout.decode(errors="replace").strip()

    def kill(self) -> None:
        """SIGKILL the server (an outage; AOF keeps what was written about a second ago)."""
        if self._proc is not None:
            self._proc.kill()
            self._proc.wait(timeout=10)
            self._proc = None

    def stop(self) -> None:
        if self._proc is not None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait(timeout=10)
            self._proc = None

    def __enter__(self) -> RedisServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


class RedisCluster:
    """A Redis Cluster of ``masters`` redis-servers on 127.0.0.1, each with ``replicas``
    replicas (which take over a master that fails: the cluster's own failover);
    ``appendonly`` turns AOF on (``appendfsync everysec``)."""

    def __init__(
        self,
        root: Path,
        masters: int = 3,
        timeout: float = START_TIMEOUT,
        *,
        replicas: int = 0,
        appendonly: bool = False,
    ) -> None:
        self.servers = [
            RedisServer(root, cluster=True, timeout=timeout, appendonly=appendonly)
            for _ in range(masters * (1 + replicas))
        ]
        self._replicas = replicas
        self._timeout = timeout

    @property
    def url(self) -> str:
        return "redis+cluster://" + ",".join(s.address for s in self.servers)

    def start(self) -> None:
        _, cli = redis_binaries()
        try:
            for s in self.servers:
                s.start()
            argv = [cli, "--cluster", "create", *(s.address for s in self.servers)]
            argv += ["--cluster-replicas", str(self._replicas), "--cluster-yes"]
            try:
                create = subprocess.run(argv, capture_output=True, timeout=self._timeout)
            except subprocess.TimeoutExpired:
                # redis-cli sends its CLUSTER MEETs once and then waits for the join;
                # a handshake that did not finish within the node time-out (a loaded
                # machine) is dropped and the wait never ends. Its slots are assigned
                # by then: meet again, and wait below (replicas are not set up then,
                # and the wait below says so)
                for s in self.servers[1:]:
                    self.servers[0].cli("CLUSTER", "MEET", "127.0.0.1", str(s.port))
            else:
                if create.returncode != 0:
                    raise RedisProcError(f"redis-cli --cluster create failed: {create.stdout!r}")
            deadline = time.monotonic() + self._timeout
            while time.monotonic() < deadline:
                infos = [s.cli("CLUSTER", "INFO") for s in self.servers]
                if all("cluster_state:ok" in i for i in infos) and self._replicas_in_sync():
                    return
                time.sleep(0.1)
            raise RedisProcError(
                "the test cluster did not reach cluster_state:ok with its replicas in sync in time"
            )
        except BaseException:
            self.stop()
            raise

    def _replicas_in_sync(self) -> bool:
        """Every replica has finished its first sync with its master: a replica that has
        not (its master busy, the sync retried later) cannot take over a master that
        fails ("unable to failover: disconnected from master for longer than allowed"),
        and a test that kills a master would find a cluster that stays down."""
        if not self._replicas:
            return True
        infos = [s.cli("INFO", "replication") for s in self.servers]
        replicas = [i for i in infos if "role:slave" in i]
        return len(replicas) == len(self.servers) - len(self.servers) // (
            1 + self._replicas
        ) and all("master_link_status:up" in i for i in replicas)

    def roles(self) -> dict[str, str]:
        """address -> ``master`` or the address of the master it replicates, as the
        first answering server's ``CLUSTER NODES`` says ({} when none answers); failed
        servers are left out."""
        for s in self.servers:
            text = s.cli("CLUSTER", "NODES")
            if not text:
                continue
            ids: dict[str, str] = {}
            rows = [line.split() for line in text.splitlines() if line.strip()]
            for row in rows:
                ids[row[0]] = row[1].split("@")[0]
            out: dict[str, str] = {}
            for row in rows:
                if "fail" in row[2].split(","):
                    continue
                address = row[1].split("@")[0]
                out[address] = "master" if "master" in row[2] else ids.get(row[3], "?")
            return out
        return {}

    def stop(self) -> None:
        for s in self.servers:
            with contextlib.suppress(Exception):
                s.stop()

    def __enter__(self) -> RedisCluster:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
