"""An embedded crawl never imports a Redis client, and a Redis store asked for beside an
unusable one (pywb pins redis 2.10; archivists install both) is one line naming the
version needed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from headway.frontier.redisclient import client_problem

UA = "bot/1.0 (+https://example.org/bot)"


@pytest.mark.parametrize(
    ("installed", "usable"),
    [
        ("5.0.0", True),
        ("7.4.2", True),
        ("8.2.0", True),
        ("2.10.6", False),
        ("4.6.0", False),
        ("9.0.0", False),
        ("dev", False),
        (None, False),
    ],
)
def test_which_clients_serve_the_backend(installed: str | None, usable: bool) -> None:
    problem = client_problem(installed)
    assert (problem is None) is usable
    if problem is not None:
        assert "redis-py >= 5, < 9" in problem and "\n" not in problem


@pytest.fixture
def old_redis(tmp_path: Path) -> dict[str, str]:
    """An environment whose ``redis`` is 2.10.6 by its metadata and fails when imported."""
    site = tmp_path / "site"
    (site / "redis").mkdir(parents=True)
    (site / "redis" / "__init__.py").write_text(
        "raise ImportError(\"No module named 'redis.backoff' (the old client was imported)\")\n"
    )
    info = site / "redis-2.10.6.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: redis\nVersion: 2.10.6\n")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(site), *filter(None, [env.get("PYTHONPATH")])])
    return env


def _run(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "headway.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        env=env,
    )


def test_an_embedded_crawl_and_its_commands_never_import_redis(
    old_redis: dict[str, str], tmp_path: Path
) -> None:
    demo = _run(old_redis, tmp_path, "demo", "--hosts", "2", "--pages", "3")
    assert demo.returncode == 0, demo.stderr
    assert "Traceback" not in demo.stderr and "old client" not in demo.stderr
    for command in (["status", "headway-demo"], ["report", "headway-demo"]):
        shown = _run(old_redis, tmp_path, *command)
        assert shown.returncode == 0, (command, shown.stderr)
        assert "old client" not in shown.stdout + shown.stderr


def test_a_redis_store_with_an_old_client_is_one_line_naming_the_version(
    old_redis: dict[str, str], tmp_path: Path
) -> None:
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("http://site0.sim/\n")
    store = "redis://127.0.0.1:1/0"
    for args in (
        [
            "crawl",
            str(seeds),
            "--store",
            store,
            "--crawl-id",
            "c",
            "--out",
            "d",
            "--user-agent",
            UA,
        ],
        ["node", "--store", store, "--crawl-id", "c", "--out", "e", "--user-agent", UA],
        ["status", "--store", store, "--crawl-id", "c"],
    ):
        done = _run(old_redis, tmp_path, *args)
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1, (args, done.stderr)
        assert "redis-py >= 5, < 9" in lines[0] and "redis 2.10.6" in lines[0]
        assert "Traceback" not in done.stderr
    assert not (tmp_path / "d").exists() and not (tmp_path / "e").exists()
