"""string_find, string_replace, string_split, string_lower, string_upper: Python's str methods.

They run as soon as their arguments are known; an argument that only runtime
can give is an error at deployment creation (unless everything waits for
runtime), as in Cloudify.
"""

from __future__ import annotations

import abc
from typing import Any

from stoker.blueprint.functions.base import HYBRID, Function, function_of


class _StringFunction(Function):
    phase = HYBRID
    #: (argument name, required type) in call order; trailing optional ones after ``required``
    arguments: tuple[tuple[str, type], ...] = ()
    required = 0

    def parse_args(self, args: Any) -> None:
        count = len(self.arguments)
        if not isinstance(args, list) or not self.required <= len(args) <= count:
            wanted = (f"exactly {count}" if self.required == count else f"{self.required} to {count}")
            raise self.fail(f"should be called with {wanted} parameters")
        self.values = dict(zip((name for name, _ in self.arguments), args))

    def _check(self, checking: bool) -> None:
        for name, wanted in self.arguments:
            if name not in self.values:
                continue
            value = self.values[name]
            if function_of(value, self.table):
                if checking:
                    continue
                raise self.fail(f"argument `{name}` can only be known at runtime ({value}), "
                                "so it cannot be used at deployment creation")
            if not isinstance(value, wanted) or isinstance(value, bool):
                raise self.fail(f"argument `{name}` should be of type {wanted.__name__} but is "
                                f"{type(value).__name__} ({value!r})")

    def validate(self, checker: Any) -> None:
        self._check(checking=True)

    def evaluate(self, handler: Any) -> Any:
        self._check(checking=False)
        try:
            return self.compute(**self.values)
        except (ValueError, IndexError) as exc:
            raise self.fail(str(exc)) from None

    @abc.abstractmethod
    def compute(self, **values: Any) -> Any:
        """The string operation on the checked argument values."""


class StringFind(_StringFunction):
    name = "string_find"
    arguments = (("haystack", str), ("needle", str))
    required = 2

    def compute(self, haystack: str, needle: str) -> int:
        return haystack.find(needle)


class StringReplace(_StringFunction):
    name = "string_replace"
    arguments = (("haystack", str), ("needle", str), ("replacement", str), ("count", int))
    required = 3

    def compute(self, haystack: str, needle: str, replacement: str, count: int = -1) -> str:
        return haystack.replace(needle, replacement, count)


class StringSplit(_StringFunction):
    name = "string_split"
    arguments = (("input", str), ("separator", str), ("index", int))
    required = 2

    def compute(self, input: str, separator: str, index: int | None = None) -> Any:
        parts = input.split(separator)
        return parts if index is None else parts[index]


class _CaseFunction(_StringFunction):
    arguments = (("input", str),)
    required = 1

    def parse_args(self, args: Any) -> None:
        if not (isinstance(args, str) or (isinstance(args, dict) and len(args) == 1)):
            raise self.fail("should be called with exactly one parameter")
        self.values = {"input": args}


class StringLower(_CaseFunction):
    name = "string_lower"

    def compute(self, input: str) -> str:
        return input.lower()


class StringUpper(_CaseFunction):
    name = "string_upper"

    def compute(self, input: str) -> str:
        return input.upper()
