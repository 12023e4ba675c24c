"""The attribute schema of a resource plug-in.

Attributes are what ``get_attr`` reads from a created resource.  A plug-in
declares them in ``attributes_schema`` (name -> ``Schema``); every resource
also has ``show`` (all of the physical resource's data).  The type is
informational: it documents the value and lets the engine warn about a
plug-in returning something else; it never rejects a value.
"""

from __future__ import annotations

from typing import Mapping

from stoker.resources.exceptions import InvalidSchemaError
from stoker.resources.support import SupportStatus

SHOW = "show"
#: ``get_attr: [res]`` (no attribute name) asks for all of them; never a real name
ALL_ATTRIBUTES = "*"


class Schema:
    """One attribute: what it means, what type its value has, whether to cache it."""

    TYPES = (UNKNOWN, STRING, MAP, LIST, INTEGER, BOOLEAN, NUMBER) = (
        None,
        "String",
        "Map",
        "List",
        "Integer",
        "Boolean",
        "Number",
    )
    CACHE_MODES = (CACHE_LOCAL, CACHE_NONE) = ("cache_local", "cache_none")

    def __init__(
        self,
        description: str | None = None,
        support_status: SupportStatus | None = None,
        cache_mode: str = CACHE_LOCAL,
        type: str | None = UNKNOWN,
    ):
        if type not in self.TYPES:
            raise InvalidSchemaError(f"Invalid type ({type})")
        if cache_mode not in self.CACHE_MODES:
            raise InvalidSchemaError(f"Invalid cache mode ({cache_mode})")
        self.description = description
        self.support_status = support_status if support_status is not None else SupportStatus()
        self.cache_mode = cache_mode
        self.type = type

    def __repr__(self) -> str:
        return f"attributes.Schema({self.description!r}, type={self.type!r})"


def base_schemata() -> dict[str, Schema]:
    """The attributes every resource has (a plug-in may redefine them)."""
    return {
        SHOW: Schema(
            "Detailed information about resource.", cache_mode=Schema.CACHE_NONE, type=Schema.MAP
        )
    }


def schemata(attributes_schema: Mapping[str, "Schema | str"]) -> dict[str, Schema]:
    """Name -> ``Schema`` for all attributes of a plug-in: ``show`` plus its own.

    Older plug-ins (and the plug-in guide's first example) give a bare
    description string instead of a ``Schema``; it is accepted as one.
    """
    if ALL_ATTRIBUTES in attributes_schema:
        raise InvalidSchemaError(f"Invalid attribute name '{ALL_ATTRIBUTES}'")
    result = base_schemata()
    for name, schema in attributes_schema.items():
        if isinstance(schema, str):
            schema = Schema(schema)
        elif not isinstance(schema, Schema):
            raise InvalidSchemaError(f"Attribute {name}: expected attributes.Schema, got {schema!r}")
        result[name] = schema
    return result
