"""The docs cannot drift from the code: generated settings, flags and metric names."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

import pytest
from prometheus_client import CollectorRegistry, generate_latest

from headway.cli import main
from headway.frontier.store import FrontierCounts
from headway.runtime.looplag import LoopLagStats
from headway.runtime.metrics import StatsCollector
from headway.runtime.stage import StageStats
from headway.runtime.stats import (
    FetchStats,
    HostRow,
    LeaseStats,
    NodeStats,
    RecrawlStats,
    SchedulerStats,
    StoreStats,
)
from headway.settings import KEYS
from headway.work.admission import AdmissionStats

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


def _sample_stats() -> NodeStats:
    """The statistics of a busy crawl, every part filled in."""
    return NodeStats(
        time=1_700_000_000.0,
        elapsed=12.5,
        pipeline=12,
        fetch=FetchStats(
            fetches=120,
            requests=130,
            bytes=1_234_567,
            retries=4,
            robots_fetches=6,
            outcomes={"ok": 110, "client_error": 5, "timeout": 3, "throttled": 2},
            hostile={"credentials-stripped": 2, "blocked-host": 1},
            in_flight=7,
            pages_per_second=9.5,
            bytes_per_second=98_000.0,
        ),
        stages=tuple(
            StageStats(name, 3, 10, 0.5, 40, 2, 40_000, 67_108_864)
            for name in ("parse-queue", "parse", "store", "settle")
        ),
        admission=AdmissionStats({"out-of-scope": 40, "too-deep": 2}, 1200),
        frontier=FrontierCounts(500, 7, 115, 5, 627, 6, {"host-budget": 3, "frontier-full": 0}),
        scheduler=SchedulerStats(
            known=6,
            active=4,
            ready=1,
            parked=1,
            paused=False,
            throttled=(HostRow("site1.sim:8300", 1, 1.0, 4.0, 0.25, 0.6),),
        ),
        store=StoreStats(warc_files=1, records=250, bytes=900_000, revisits=3),
        leases=LeaseStats(held=19, beats=4, extended=60),
        recrawl=RecrawlStats(revisits=30, changed=10, unchanged=20, not_modified=15, scheduled=30),
        loop_lag=LoopLagStats(worst=1.25, recent=0.125, last=0.0025, samples=600, over_bound=1),
        software="headway/0.1.0",
    )


#: JSON objects whose keys are values (outcomes, reasons), not field names.
_VALUE_KEYED = {"outcomes", "admission_rejected", "hostile", "shed"}


def _json_keys(obj: object) -> set[str]:
    """Every field name in a JSON value, nested objects and lists of objects included."""
    keys: set[str] = set()
    if isinstance(obj, dict):
        for k, v in obj.items():
            keys.add(k)
            if k not in _VALUE_KEYED:
                keys |= _json_keys(v)
    elif isinstance(obj, list):
        for v in obj:
            keys |= _json_keys(v)
    return keys


def test_every_exported_metric_and_label_is_documented() -> None:
    collector = StatsCollector()
    collector.update(_sample_stats())
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


def test_every_metrics_json_key_is_documented() -> None:
    keys = _json_keys(_sample_stats().to_json())
    assert {"fetches", "stages", "oldest_age", "throttled_hosts", "health", "leases"} <= keys
    doc = (DOCS / "metrics.md").read_text(encoding="utf-8")
    missing = sorted(k for k in keys if f"`{k}`" not in doc)
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


def test_readme_documentation_list_names_every_page_of_docs() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    listed = readme.split("## Documentation", 1)[1]
    linked = set(re.findall(r"^- \[[^]]*\]\((docs/[^)#]+)\)", listed, re.MULTILINE))
    pages = {f"docs/{p.name}" for p in DOCS.glob("*.md")}
    assert pages - linked == set(), "pages of docs/ missing from README's Documentation list"


def test_example_seeds_file_is_all_usable() -> None:
    from headway.urls.seeds import load_seeds

    loaded = load_seeds(Path(__file__).parent.parent / "examples" / "seeds.txt")
    assert loaded.unusable == 0 and not loaded.problems
    assert len(loaded.urls) >= 4 and "https://example.org/" in loaded.urls


def test_readme_simulated_web_seeds_match_the_hosts_served() -> None:
    """Each crawl of a simweb the README starts reads seeds of exactly the hosts that
    simweb serves: a seeds list of more hosts would fetch 404s."""
    readme = (Path(__file__).parent.parent / "README.md").read_text()
    pattern = re.compile(
        r"headway simweb --hosts (?P<served>\d+)"
        r'|for i in (?P<ids>[\d ]+); do echo "http://site\$i\.sim[^"]*"; done > (?P<file>\S+)'
        r"|headway crawl (?P<crawled>\S+)"
    )
    served, files, checked = 0, {}, 0
    for m in pattern.finditer(readme):
        if m["served"]:
            served = int(m["served"])
        elif m["file"]:
            files[m["file"]] = len(m["ids"].split())
        elif m["crawled"] in files:
            assert files[m["crawled"]] == served, (m["crawled"], served)
            checked += 1
    assert checked >= 2
