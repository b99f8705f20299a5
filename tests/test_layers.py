"""The package's layers, read from its own imports (every import statement, also those
under ``TYPE_CHECKING`` and inside functions): no import circle, pure packages import no
IO, each layer imports only the layers below it (docs/architecture.md)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src"
PACKAGE = SRC / "headway"
#: Packages of pure decisions: no IO, no sleeping, no clock.
PURE = ("urls", "policy", "parse", "work")
IO_MODULES = ("asyncio", "aiohttp", "redis", "time")
#: The layers, bottom first, and what each may import of the layers below it (itself
#: always). Every package and top-level module of ``src/headway`` is one layer here
#: (``test_every_package_is_a_layer``), and a layer names only layers listed before it
#: (``test_a_layer_may_import_only_layers_below_it``), so no two packages import each
#: other.
LAYERS: dict[str, set[str]] = {
    "errors": set(),
    "crashpoints": set(),
    "threads": set(),
    "urls": {"errors"},
    "parse": {"errors", "urls"},
    "frontier": {"errors", "crashpoints", "urls"},
    "policy": {"errors", "urls", "parse", "frontier"},
    "fetch": {"errors", "urls", "policy"},
    "work": {"errors", "urls", "parse", "frontier", "policy", "fetch"},
    "store": {"errors", "crashpoints", "urls", "fetch"},
    "settings": {"errors", "fetch", "frontier"},
    "control": {"errors", "urls", "frontier", "policy"},
    "extract": {"errors", "parse", "policy", "store"},
    "report": {"urls", "policy", "control", "frontier", "store"},
    "testing": set(),
    "runtime": {
        "errors",
        "crashpoints",
        "threads",
        "urls",
        "parse",
        "frontier",
        "policy",
        "fetch",
        "work",
        "store",
        "settings",
        "control",
    },
    "archive": {"errors", "fetch", "parse", "store", "runtime"},
    "console": {"errors", "threads", "frontier", "policy", "settings", "control", "runtime"},
    "bench": {"settings", "testing", "runtime"},
    "cli": {
        "errors",
        "crashpoints",
        "threads",
        "urls",
        "frontier",
        "fetch",
        "store",
        "settings",
        "control",
        "report",
        "testing",
        "runtime",
        "console",
        "bench",
        "archive",
        "extract",
    },
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@cache
def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in PACKAGE.rglob("*.py")}


def _imports(name: str) -> Iterator[str]:
    """Every module named by an import statement of module ``name``."""
    path = _modules()[name]
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            yield module
            yield from (f"{module}.{a.name}" for a in node.names)


@cache
def _graph() -> dict[str, frozenset[str]]:
    """Module -> the package's modules it imports (a module importing its own package's
    ``__init__`` is not an arrow: Python runs that first anyway)."""
    mods = _modules()
    return {
        m: frozenset(i for i in _imports(m) if i in mods and i != m and not m.startswith(i + "."))
        for m in mods
    }


def _circles(graph: dict[str, frozenset[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def _layer(module: str) -> str:
    return module.split(".")[1] if "." in module else ""


def test_no_import_circle() -> None:
    assert _circles(_graph()) == []


def test_a_circle_is_found() -> None:
    graph = {"a": frozenset({"b"}), "b": frozenset({"c"}), "c": frozenset({"a"}), "d": frozenset()}
    assert _circles(graph) == [["a", "b", "c"]]


@pytest.mark.parametrize("package", PURE)
def test_pure_packages_import_no_io(package: str) -> None:
    found = {
        (m, i)
        for m in _modules()
        if _layer(m) == package
        for i in _imports(m)
        if i.split(".")[0] in IO_MODULES
    }
    assert found == set()


def test_every_package_is_a_layer() -> None:
    assert {_layer(m) for m in _modules()} - {""} == set(LAYERS)


def test_a_layer_may_import_only_layers_below_it() -> None:
    order = list(LAYERS)
    assert {
        (layer, below)
        for layer, allowed in LAYERS.items()
        for below in allowed
        if below not in order[: order.index(layer)]
    } == set()


def _layer_graph() -> dict[str, frozenset[str]]:
    """Package -> the other packages its modules import."""
    arrows: dict[str, set[str]] = {}
    for m, targets in _graph().items():
        arrows.setdefault(_layer(m), set()).update(_layer(i) for i in targets)
    return {layer: frozenset(t - {layer, ""}) for layer, t in arrows.items() if layer}


def test_no_two_packages_import_each_other() -> None:
    assert _circles(_layer_graph()) == []


@pytest.mark.parametrize("layer", list(LAYERS))
def test_each_layer_imports_only_the_layers_below_it(layer: str) -> None:
    allowed = LAYERS[layer] | {layer, ""}
    above = {
        (m, i)
        for m, targets in _graph().items()
        if _layer(m) == layer
        for i in targets
        if _layer(i) not in allowed
    }
    assert above == set()


#: Modules outside ``frontier/`` that read a backend's layout directly: the commands that
#: read a stopped or running crawl (``headway status``, ``report``, the control commands)
#: through the backends' read-only ``status`` modules, the console reading a shared
#: crawl's published snapshots and counts (and masking a store URL), and the control
#: log, which is kept in the crawl's own store (its Redis list under the crawl's key
#: layout, its table in the frontier file) and reached by a command without a running
#: node. ``headway why`` reads one URL's records through the backends' read-only
#: look-ups, and ``headway drop-crawl`` removes a shared crawl's keys by its layout.
LAYOUT_READERS: dict[str, set[str]] = {
    "headway.cli.why": {"headway.frontier.redis.lookup", "headway.frontier.sqlite.status"},
    "headway.cli.dropcrawl": {"headway.frontier.redis.drop"},
    "headway.cli.status": {"headway.frontier.redis.status"},
    "headway.cli.report": {"headway.frontier.redis.status", "headway.frontier.sqlite.status"},
    "headway.cli.control": {"headway.frontier.redis.status"},
    "headway.control.redis_log": {"headway.frontier.redis.keys"},
    "headway.console.sources": {
        "headway.frontier.redis.connect",
        "headway.frontier.redis.counts",
        "headway.frontier.redis.keys",
    },
    "headway.control.target": {
        "headway.frontier.redis.connect",
        "headway.frontier.redis.keys",
    },
}


def test_no_backend_class_is_named_outside_its_package() -> None:
    backends = ("headway.frontier.redis", "headway.frontier.sqlite")
    outside = {
        (m, i)
        for m, targets in _graph().items()
        if not m.startswith("headway.frontier.")
        for i in targets
        if i.startswith(backends) and i not in LAYOUT_READERS.get(m, set())
    }
    assert outside == set()


def test_nothing_below_the_command_line_imports_it() -> None:
    assert {
        m
        for m, targets in _graph().items()
        if _layer(m) != "cli" and any(_layer(i) == "cli" for i in targets)
    } == set()
