"""List and map functions: ``repeat``, ``map_merge``, ``map_replace``, ``filter``,
``list_concat``, ``list_concat_unique`` and ``contains``.

As in ``strings``, each check is written once: ``validate()`` applies it to the
arguments as written (parts that are still functions are skipped) and
``result()`` applies it again to the resolved values.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

from stoker.functions.base import Function, describe, resolve, show
from stoker.functions.sizes import bounded_product, measured

# -- repeat ---------------------------------------------------------------------------
class Repeat(Function):
    """``repeat: {template: ..., for_each: {placeholder: list, ...}}`` (2015-04-30).

    One copy of the template per combination of the lists' items (every
    combination: nested loops), with each placeholder replaced by its item
    in strings and map keys.  A null list counts as empty.
    """

    keys = ("template", "for_each")
    #: what a for_each value may be, and how messages say it
    value_types: tuple[type, ...] = (list,)
    value_kinds = "lists"

    def permutations(self) -> bool:
        return True

    def validate(self) -> None:
        if not isinstance(self.args, dict):
            raise self.error(f'Arguments to "{self.name}" must be a map')
        if "template" not in self.args or "for_each" not in self.args:
            raise self.error(
                f'"{self.name}" syntax should be {self.name}: '
                "{template: 'This is %var%', for_each: {'%var%': ['a', 'b', 'c']}}"
            )
        self.warn_ignored_keys()
        for_each = self.args["for_each"]
        if not isinstance(for_each, Function):
            self.check_for_each(for_each)

    def warn_ignored_keys(self) -> None:
        for key in self.args:
            if key in self.keys:
                continue
            hint = (" (it needs heat_template_version 2017-09-01 or later)"
                    if key == "permutations" else "")
            self.parser.problems.warn(
                self.path + (key,), "ignored-argument",
                f'"{self.name}" ignores the key "{key}"{hint}',
            )

    def check_for_each(self, for_each: Any) -> None:
        if not isinstance(for_each, dict):
            raise self.error(f'The "for_each" argument to "{self.name}" must contain a map')
        if not for_each:
            raise self.error(f'The "for_each" argument to "{self.name}" must not be empty')
        lengths = set()
        for placeholder, values in for_each.items():
            if not isinstance(placeholder, str):
                raise self.error(
                    f'The placeholders in "for_each" of "{self.name}" must be strings, not {show(placeholder)}'
                )
            if values is None or isinstance(values, Function):
                continue
            if not isinstance(values, self.allowed_value_types()):
                raise self.error(
                    f'The values of the "for_each" argument to "{self.name}" must be '
                    f"{self.allowed_value_kinds()}, not {describe(values)} (for {placeholder})"
                )
            lengths.add(len(values))
        if not self.permutations() and len(lengths) > 1:
            raise self.error(
                f"For {self.name}, the length of for_each values should be equal if no nested loop.",
                code="unequal-lengths",
            )

    def allowed_value_types(self) -> tuple[type, ...]:
        return self.value_types

    def allowed_value_kinds(self) -> str:
        return self.value_kinds

    def result(self) -> list:
        for_each = resolve(self.args["for_each"])
        self.check_for_each(for_each)
        placeholders = list(for_each)
        lists = [list(v) if v is not None else [] for v in for_each.values()]
        template = resolve(self.args["template"])
        if self.permutations():
            count = math.prod(len(v) for v in lists)
            combinations = itertools.product(*lists)
        else:
            count = min(len(v) for v in lists)
            combinations = zip(*lists)
        # each copy: the template with an item put in for each placeholder
        longest = sum(max((len(v) for v in items if isinstance(v, str)), default=0) for items in lists)
        bounded_product(self, count, measured(template) + longest)
        return [self.substitute(template, list(zip(placeholders, items))) for items in combinations]

    def substitute(self, template: Any, replacements: list[tuple[str, Any]]) -> Any:
        """A copy of ``template`` with every placeholder replaced, one after the other."""
        if isinstance(template, str):
            for placeholder, value in replacements:
                if not isinstance(value, str):
                    raise self.error(
                        f'"{self.name}" can only put strings into its template; the item '
                        f"{show(value)} of {placeholder} is {describe(value)}"
                    )
                template = template.replace(placeholder, value)
            return template
        if isinstance(template, list):
            return [self.substitute(v, replacements) for v in template]
        if isinstance(template, dict):
            return {
                self.substitute(k, replacements): self.substitute(v, replacements)
                for k, v in template.items()
            }
        return template


class RepeatWithMap(Repeat):
    """2016-10-14: a for_each value may also be a map; its keys are iterated."""

    value_types = (list, dict)
    value_kinds = "lists or maps"


class RepeatWithNestedLoop(RepeatWithMap):
    """2017-09-01: ``permutations: false`` walks equal-length lists side by side
    (the n-th copy takes the n-th item of each list); maps are then not allowed,
    because their order means nothing."""

    keys = ("template", "for_each", "permutations")

    def permutations(self) -> bool:
        return self.args.get("permutations", True)

    def validate(self) -> None:
        if isinstance(self.args, dict) and not isinstance(self.args.get("permutations", True), bool):
            raise self.error(f'"permutations" should be boolean type for {self.name} function.')
        super().validate()

    def allowed_value_types(self) -> tuple[type, ...]:
        return self.value_types if self.permutations() else (list,)

    def allowed_value_kinds(self) -> str:
        return self.value_kinds if self.permutations() else "lists"


# -- maps -----------------------------------------------------------------------------
def _is_map(value: Any) -> bool:
    """A map, null (read as an empty map) or a function not yet resolved."""
    return value is None or isinstance(value, (dict, Function))


class MapMerge(Function):
    """``map_merge: [map, map, ...]``: later maps win; null counts as empty."""

    def validate(self) -> None:
        if not isinstance(self.args, Function):
            self.check(self.args)

    def check(self, args: Any) -> None:
        if not isinstance(args, list):
            raise self.error(
                f'Incorrect arguments to "{self.name}" should be: '
                f'"{self.name}" : [ {{ "key1": "val1" }}, {{ "key2": "val2" }} ]'
            )
        for item in args:
            if not _is_map(item):
                raise self.error(
                    f"Incorrect arguments: Items to merge must be maps. {show(item)} is "
                    f'{describe(item)} instead of a map (in "{self.name}")'
                )

    def result(self) -> dict:
        args = resolve(self.args)
        self.check(args)
        bounded_product(self, 1, measured(args))  # the result is no bigger
        merged: dict = {}
        for item in args:
            merged.update(item or {})
        return merged


class MapReplace(Function):
    """``map_replace: [map, {keys: {old: new}, values: {old: new}}]``.

    A new key may not collide with a key of the input or with another new
    key.  Values that cannot be map keys (lists, maps) are never replaced.
    """

    def usage(self):
        return self.error(
            f'Incorrect arguments to "{self.name}" should be: "{self.name}" : '
            '[ { "key1": "val1" }, {"keys": {"key1": "key2"}, "values": {"val1": "val2"}}]'
        )

    def validate(self) -> None:
        if not isinstance(self.args, Function):
            self.check(self.args)

    def check(self, args: Any) -> None:
        if not isinstance(args, list) or len(args) != 2:
            raise self.usage()
        replacements = args[1]
        parts = [args[0], replacements]
        if isinstance(replacements, dict):
            if any(k not in ("keys", "values") for k in replacements):
                raise self.usage()
            parts += replacements.values()
        for part in parts:
            if not _is_map(part):
                raise self.error(
                    f'Incorrect arguments: to "{self.name}", arguments must be a list of maps, '
                    f"not {describe(part)}. Example: "
                    '[ { "key1": "val1" }, {"keys": {"key1": "key2"}, "values": {"val1": "val2"}}]'
                )

    def result(self) -> dict:
        args = resolve(self.args)
        self.check(args)
        source = args[0] or {}
        replacements = args[1] or {}
        new_keys = replacements.get("keys") or {}
        new_values = replacements.get("values") or {}
        replaced: dict = {}
        for key, value in source.items():
            new_key = new_keys.get(key)
            if new_key is None:
                new_key = key
            else:
                try:
                    in_source = new_key in source
                except TypeError:
                    raise self.error(
                        f'A key replacement in "{self.name}" must be a string or a number, '
                        f"not {describe(new_key)}"
                    ) from None
                if in_source and new_key != key:
                    raise self.error(
                        f'key replacement {new_key} collides with a key in the input map (in "{self.name}")',
                        code="key-collision",
                    )
                if new_key in replaced:
                    raise self.error(
                        f'key replacement {new_key} collides with a key in the output map (in "{self.name}")',
                        code="key-collision",
                    )
            try:
                value = new_values.get(value, value)
            except TypeError:  # a list or map: cannot be looked up, stays as it is
                pass
            replaced[new_key] = value
        return replaced


# -- lists ----------------------------------------------------------------------------
class Filter(Function):
    """``filter: [values, list]``: the list without the given values.

    As in Heat, an empty (or null) list comes back unchanged, whatever its type.
    """

    def validate(self) -> None:
        if not isinstance(self.args, list):
            raise self.error(f'Argument to "{self.name}" must be a list')
        if len(self.args) != 2:
            raise self.error(
                f'"{self.name}" expected 2 arguments of the form [values, sequence] but got '
                f"{len(self.args)} arguments instead"
            )
        self.check(*self.args)

    def check(self, values: Any, sequence: Any) -> None:
        if sequence and not isinstance(sequence, (list, Function)):
            raise self.error(f'"{self.name}" only works with lists, not {describe(sequence)}')
        if sequence and values and not isinstance(values, (list, Function)):
            raise self.error(f'"{self.name}" filters a list of values, not {describe(values)}')

    def result(self) -> Any:
        sequence = resolve(self.args[1])
        if not sequence:
            return sequence
        values = resolve(self.args[0])
        self.check(values, sequence)
        if not values:
            return sequence
        return [item for item in sequence if item not in values]


class ListConcat(Function):
    """``list_concat: [list, list, ...]``: one list; nulls are skipped."""

    unique = False

    def validate(self) -> None:
        if not isinstance(self.args, Function):
            self.check(self.args)

    def check(self, args: Any) -> None:
        if not isinstance(args, list):
            raise self.error(
                f'Incorrect arguments to "{self.name}" should be: '
                f'"{self.name}" : [ [ <value 1>, <value 2> ], [ <value 3>, <value 4> ] ]'
            )
        for item in args:
            if item is not None and not isinstance(item, (list, Function)):
                raise self.error(
                    f"Incorrect arguments: Items to concat must be lists. {show(args)} contains "
                    f'an item that is not a list: {show(item)} (in "{self.name}")'
                )

    def result(self) -> list:
        args = resolve(self.args)
        self.check(args)
        bounded_product(self, 1, measured(args))  # the result is no bigger
        joined = [item for part in args if part for item in part]
        return _unique(joined) if self.unique else joined


class ListConcatUnique(ListConcat):
    """``list_concat_unique``: as ``list_concat``, keeping only the first of equal items."""

    unique = True


def _unique(items: list) -> list:
    """``items`` without repeats, in first-seen order (equality as in Python: 1 == 1.0)."""
    hashable: set = set()
    others: list = []  # maps and lists cannot go in a set
    kept = []
    for item in items:
        try:
            if item in hashable:
                continue
            hashable.add(item)
        except TypeError:
            if item in others:
                continue
            others.append(item)
        kept.append(item)
    return kept


class Contains(Function):
    """``contains: [value, sequence]``: is the value an item of the list (or a
    substring of the string)?"""

    def validate(self) -> None:
        if not isinstance(self.args, list) or not self.args:
            raise self.error(
                f'Incorrect arguments to "{self.name}" should be: '
                f'"{self.name}" : [ "value1", [ "value1", "value2"]]'
            )
        if len(self.args) != 2:
            raise self.error(
                f'Arguments to "{self.name}" must be of the form: [value1, [value1, value2]]'
            )
        self.check(*self.args)

    def check(self, value: Any, sequence: Any) -> None:
        if isinstance(sequence, Function):
            return
        if not isinstance(sequence, (list, str)):
            raise self.error(
                f'Second argument to "{self.name}" should be a sequence, not {describe(sequence)}.'
            )
        if isinstance(sequence, str) and not isinstance(value, (str, Function)):
            raise self.error(
                f'The first argument to "{self.name}" must be a string when the second is a '
                f"string, not {describe(value)}"
            )

    def result(self) -> bool:
        value, sequence = resolve(self.args[0]), resolve(self.args[1])
        self.check(value, sequence)
        return value in sequence
