"""Stoker schemas (``properties.Schema``, ``attributes.Schema``, ``SupportStatus``) from one
type's entry in the catalogue, so Heat's types are checked by the same code as Stoker's own."""

from __future__ import annotations

from typing import Any, Mapping

from stoker.constraints import AllowedPattern, AllowedValues, CustomConstraint, Length, Modulo, Range
from stoker.resources import attributes, properties
from stoker.resources.exceptions import InvalidSchemaError
from stoker.resources.support import SupportStatus


def support_status(data: Mapping | None) -> SupportStatus:
    if not data:
        return SupportStatus()
    return SupportStatus(data.get("status", "SUPPORTED"), version=data.get("version"),
                         previous_status=support_status(data["previous_status"])
                         if data.get("previous_status") else None)


def constraint(data: Mapping) -> Any:
    (kind, value), = data.items()
    if kind == "allowed_values":
        return AllowedValues(value)
    if kind == "range":
        return Range(value.get("min"), value.get("max"))
    if kind == "length":
        return Length(value.get("min"), value.get("max"))
    if kind == "modulo":
        return Modulo(value["step"], value["offset"])
    if kind == "allowed_pattern":
        return AllowedPattern(value)
    if kind == "custom_constraint":
        return CustomConstraint(value)
    raise ValueError(f"unknown constraint {kind!r} in the OpenStack schema data")


def property_schema(data: Mapping) -> properties.Schema:
    nested = data.get("schema")
    if nested is not None:
        if data["type"] == properties.Schema.LIST and "*" in nested:
            nested = property_schema(nested["*"])
        else:
            nested = {name: property_schema(item) for name, item in nested.items()}
    default = data.get("default")
    if default is not None and not _default_fits(data["type"], default):
        default = None  # Heat has a few (a list defaulting to {}); reading one would fail there too
    return properties.Schema(
        data["type"],
        default=default,
        schema=nested,
        required=data.get("required", False),
        constraints=[constraint(c) for c in data.get("constraints", ())],
        implemented=data.get("implemented", True),
        update_allowed=data.get("update_allowed", False),
        immutable=data.get("immutable", False),
        support_status=support_status(data.get("support_status")),
    )


def _default_fits(data_type: str, default: Any) -> bool:
    try:
        properties.Schema(data_type, default=default)
    except InvalidSchemaError:
        return False
    return True


def properties_schema(entry: Mapping, section: str = "properties") -> dict[str, properties.Schema]:
    """The schemas of ``section``: the type's properties, or the keys of its ``update_policy``."""
    return properties.Schemata((name, property_schema(data)) for name, data in entry.get(section, {}).items())


def attributes_schema(entry: Mapping) -> dict[str, attributes.Schema]:
    return {name: attributes.Schema(type=data.get("type"), support_status=support_status(data.get("support_status")))
            for name, data in entry.get("attributes", {}).items()}
