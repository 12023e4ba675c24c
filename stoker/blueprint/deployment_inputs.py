"""Deployment inputs: given values, defaults, data types and constraints, checked by name."""

from __future__ import annotations

import json
from typing import Any

from stoker.blueprint.blueprint_errors import BlueprintError, InputError
from stoker.blueprint.functions.base import holds_function
from stoker.blueprint.functions.table import FUNCTIONS
from stoker.blueprint.values import check_input_constraints, typed_value


def deployment_inputs(definitions: dict, given: dict | None, data_types: dict) -> dict:
    """The inputs a deployment gets; ``InputError`` naming the input when one is wrong."""
    given = dict(given or {})
    unknown = [name for name in given if name not in definitions]
    if unknown:
        raise InputError(f"unknown inputs {unknown} given; the blueprint declares {list(definitions)}",
                         code="unknown-input")
    values: dict[str, Any] = {}
    missing = []
    for name, definition in definitions.items():
        type_name = definition.get("type")
        if name in given:
            value = given[name]
            try:
                json.dumps(value)
            except (TypeError, ValueError):
                raise InputError(f"input {name} is not a JSON value", f"inputs.{name}") from None
        elif definition.get("default") is not None:
            value = definition["default"]
        elif type_name in data_types and _defaults_only(type_name, data_types):
            value = {}
        elif definition.get("required", True):
            missing.append(name)
            continue
        else:
            values[name] = None
            continue
        if holds_function(value, FUNCTIONS):  # evaluated where it is read (get_input), as in Cloudify
            if definition.get("constraints"):
                raise InputError(f"Input value {value} of input {name} cannot contain an intrinsic function and "
                                 "also have constraints.", f"inputs.{name}", code="function-with-constraints")
            values[name] = value
            continue
        try:
            values[name] = typed_value(value, type_name, data_types, f"input {name}")
            check_input_constraints(name, value, definition)
        except BlueprintError as exc:
            if definition.get("hidden"):  # the message would show the value
                raise InputError(f"input {name} (hidden) does not fit its type or constraints", f"inputs.{name}",
                                 code=exc.code) from None
            raise InputError(exc.message, f"inputs.{name}", code=exc.code) from None
    if missing:
        raise InputError(f"required inputs {missing} were not given (the blueprint declares {list(definitions)})",
                         code="missing-input")
    return values


def _defaults_only(type_name: str, data_types: dict) -> bool:
    """A data type whose every required property has a default can be built from nothing."""
    try:
        typed_value({}, type_name, data_types, "")
    except BlueprintError:
        return False
    return True
