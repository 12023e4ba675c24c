"""A simulated resource's checks in one pass: one Python function per type and set of given keys.

Validation reads each resource three times (its shape, its values, the values no service
constraint could check) through generic code that dispatches on every schema and value: a
template of a thousand OpenStack resources spent most of its time in calls.  Here, for a type
and the keys a resource gives (resources of one type mostly give the same few), one function is
written as source and compiled (as fastjsonschema does for JSON Schema): the shape is settled
when it is written (every key known, none required left out, no rename that applies), and each
value's check is inline code for its schema (its type, its constraints, a call waiting for a
resource).  The function is a predicate: it answers the places of the values no service
constraint could check when it finds nothing wrong, and None at the first thing it does not
handle or finds wrong; then the generic checks run and report it.  So the answers are the
generic path's by construction; this path only has to be right when it says "nothing wrong".
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, Callable

from stoker.constraints import AllowedPattern, AllowedValues, CustomConstraint, Length, Modulo, Range
from stoker.functions.base import SCALAR_TYPES, Function, resolve_call
from stoker.resources import properties
from stoker.resources.openstack import renames as renames_mod
from stoker.resources.openstack.inventory import SKIPPED
from stoker.resources.properties import AnyIndexDict, Schema, Schemata

#: how many sets of given keys one type (or nested schema) keeps a function for
_KEY_SETS_KEPT = 256
#: the exact types of a literal a property of each type takes as it is (see ``properties``)
_TAKEN_AS_IS = {
    Schema.STRING: (str,),
    Schema.INTEGER: (int,),
    Schema.NUMBER: (int, float),
    Schema.BOOLEAN: (bool,),
    Schema.ANY: (str, int, float, bool),
}

#: a check: (data, path, resource, verdicts) -> the unchecked places [(place, name)], or None
Check = Callable[[dict, tuple, Any, Mapping], "list | None"]


def never(data: dict, path: tuple, resource: Any, verdicts: Mapping) -> None:
    """The check of a set of keys this pass does not handle: always the generic path."""
    return None


def checker(schemas: Schemata, keys: tuple, among: frozenset | None, kept: dict,
            rules: tuple = ()) -> Check:
    """The check of ``keys`` given to ``schemas`` (kept in ``kept``; past a bound, none): ``among``
    the keys whose unchecked values are noted (None: all); ``rules``, Heat's renames (data
    that one of them would change takes the generic path)."""
    found = kept.get(keys)
    if found is None:
        if len(kept) >= _KEY_SETS_KEPT:
            return never  # writing one costs more than the generic checks save
        found = kept[keys] = _Writer(schemas, keys, among, rules).function()
    return found


def nested_checker(schemas: Schemata, keys: tuple) -> Check:
    """The check of a map nested in a property (a list's item, a map with a schema)."""
    return checker(schemas, keys, None, _kept(schemas))


def _kept(schemas: Schemata) -> dict:
    """The checks of a nested schema, per set of keys (kept on it: the code looks them up itself)."""
    kept = schemas.__dict__.get("one_pass")
    if kept is None:
        kept = schemas.one_pass = {}
    return kept


class _Unhandled(Exception):
    """Raised while writing: this set of keys always takes the generic path."""


class _Writer:
    """The source of one check, and the objects its code names."""

    def __init__(self, schemas: Schemata, keys: tuple, among: frozenset | None, rules: tuple):
        self.schemas, self.keys, self.among, self.rules = schemas, keys, among, rules
        self.lines: list[str] = []
        #: given key -> the old names a rename would move out of its list's items
        self.moved: dict[str, list] = {}
        self.names: dict[str, Any] = {"SCALAR_TYPES": SCALAR_TYPES, "Function": Function,
                                      "resolve_call": resolve_call, "nested_checker": nested_checker,
                                      "may_hold": renames_mod.may_hold}
        self.count = 0

    def function(self) -> Check:
        try:
            self._body()
        except _Unhandled:
            return never
        source = "def check(data, path, resource, verdicts):\n    notes = []\n"
        source += "".join(f"    {line}\n" for line in self.lines) + "    return notes\n"
        scope = dict(self.names)
        exec(compile(source, f"<one pass: {', '.join(map(str, self.keys))}>", "exec"), scope)  # noqa: S102
        check = scope["check"]
        check.source = source  # for tests and whoever debugs one
        return check

    def name(self, value: Any, hint: str = "k") -> str:
        """A name the code uses for ``value`` (an object made once, when the check is written)."""
        self.count += 1
        name = f"{hint}{self.count}"
        self.names[name] = value
        return name

    def _body(self) -> None:
        schemas = self.schemas
        for key in self.keys:
            schema = schemas.get(key) if type(key) is str else None
            if schema is None or not schema.implemented:
                raise _Unhandled  # an unknown key: the shape check reports it
        given = set(self.keys)
        for old, new in self.rules:
            if old[0] in given:
                if len(old) == 1:
                    raise _Unhandled  # a deprecated name given: renamed by the generic path
                if len(old) == len(new) == 2 and old[0] == new[0] and _items_are_maps(schemas[old[0]]):
                    self.moved.setdefault(old[0], []).append(old[1])  # tested in the item loop
                    continue
                self.lines.append(f"if may_hold(data, {self.name(old, 'r')}, {self.name(new, 'r')}):")
                self.lines.append("    return None")
        for key, schema in schemas.items():
            if key not in given and (schema.required or (schema.default is not None and not schema.default_checked)):
                self._absent(schema)
        for i, key in enumerate(self.keys):
            self._given(key, schemas[key], i)

    def _absent(self, schema: Schema) -> None:
        """A property left out that is still checked: its default, when only custom constraints
        (the others were checked with the schema) may refuse it."""
        if schema.required or schema.schema is not None:
            raise _Unhandled
        value = properties._CONVERTERS[schema.type](schema, copy.deepcopy(schema.default))
        for constraint in schema.constraints:
            if isinstance(constraint, CustomConstraint):
                self._custom(constraint, self.name(value, "d"), self.lines, "")

    def _given(self, key: str, schema: Schema, index: int) -> None:
        value, place = f"v{index}", f"path + ({key!r},)"
        out = self.lines
        out.append(f"{value} = data[{key!r}]")
        out.append(f"kind = type({value})")
        if self.among is None or key in self.among:
            self._notes(schema, value, place, out, "")
        self._value(schema, value, place, out, "", self.moved.get(key, ()))

    # -- the places no service constraint checks (``inventory.unchecked_places``) ------------
    def _notes(self, schema: Schema, value: str, place: str, out: list, pad: str) -> None:
        """Note ``value``'s place for each unchecked custom constraint of ``schema``, unless it is
        a call (its value is checked, or not, when known); a nested list's or map's are noted by
        the item checks, in the same order as the generic walk."""
        if not schema.custom_names:
            return
        out.append(f"{pad}if kind in SCALAR_TYPES or kind is dict or kind is list or Function not in kind.__mro__:")
        for name in schema.custom_names:
            out.append(f"{pad}    if verdicts[{name!r}]:")
            out.append(f"{pad}        notes.append(({place}, {name!r}))")

    # -- values ------------------------------------------------------------------------------
    def _value(self, schema: Schema, value: str, place: str, out: list, pad: str, moved: tuple = ()) -> None:
        """Code that checks ``value`` (its exact type in ``kind``) against ``schema``; ``moved``:
        old names its items may not hold (a rename would move them: the generic path)."""
        if schema.schema is not None:
            self._nested(schema, value, place, out, pad, moved)
        elif schema.type in _TAKEN_AS_IS:
            self._scalar(schema, value, out, pad)
        else:
            self._plain_container(schema, value, out, pad)
        self._call(schema, value, out, pad)

    def _scalar(self, schema: Schema, value: str, out: list, pad: str) -> None:
        branch = "if"
        for kind in _TAKEN_AS_IS[schema.type]:
            out.append(f"{pad}{branch} kind is {kind.__name__}:")
            self._constraints(schema, value, kind, out, pad + "    ")
            branch = "elif"
        if schema.type == Schema.STRING:  # as ``_to_string``: a number or boolean gives its text
            out.append(f"{pad}elif kind is int or kind is bool:")
            out.append(f"{pad}    text = str({value})")
            self._constraints(schema, "text", str, out, pad + "    ")

    def _plain_container(self, schema: Schema, value: str, out: list, pad: str) -> None:
        """A map or list without a nested schema, given as a literal: of plain values (checked),
        or holding a call that waits for a resource (the whole value is checked once it exists)."""
        kind, items = ("dict", f"{value}.values()") if schema.type == Schema.MAP else ("list", value)
        out.append(f"{pad}if kind is {kind}:")
        out.append(f"{pad}    plain = True")
        out.append(f"{pad}    for item in {items}:")
        out.append(f"{pad}        kind = type(item)")
        out.append(f"{pad}        if kind not in SCALAR_TYPES:")
        out.append(f"{pad}            if kind is not dict and kind is not list and Function in kind.__mro__ "
                   "and item.has_refs and item.waits():")
        out.append(f"{pad}                break")
        out.append(f"{pad}            plain = False")
        out.append(f"{pad}    else:")
        out.append(f"{pad}        if not plain:")
        out.append(f"{pad}            return None")
        self._constraints(schema, value, list if kind == "list" else dict, out, pad + "        ")

    def _nested(self, schema: Schema, value: str, place: str, out: list, pad: str, moved: tuple) -> None:
        """A list whose items share one schema, or a map with a schema of its keys."""
        nested = schema.schema
        if schema.constraints:
            raise _Unhandled
        if schema.type == Schema.MAP and isinstance(nested, Schemata):
            out.append(f"{pad}if kind is dict:")
            out.append(f"{pad}    found = {self._lookup(nested, value)}({value}, {place}, resource, verdicts)")
            out.append(f"{pad}    if found is None:")
            out.append(f"{pad}        return None")
            out.append(f"{pad}    notes += found")
            return
        if schema.type != Schema.LIST or not isinstance(nested, AnyIndexDict) or not nested.value.implemented:
            raise _Unhandled
        item = nested.value
        out.append(f"{pad}if kind is list:")
        out.append(f"{pad}    for i, item in enumerate({value}):")
        inner, place = pad + "        ", f"{place} + (i,)"
        out.append(f"{inner}kind = type(item)")
        self._notes(item, "item", place, out, inner)
        if item.schema is None and item.type in _TAKEN_AS_IS:
            self._scalar(item, "item", out, inner)
            out.append(f"{inner}else:")
            out.append(f"{inner}    return None")  # (a call among the items: the generic path)
        elif item.schema is not None and item.type == Schema.MAP and isinstance(item.schema, Schemata) \
                and not item.constraints:
            out.append(f"{inner}if kind is not dict{''.join(f' or {old!r} in item' for old in moved)}:")
            out.append(f"{inner}    return None")
            out.append(f"{inner}found = {self._lookup(item.schema, 'item')}(item, {place}, resource, verdicts)")
            out.append(f"{inner}if found is None:")
            out.append(f"{inner}    return None")
            out.append(f"{inner}notes += found")
        else:
            raise _Unhandled

    def _lookup(self, schemas: Schemata, value: str) -> str:
        """An expression giving the check of the map ``value`` (kept per set of keys)."""
        kept, named = self.name(_kept(schemas), "kept"), self.name(schemas, "s")
        return f"({kept}.get(keys := tuple({value})) or nested_checker({named}, keys))"

    def _call(self, schema: Schema, value: str, out: list, pad: str) -> None:
        """The value is a call: one waiting for a resource not made yet is checked once it is
        (as Heat does); one naming none is resolved, and its result checked if it is of a type
        the property takes as it is (a map or list without a nested schema: a map or list);
        anything else is not handled here."""
        out.append(f"{pad}elif kind is not dict and kind is not list and Function in kind.__mro__:")
        out.append(f"{pad}    if {value}.has_refs:")
        out.append(f"{pad}        if not {value}.waits():")
        out.append(f"{pad}            return None")
        if schema.schema is None and schema.type in _TAKEN_AS_IS:
            out.append(f"{pad}    else:")
            out.append(f"{pad}        result = resolve_call({value})")
            out.append(f"{pad}        kind = type(result)")
            self._scalar(schema, "result", out, pad + "        ")
            out.append(f"{pad}        else:")
            out.append(f"{pad}            return None")
        elif schema.schema is None:  # a map or list: its result is plain data, converted as it is
            kind = dict if schema.type == Schema.MAP else list
            out.append(f"{pad}    else:")
            out.append(f"{pad}        result = resolve_call({value})")
            out.append(f"{pad}        if type(result) is not {kind.__name__}:")
            out.append(f"{pad}            return None")
            self._constraints(schema, "result", kind, out, pad + "        ")
        else:
            out.append(f"{pad}    else:")
            out.append(f"{pad}        return None")
        out.append(f"{pad}else:")
        out.append(f"{pad}    return None")

    # -- constraints ---------------------------------------------------------------------------
    def _constraints(self, schema: Schema, value: str, kind: type, out: list, pad: str) -> None:
        """Code that returns None unless ``value`` (of exact type ``kind``) meets every constraint
        of ``schema`` (each test is the constraint's own, written inline for the plain kinds)."""
        start = len(out)
        for constraint in schema.constraints:
            if isinstance(constraint, CustomConstraint):
                self._custom(constraint, value, out, pad)
                continue
            test = _inline_test(constraint, value, kind)
            if test is None:  # any other: the constraint's own check
                test = f"{self.name(constraint, 'c')}.problem({value}, resource) is not None"
            else:
                test = test.format(**{hint: self.name(obj, hint) for hint, obj in _objects(constraint).items()})
            out.append(f"{pad}if {test}:")
            out.append(f"{pad}    return None")
        if len(out) == start:
            out.append(f"{pad}pass")

    def _custom(self, constraint: CustomConstraint, value: str, out: list, pad: str) -> None:
        """A custom constraint: its check, unless this pass knows it accepts every value."""
        out.append(f"{pad}if verdicts[{constraint.name!r}] != {SKIPPED} and "
                   f"{self.name(constraint, 'c')}.problem({value}, resource) is not None:")
        out.append(f"{pad}    return None")


def _items_are_maps(schema: Schema) -> bool:
    """Is ``schema`` a list of maps with a schema (the lists ``_nested`` walks item by item)?"""
    nested = schema.schema
    return (schema.type == Schema.LIST and isinstance(nested, AnyIndexDict) and nested.value.implemented
            and nested.value.type == Schema.MAP and isinstance(nested.value.schema, Schemata)
            and not nested.value.constraints and not schema.constraints)


def _objects(constraint: Any) -> dict:
    """What an inline test names: the allowed values, the bounds, the pattern."""
    if isinstance(constraint, AllowedValues):
        return {"matches": constraint._matches}
    if isinstance(constraint, AllowedPattern):
        return {"accepts": constraint.accepts}
    if isinstance(constraint, Modulo):
        return {"step": constraint.step, "offset": constraint.offset}
    return {"low": getattr(constraint, "min", None), "high": getattr(constraint, "max", None)}


def _inline_test(constraint: Any, value: str, kind: type) -> str | None:
    """A test true when ``value`` of exact type ``kind`` breaks ``constraint``, as the
    constraint's ``problem`` decides (None: no inline form; the constraint is asked)."""
    number = kind is int or kind is float
    if isinstance(constraint, AllowedValues) and kind is not list:
        return f"{value} not in {{matches}}"
    if isinstance(constraint, (Range, Length)) and (number if isinstance(constraint, Range) else kind is str):
        measure = value if isinstance(constraint, Range) else f"len({value})"
        bounds = [f"{measure} >= {{low}}" if constraint.min is not None else "",
                  f"{measure} <= {{high}}" if constraint.max is not None else ""]
        return f"not ({' and '.join(b for b in bounds if b)})"
    if isinstance(constraint, Modulo) and number:
        return f"{value} % {{step}} != {{offset}}"
    if isinstance(constraint, AllowedPattern) and kind is str:
        return f"not {{accepts}}({value})"
    return None
