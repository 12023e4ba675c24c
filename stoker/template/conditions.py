"""The ``conditions`` section: parse once, evaluate each name lazily, detect cycles."""

from __future__ import annotations

from typing import Any

from stoker.errors import FunctionError, Problems
from stoker.functions.base import Function, functions_in, resolve
from stoker.template.parse import Parser

_IN_PROGRESS = object()


class Conditions:
    """Named conditions of one stack, evaluated on demand and memoised."""

    def __init__(self, definitions: dict[str, Any]):
        self.definitions = definitions
        self._values: dict[str, Any] = {}

    @classmethod
    def parse(cls, section: dict, parser: Parser, problems: Problems) -> "Conditions":
        parsed = {}
        for name, raw in section.items():
            path = ("conditions", name)
            value = parser.parse_condition(raw, path)
            if not isinstance(value, (bool, Function)):
                problems.add(path, "invalid-condition",
                             f'The definition of condition "{name}" is invalid: {raw!r} '
                             "(expected a boolean or a condition function)")
                value = False
            parsed[name] = value
        return cls(parsed)

    def references(self, name: str) -> set[str]:
        """Conditions that condition ``name`` names (in ``not``/``and``/``or``; never ``equals``)."""
        found = set()
        for fn in functions_in(self.definitions[name]):
            if fn.names_conditions:
                args = fn.args if isinstance(fn.args, list) else [fn.args]
                found.update(a for a in args if isinstance(a, str) and a in self.definitions)
        return found

    def check_cycles(self, problems: Problems) -> None:
        """Report each condition that refers to itself, directly or through others."""
        edges = {name: self.references(name) for name in self.definitions}
        on_cycle: dict[str, list[str]] = {}
        done: set[str] = set()
        for start in self.definitions:
            self._walk(start, edges, [], done, on_cycle)
        for name in self.definitions:  # in the order they are written
            if name in on_cycle:
                problems.add(("conditions", name), "condition-cycle",
                             f'Circular definition for condition "{name}" ({" -> ".join(on_cycle[name])})')

    def _walk(self, name: str, edges: dict, trail: list, done: set, on_cycle: dict) -> None:
        if name in trail:
            cycle = trail[trail.index(name):] + [name]
            for member in cycle:
                on_cycle.setdefault(member, cycle)
            return
        if name in done:
            return
        trail.append(name)
        for target in sorted(edges[name]):
            self._walk(target, edges, trail, done, on_cycle)
        trail.pop()
        done.add(name)

    def names(self) -> set[str]:
        return set(self.definitions)

    def is_enabled(self, name: Any) -> bool:
        if name is None:
            return True
        if isinstance(name, bool):
            return name
        if not isinstance(name, str) or name not in self.definitions:
            raise FunctionError(f'Invalid condition "{name}"', code="unknown-condition",
                                path=("conditions",))
        value = self._values.get(name)
        if value is _IN_PROGRESS:
            raise FunctionError(f'Circular definition for condition "{name}"',
                                code="condition-cycle", path=("conditions", name))
        if value is None:
            self._values[name] = _IN_PROGRESS
            try:
                value = resolve(self.definitions[name])
            finally:
                self._values.pop(name, None)
            if not isinstance(value, bool):
                raise FunctionError(
                    f'The definition of condition "{name}" is invalid: it evaluates to '
                    f"{value!r}, not a boolean", code="invalid-condition", path=("conditions", name))
            self._values[name] = value
        return value

    def evaluate_all(self, problems: Problems) -> dict[str, bool]:
        """Every condition's value; failures become problems (and read as False)."""
        result = {}
        for name in self.definitions:
            try:
                result[name] = self.is_enabled(name)
            except FunctionError as exc:
                problems.add(exc.path or ("conditions", name), exc.code, exc.message)
                result[name] = False
        return result
