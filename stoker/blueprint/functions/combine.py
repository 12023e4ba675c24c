"""concat and merge: evaluated as soon as every argument is known, else left for runtime."""

from __future__ import annotations

import abc
from typing import Any

from stoker.blueprint.functions.base import HYBRID, Function, function_of


class _Combining(Function):
    phase = HYBRID
    since = (1, 0)

    def parse_args(self, args: Any) -> None:
        if not isinstance(args, list):
            raise self.fail(f"expected a list [arg1, arg2, ...] but got {args!r}")
        self.items = args

    def validate(self, checker: Any) -> None:
        plan = checker.plan
        if tuple(plan["version"]) < self.since:
            raise self.fail(f"needs tosca_definitions_version cloudify_dsl_{self.since[0]}_{self.since[1]} "
                            f"or later, but the blueprint uses {plan['version_name']}")

    def evaluate(self, handler: Any) -> Any:
        if any(function_of(item, handler.table) for item in self.items):
            return self.raw  # something here waits for runtime
        return self.combine(self.items)

    @abc.abstractmethod
    def combine(self, items: list) -> Any:
        """Join the resolved ``items`` into one value."""


class Concat(_Combining):
    name = "concat"
    since = (1, 1)

    def combine(self, items: list) -> str:
        return "".join(str(item) for item in items)


class Merge(_Combining):
    name = "merge"
    since = (1, 3)

    def validate(self, checker: Any) -> None:
        super().validate(checker)
        for item in self.items:
            if not isinstance(item, dict):
                raise self.fail(f"encountered a non-dict element: {item!r}")

    def combine(self, items: list) -> dict:
        merged: dict = {}
        for item in items:
            try:
                merged.update(item)  # a runtime value may also be a list of pairs, as dict.update takes
            except (TypeError, ValueError):
                raise self.fail(f"encountered an element that is not a dict: {item!r}") from None
        return merged
