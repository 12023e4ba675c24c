"""Typed values: the primitive types, data types (with defaults and required properties) and constraints."""

from __future__ import annotations

import copy
from typing import Any, Callable

from stoker import patterns
from stoker.blueprint.blueprint_errors import BlueprintError
from stoker.blueprint.functions.base import function_of
from stoker.blueprint.functions.table import FUNCTIONS

PRIMITIVES = ("string", "integer", "float", "boolean", "list", "dict", "regex", "textarea")
#: names of manager objects an input may hold; Stoker checks them as strings
MANAGER_TYPES = ("secret_key", "deployment_id", "blueprint_id", "node_id", "node_type", "node_instance",
                 "capability_value", "scaling_group", "operation_name", "tenant", "plugin", "workflow")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


_CHECKS: dict[str, Callable[[Any], bool]] = {
    # Cloudify's string takes any value (a number, even a mapping): so does Stoker's
    "string": lambda v: True,
    "integer": _is_int,
    "float": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "list": lambda v: isinstance(v, list),
    "dict": lambda v: isinstance(v, dict),
    "regex": lambda v: isinstance(v, str),
    "textarea": lambda v: isinstance(v, str),
}


def known_type(name: Any, data_types: dict) -> bool:
    return name is None or name in PRIMITIVES or name in MANAGER_TYPES or name in data_types


def schema_default(definition: dict, data_types: dict) -> tuple[bool, Any]:
    """``(True, default)`` if a property schema gives a value when none is given: its default, or for a
    data type without one an empty mapping that the type's own defaults fill (as Cloudify does)."""
    if definition.get("default") is not None:
        return True, definition["default"]
    if definition.get("type") in data_types:
        return True, {}
    return False, None


def typed_value(value: Any, type_name: str | None, data_types: dict, what: str) -> Any:
    """``value`` checked against ``type_name``; a data type's value comes back with its defaults filled in.
    A function is checked when it is known, as in Cloudify: not at all (its siblings still are)."""
    if type_name is None or value is None or function_of(value, FUNCTIONS):
        return value
    if type_name in data_types:
        return _data_type_value(value, type_name, data_types, what)
    check = _CHECKS.get(type_name)
    if check and not check(value):
        raise BlueprintError(f"{what}: the type is '{type_name}', but the value is {value!r}", code="wrong-type")
    return value


def _data_type_value(value: Any, type_name: str, data_types: dict, what: str) -> dict:
    if not isinstance(value, dict):
        raise BlueprintError(f"{what}: a value of data type '{type_name}' must be a mapping, not {value!r}",
                             code="wrong-type")
    schema = data_types[type_name]["properties"]
    for key in value:
        if key not in schema:
            raise BlueprintError(f"{what}: undefined property '{key}' (data type '{type_name}')",
                                 code="unknown-property")
    result = {}
    for key, definition in schema.items():
        if key in value:
            result[key] = typed_value(value[key], definition.get("type"), data_types, f"{what}.{key}")
        elif schema_default(definition, data_types)[0]:
            default = copy.deepcopy(schema_default(definition, data_types)[1])
            result[key] = typed_value(default, definition.get("type"), data_types, f"{what}.{key}")
        elif definition.get("required", True):
            raise BlueprintError(f"{what}: missing property '{key}' (data type '{type_name}')",
                                 code="missing-property")
    return result


# -- constraints ------------------------------------------------------------------------------

def _length(value: Any) -> int:
    if not isinstance(value, (str, list, dict)):
        raise TypeError
    return len(value)


def _pattern(value: Any, pattern: str) -> bool:
    """The author's pattern is matched within ``max_pattern_seconds`` (``stoker.patterns``)."""
    return isinstance(value, str) and patterns.fullmatch(pattern, value, "pattern") is not None


CONSTRAINTS: dict[str, Callable[[Any, Any], bool]] = {
    "equal": lambda v, a: v == a,
    "greater_than": lambda v, a: v > a,
    "greater_or_equal": lambda v, a: v >= a,
    "less_than": lambda v, a: v < a,
    "less_or_equal": lambda v, a: v <= a,
    "in_range": lambda v, a: a[0] <= v <= a[1],
    "valid_values": lambda v, a: v in a,
    "length": lambda v, a: _length(v) == a,
    "min_length": lambda v, a: _length(v) >= a,
    "max_length": lambda v, a: _length(v) <= a,
    "pattern": _pattern,
}


#: constraints Cloudify checks against the manager's objects (inputs of the object types); Stoker
#: checks ``name_pattern`` on the name given and takes the others as written
DATA_BASED = ("name_pattern", "filter_id", "labels", "tenants", "deployment_id", "blueprint_id")
NAME_PATTERN: dict[str, Callable[[str, str], bool]] = {
    "contains": lambda v, a: a in v, "starts_with": str.startswith, "ends_with": str.endswith,
    "equals_to": lambda v, a: v == a,
}


def constraint_problem(constraint: Any) -> str | None:
    """What is wrong with one constraint definition, or None."""
    operators = {k: v for k, v in constraint.items() if k != "error_message"} if isinstance(constraint, dict) else {}
    if len(operators) != 1 or not isinstance(constraint.get("error_message", ""), str):
        return (f"a constraint is a mapping of one operator to its argument (and an error_message), "
                f"not {constraint!r}")
    (operator, argument), = operators.items()
    if operator in DATA_BASED:
        return _data_based_problem(operator, argument)
    if operator not in CONSTRAINTS:
        return f"no such constraint operator '{operator}' (allowed: {', '.join([*CONSTRAINTS, *DATA_BASED])})"
    if operator == "in_range" and not (isinstance(argument, list) and len(argument) == 2):
        return f"in_range takes a list [min, max], not {argument!r}"
    if operator == "valid_values" and not isinstance(argument, list):
        return f"valid_values takes a list, not {argument!r}"
    if operator in ("length", "min_length", "max_length") and not (_is_int(argument) and argument >= 0):
        return f"{operator} takes a non-negative integer, not {argument!r}"
    if operator == "pattern":
        try:
            patterns.compiled(argument)
        except (patterns.error, TypeError):
            return f"pattern takes a regular expression, not {argument!r}"
    return None


def check_input_constraints(name: str, value: Any, definition: dict) -> None:
    """An input's constraints on its value; on each item of a list with an ``item_type``, as
    Cloudify checks them (an empty list meets any)."""
    constraints = definition.get("constraints") or []
    if definition.get("type") == "list" and definition.get("item_type") and isinstance(value, list):
        for item in value:
            check_constraints(name, item, constraints)
    else:
        check_constraints(name, value, constraints)


def check_constraints(name: str, value: Any, constraints: list) -> None:
    for constraint in constraints or ():
        (operator, argument), = ((k, v) for k, v in constraint.items() if k != "error_message")
        try:
            ok = _name_matches(value, argument) if operator == "name_pattern" else \
                operator in DATA_BASED or CONSTRAINTS[operator](value, argument)
        except TypeError:
            ok = False
        except patterns.PatternTimeout as exc:
            raise BlueprintError(f"input {name}'s constraint {exc}", f"inputs.{name}",
                                 code=exc.code) from None
        if not ok:
            shown = ", ".join(map(str, argument)) if operator == "in_range" else argument
            reason = f"is invalid. {constraint['error_message']}" if constraint.get("error_message") else \
                f"violates constraint {operator}({shown})"
            raise BlueprintError(f"value {value} of input {name} {reason}", f"inputs.{name}",
                                 code="constraint-violated")


def _data_based_problem(operator: str, argument: Any) -> str | None:
    if operator == "name_pattern":
        if not isinstance(argument, dict) or not argument or set(argument) - set(NAME_PATTERN):
            return f"name_pattern takes a mapping of {', '.join(NAME_PATTERN)}, not {argument!r}"
        return None
    wanted = list if operator in ("labels", "tenants") else str
    if not isinstance(argument, wanted):
        return f"{operator} takes a {wanted.__name__}, not {argument!r}"
    return None


def _name_matches(value: Any, pattern: dict) -> bool:
    """A manager object's name against ``name_pattern``: every given test must hold."""
    return isinstance(value, str) and all(NAME_PATTERN[test](value, str(text)) for test, text in pattern.items())
