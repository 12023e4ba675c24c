"""No import circle among stoker's modules: each module can be read, and tested, below the ones that use it.

Every import counts, wherever it sits (top level, inside a function, under
``TYPE_CHECKING``): a function-level import is still a dependency, only a
hidden one.
"""

from __future__ import annotations

import ast
from pathlib import Path

import stoker

ROOT = Path(stoker.__file__).parent


def module_names() -> dict[str, Path]:
    """Dotted module name -> file, for every module of the package."""
    found = {}
    for path in ROOT.rglob("*.py"):
        parts = ("stoker", *path.relative_to(ROOT).with_suffix("").parts)
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imported_by(name: str, path: Path, modules: dict) -> set[str]:
    """The stoker modules ``name`` imports (a package's ``from p import m`` counts as ``p.m`` when m is one)."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name in modules)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package[:len(package) - node.level + 1] + ([base] if base else []))
            for alias in node.names:
                target = f"{base}.{alias.name}"
                if target in modules or base in modules:
                    found.add(target if target in modules else base)
    found.discard(name)
    return found


def reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    """Every module reached from ``start`` by one import or more."""
    seen: set[str] = set()
    pending = list(graph[start])
    while pending:
        name = pending.pop()
        if name not in seen:
            seen.add(name)
            pending.extend(graph[name])
    return seen


def import_circles() -> set[frozenset[str]]:
    """Each set of modules that import each other, directly or through others."""
    modules = module_names()
    graph = {name: imported_by(name, path, modules) for name, path in modules.items()}
    reach = {name: reachable(graph, name) for name in graph}
    return {frozenset(other for other in reach[name] if name in reach[other])
            for name in graph if name in reach[name]}


def test_the_import_graph_is_read():
    """A circle-free answer means something: the reader sees the imports it should."""
    modules = module_names()
    assert "stoker.blueprint.functions.table" in modules and "stoker" in modules
    table = imported_by("stoker.blueprint.functions.table", modules["stoker.blueprint.functions.table"], modules)
    assert "stoker.blueprint.functions.attributes" in table
    assert "stoker.engine.stack" in imported_by("stoker.engine.running", modules["stoker.engine.running"], modules)


def test_no_import_circle():
    assert sorted(sorted(circle) for circle in import_circles()) == []
