"""The docs cannot drift from the code: generated settings, flags and metric names."""

from __future__ import annotations

import ast
import importlib.util
import inspect
import re
import textwrap
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from prometheus_client import CollectorRegistry, generate_latest

from headway.cli import main
from headway.runtime.metrics import SnapshotCollector
from headway.runtime.snapshot import build_snapshot
from headway.settings import KEYS

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "gen_settings_doc", ROOT / "scripts/gen_settings_doc.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_settings_doc_is_generated_output() -> None:
    committed = (DOCS / "settings.md").read_text(encoding="utf-8")
    assert committed == _generator().render(), (
        "docs/settings.md is stale: run python scripts/gen_settings_doc.py"
    )


def test_settings_doc_lists_every_key_with_its_env_var() -> None:
    text = (DOCS / "settings.md").read_text(encoding="utf-8")
    for key in KEYS:
        assert f"| `{key.name}` |" in text, key.name
        assert f"`{key.env}`" in text, key.env


def test_every_crawl_flag_is_documented(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["crawl", "--help"])
    assert exit_info.value.code == 0
    help_text = capsys.readouterr().out
    flags = set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", help_text)) - {"--help"}
    assert len(flags) > len(KEYS)  # every key has a flag, plus --config and --no-* forms
    doc = (DOCS / "settings.md").read_text(encoding="utf-8")
    missing = sorted(f for f in flags if f"`{f}`" not in doc)
    assert not missing, f"flags of `headway crawl --help` missing from docs/settings.md: {missing}"


def _sample_snapshot() -> dict[str, Any]:
    """A snapshot shaped like ``build_snapshot`` of a busy crawl."""
    stage = {
        "depth": 3,
        "capacity": 10,
        "oldest_age": 0.5,
        "blocked_puts": 2,
        "bytes": 40_000,
        "max_bytes": 67_108_864,
    }
    return {
        "time": 1_700_000_000.0,
        "elapsed": 12.5,
        "fetches": 120,
        "requests": 130,
        "bytes": 1_234_567,
        "retries": 4,
        "robots_fetches": 6,
        "retry_ratio": 4 / 130,
        "errors": 5,
        "outcomes": {"ok": 110, "client_error": 5, "timeout": 3, "throttled": 2},
        "pages_per_second": 9.5,
        "bytes_per_second": 98_000.0,
        "in_flight": 7,
        "pipeline": 12,
        "stages": [{"name": name, **stage} for name in ("parse-queue", "parse", "store", "settle")],
        "admission_rejected": {"out-of-scope": 40, "too-deep": 2},
        "admission_known": 1200,
        "hostile": {"credentials-stripped": 2, "blocked-host": 1},
        "shed": {"host-budget": 3, "frontier-full": 0},
        "frontier": {
            "queued": 500,
            "leased": 7,
            "done": 115,
            "failed": 5,
            "seen": 627,
            "hosts_queued": 6,
        },
        "hosts": {"known": 6, "active": 4, "ready": 1, "parked": 1},
        "throttled_hosts": [
            {
                "host": "site1.sim:8300",
                "in_flight": 1,
                "limit": 1.0,
                "gap": 4.0,
                "retry_ratio": 0.25,
                "health": 0.6,
            }
        ],
        "paused": False,
        "software": "headway/0.1.0",
    }


def _snapshot_source() -> ast.Module:
    return ast.parse(textwrap.dedent(inspect.getsource(build_snapshot)))


def _snapshot_keys_in_code() -> set[str]:
    """Every string key of the dict literals that ``build_snapshot`` builds."""
    keys: set[str] = set()
    for node in ast.walk(_snapshot_source()):
        if isinstance(node, ast.Dict):
            for k in node.keys:
                if isinstance(k, ast.Constant) and isinstance(k.value, str):
                    keys.add(k.value)
    return keys


def _top_level_snapshot_keys() -> set[str]:
    """The keys of the dict ``build_snapshot`` returns."""
    for node in ast.walk(_snapshot_source()):
        if isinstance(node, ast.Return) and isinstance(node.value, ast.Dict):
            return {
                k.value
                for k in node.value.keys
                if isinstance(k, ast.Constant) and isinstance(k.value, str)
            }
    raise AssertionError("build_snapshot no longer returns a dict literal")


def test_sample_snapshot_has_the_shape_the_node_builds() -> None:
    assert set(_sample_snapshot()) == _top_level_snapshot_keys()
    keys = _snapshot_keys_in_code()
    sample = _sample_snapshot()
    for key in ("hosts", "frontier"):
        assert set(sample[key]) <= keys
    assert set(sample["stages"][0]) <= keys
    assert set(sample["throttled_hosts"][0]) <= keys


def test_every_exported_metric_and_label_is_documented() -> None:
    collector = SnapshotCollector()
    collector.update(_sample_snapshot())
    registry = CollectorRegistry()
    registry.register(collector)
    exposition = generate_latest(registry).decode()
    families = [f.name for f in collector.collect()]
    assert len(families) >= 20
    samples = set(re.findall(r"^(headway_\w+)", exposition, flags=re.MULTILINE))
    labels = set(re.findall(r"[{,](\w+)=\"", exposition))
    assert labels >= {"outcome", "stage", "reason", "state", "host"}
    doc = (DOCS / "metrics.md").read_text(encoding="utf-8")
    missing = sorted(n for n in set(families) | samples if f"`{n}`" not in doc)
    assert not missing, f"metrics missing from docs/metrics.md: {missing}"
    missing_labels = sorted(label for label in labels if f"`{label}`" not in doc)
    assert not missing_labels, f"labels missing from docs/metrics.md: {missing_labels}"


def test_every_snapshot_key_is_documented() -> None:
    doc = (DOCS / "metrics.md").read_text(encoding="utf-8")
    missing = sorted(k for k in _snapshot_keys_in_code() if f"`{k}`" not in doc)
    assert not missing, f"metrics.jsonl keys missing from docs/metrics.md: {missing}"


def test_crawl_log_fields_are_documented() -> None:
    from dataclasses import fields

    from headway.store.crawllog import CrawlLogEntry

    doc = (DOCS / "crawl-directory.md").read_text(encoding="utf-8")
    missing = [f.name for f in fields(CrawlLogEntry) if f"`{f.name}`" not in doc]
    assert not missing, f"crawl log fields missing from docs/crawl-directory.md: {missing}"


def test_readme_links_resolve() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = re.findall(r"\]\(((?:docs/)[^)#]+)", readme)
    assert {"docs/settings.md", "docs/metrics.md"} <= set(targets)
    for target in targets:
        assert (ROOT / target).is_file(), target
