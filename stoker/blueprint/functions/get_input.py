"""get_input: a deployment input, or a key/index path inside one."""

from __future__ import annotations

from typing import Any, Iterator

from stoker.blueprint.blueprint_errors import FunctionFailed
from stoker.blueprint.functions.base import HYBRID, Function, function_of, is_literal_path, is_path_item, walk_path


class GetInput(Function):
    name = "get_input"
    phase = HYBRID

    def parse_args(self, args: Any) -> None:
        valid_list = isinstance(args, list) and args and all(is_path_item(a, self.table) for a in args)
        if not (isinstance(args, str) or function_of(args, self.table) or valid_list):
            raise self.fail("expected an input name, a function, or a list [input_name, key or index, ...], "
                            f"but got {args!r}")

    def _name(self) -> Any:
        return self.args[0] if isinstance(self.args, list) else self.args

    def validate(self, checker: Any) -> None:
        name = self._name()
        if not function_of(name, self.table) and name not in checker.plan["inputs"]:
            raise FunctionFailed(self.name, f"references an unknown input '{name}'", self.path)

    def dependencies(self) -> Iterator[tuple]:
        """``("input", name)`` when the name and path are literal (``references`` finds cycles with it)."""
        steps = self.args if isinstance(self.args, list) else [self.args]
        if is_literal_path(steps):
            yield ("input", steps[0])

    def evaluate(self, handler: Any) -> Any:
        steps = self.args if isinstance(self.args, list) else [self.args]
        if any(function_of(s, handler.table) for s in steps):
            raise self.fail(f"found an argument that can only be evaluated at runtime: {self.args}")
        return walk_path(self, handler.get_input(steps[0], self), steps, 1)
