"""Conditions and choices: ``if``, ``equals``, ``not``, ``and``, ``or``.

A *condition argument* (the first argument of ``if``, the arguments of
``not``/``and``/``or``) is a boolean, the name of a condition from the
template's ``conditions`` section, or a condition function.  As in Heat, a
null condition counts as true ("no condition").
"""

from __future__ import annotations

import difflib
from typing import Any, Iterator

from stoker.errors import FunctionError, StokerError
from stoker.functions.base import OMITTED, Function, dependencies, resolve, show


def check_condition_arg(fn: Function, value: Any) -> None:
    """Reject a condition argument that is wrong before anything is evaluated."""
    if value is None or isinstance(value, (bool, Function)):
        return
    if isinstance(value, str):
        if not fn.stack.has_condition(value):
            raise _unknown_condition(fn, value)
        return
    raise fn.error(
        f"Invalid condition {show(value)} in \"{fn.name}\": a condition is a boolean, "
        "the name of a condition or a condition function",
        code="invalid-condition",
    )


def condition_value(fn: Function, value: Any) -> bool:
    """The truth of a *resolved* condition argument."""
    if isinstance(value, bool):
        return value
    if value is None:
        return True
    if isinstance(value, str) and fn.stack.has_condition(value):
        try:
            return fn.stack.condition(value)
        except FunctionError as exc:
            if not exc.path:
                exc.path = fn.path
            raise
    if isinstance(value, str):
        raise _unknown_condition(fn, value)
    raise fn.error(f"Invalid condition {show(value)} in \"{fn.name}\": it is neither a "
                   "boolean nor the name of a condition", code="invalid-condition")


def _unknown_condition(fn: Function, name: str) -> FunctionError:
    message = f'Invalid condition "{name}"'
    close = difflib.get_close_matches(name, sorted(fn.stack.condition_names), n=1)
    if close:
        message += f'; did you mean "{close[0]}"?'
    elif not fn.stack.condition_names:
        message += " (the template defines no conditions)"
    return fn.error(message, code="unknown-condition")


class If(Function):
    """``if: [condition, value_if_true, value_if_false]``.

    Both values are parsed and validated (Heat only looks at the chosen one,
    so Stoker reports mistakes in the other branch too), but only the chosen
    one counts as a dependency once the condition can be evaluated.
    """

    passes_through = True

    #: how many values may follow the condition
    value_counts: tuple[int, ...] = (2,)

    def parse_args(self, args: Any) -> Any:
        # The condition and the values are parsed by different rules, so the
        # shape must be right before anything can be parsed.
        if not isinstance(args, list) or len(args) - 1 not in self.value_counts:
            raise self.error(
                f'Arguments to "{self.name}" must be of the form: '
                "[condition_name, value_if_true, value_if_false]"
            )
        condition = self.parser.parse_condition(args[0], self.path + (0,))
        values = [self.parser.parse(v, self.path + (i,)) for i, v in enumerate(args[1:], 1)]
        return [condition, *values]

    def validate(self) -> None:
        check_condition_arg(self, self.args[0])

    def chosen(self) -> Any:
        """The (unresolved) value the condition selects; ``OMITTED`` if none."""
        if condition_value(self, resolve(self.args[0])):
            return self.args[1]
        return self.args[2] if len(self.args) > 2 else OMITTED

    def result(self) -> Any:
        return resolve(self.chosen(), nullable=True)

    def dependencies(self) -> Iterator[str]:
        try:
            values = [self.chosen()]
        except StokerError:  # conditions not known yet: either value may be used
            values = self.args[1:]
        for value in values:
            yield from dependencies(value)


class IfNullable(If):
    """2021-04-16: ``if: [condition, value_if_true]`` may leave out the false value;
    when the condition is false the map key or list item holding the ``if``
    disappears (``OMITTED``; a lone value becomes null)."""

    value_counts = (1, 2)


class Equals(Function):
    """``equals: [value_1, value_2]``: true when both resolve to equal values."""

    parses_conditions = True

    def validate(self) -> None:
        if not isinstance(self.args, list) or len(self.args) != 2:
            raise self.error(f'Arguments to "{self.name}" must be of the form: [value_1, value_2]')

    def result(self) -> bool:
        return resolve(self.args[0]) == resolve(self.args[1])


class Not(Function):
    """``not: condition``."""

    parses_conditions = True
    names_conditions = True

    def validate(self) -> None:
        if self.args is None:
            raise self.error(f'Argument to "{self.name}" must be a condition')
        check_condition_arg(self, self.args)

    def result(self) -> bool:
        return not condition_value(self, resolve(self.args))


class _Combination(Function):
    """``and`` / ``or``: a list of at least two conditions."""

    parses_conditions = True
    names_conditions = True

    def validate(self) -> None:
        if not isinstance(self.args, list):
            raise self.error(f'Arguments to "{self.name}" must be a list of conditions')
        if len(self.args) < 2:
            raise self.error(f'The minimum number of condition arguments to "{self.name}" is 2.')
        for arg in self.args:
            check_condition_arg(self, arg)

    def values(self) -> Iterator[bool]:
        # Every argument is resolved first (so a broken one is always
        # reported); names are looked up lazily, as in Heat.
        return (condition_value(self, arg) for arg in resolve(self.args))


class And(_Combination):
    def result(self) -> bool:
        return all(self.values())


class Or(_Combination):
    def result(self) -> bool:
        return any(self.values())
