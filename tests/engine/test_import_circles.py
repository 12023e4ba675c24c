"""The engine package has no import circle: a stack and its walks see ``StackHost``, not ``Engine``.

Every import counts, including those under ``TYPE_CHECKING`` and inside functions: a circle
there still ties the modules' designs together.
"""

from __future__ import annotations

import ast
from pathlib import Path

import stoker

PACKAGE = Path(stoker.__file__).parent


def _imports(package: str) -> dict[str, set[str]]:
    """module -> the modules of ``package`` it imports anywhere in its text."""
    folder = PACKAGE.parent.joinpath(*package.split("."))
    modules = {f"{package}.{path.stem}": path for path in folder.glob("*.py") if path.stem != "__init__"}
    edges: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                targets = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
            elif isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                continue
            edges[name].update(target for target in targets if target in modules)
    return edges


def _circle(edges: dict[str, set[str]]) -> list[str]:
    """One import circle as a path of modules, or [] when there is none."""
    done: set[str] = set()

    def visit(module: str, path: list[str]) -> list[str]:
        if module in path:
            return path[path.index(module):] + [module]
        if module in done:
            return []
        for target in sorted(edges[module]):
            found = visit(target, path + [module])
            if found:
                return found
        done.add(module)
        return []

    for module in sorted(edges):
        found = visit(module, [])
        if found:
            return found
    return []


def test_the_engine_package_has_no_import_circle():
    assert _circle(_imports("stoker.engine")) == []


def test_a_circle_is_found_when_there_is_one():
    assert _circle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _circle({"a": {"b"}, "b": set()}) == []
