"""Resource types as ``openstack orchestration resource type list|show`` reads them: the list,
one type's schema, and a template using the type, in Heat's shapes.  The API's
``/resource_types`` routes and ``stoker resource type`` both answer with these."""

from __future__ import annotations

import re
from typing import Any, Callable

from stoker import patterns
from stoker.resources import attributes as attributes_mod
from stoker.resources.properties import AnyIndexDict, schemata
from stoker.resources.support import HIDDEN, SUPPORTED, TEMPLATE_TYPES

#: property type -> HOT parameter type (for generated templates)
PARAMETER_TYPES = {"String": "string", "Integer": "number", "Number": "number", "Boolean": "boolean",
                   "Map": "json", "List": "comma_delimited_list", "Any": "json"}
CFN_TYPES = {"String": "String", "Integer": "Number", "Number": "Number", "Boolean": "String",
             "Map": "Json", "List": "CommaDelimitedList", "Any": "Json"}


def _status(cls: Any) -> Any:
    return getattr(cls, "support_status", None)


def summary(cls: Any) -> str:
    """The first line of a type's docstring."""
    return ((cls.__doc__ or "").strip().splitlines() or [""])[0]


def list_types(registry: Any, name: str | None = None, support_status: str | None = None,
               version: str | None = None, with_description: bool = False,
               usable: Callable[[str, type], bool] | None = None) -> list:
    """Every type not hidden, filtered as Heat filters them (``name`` is a regular expression;
    ``usable``: whether the caller may use the type, as Heat leaves out what its policy forbids
    and what a service missing from the catalogue makes unavailable)."""
    pattern = None
    if name:
        try:
            pattern = patterns.compiled(name)
        except patterns.error:
            pattern = patterns.compiled(re.escape(name))
    found = []
    for type_name in registry.types():
        if pattern is not None and not patterns.search(pattern, type_name, "the resource type name filter"):
            continue
        cls = registry.get(type_name)
        support = _status(cls)
        if support is not None and getattr(support, "status", None) == HIDDEN:
            continue
        if support_status and (getattr(support, "status", SUPPORTED) if support else SUPPORTED) != support_status.upper():
            continue
        if version and (getattr(support, "version", None) if support else None) != version:
            continue
        if usable is not None and not usable(type_name, cls):
            continue
        found.append({"resource_type": type_name, "description": summary(cls)} if with_description
                     else type_name)
    return found


def property_schema(schema: Any) -> dict:
    """One property as Heat's resource type schema shows it."""
    out: dict[str, Any] = {
        "type": schema.type.lower(),
        "description": schema.description or "",
        "required": bool(schema.required),
        "update_allowed": bool(schema.update_allowed),
        "immutable": bool(schema.immutable),
    }
    if schema.default is not None:
        out["default"] = schema.default
    if schema.constraints:
        out["constraints"] = [c.schema_dict() for c in schema.constraints]
    if schema.schema is not None:
        if isinstance(schema.schema, AnyIndexDict):
            out["schema"] = {"*": property_schema(schema.schema.value)}
        else:
            out["schema"] = {str(k): property_schema(v) for k, v in schema.schema.items()}
    return out


def _visible(schema: Any) -> bool:
    """As Heat: a hidden (or unimplemented) property or attribute is not shown."""
    return getattr(schema, "implemented", True) and getattr(schema.support_status, "status", None) != HIDDEN


def _properties(cls: Any) -> dict:
    return {name: s for name, s in schemata(getattr(cls, "properties_schema", {}) or {}).items() if _visible(s)}


def _attributes(cls: Any) -> dict:
    try:
        found = cls.attribute_schemata()
    except AttributeError:
        found = attributes_mod.schemata(getattr(cls, "attributes_schema", {}) or {})
    return {name: a for name, a in found.items() if _visible(a)}


def type_schema(cls: Any, type_name: str, with_description: bool = False) -> dict:
    support = _status(cls)
    result = {
        "resource_type": type_name,
        "properties": {name: property_schema(s) for name, s in _properties(cls).items()},
        "attributes": {name: {"description": a.description or "", **({"type": a.type.lower()} if a.type else {})}
                       for name, a in _attributes(cls).items()},
        "support_status": support.to_dict() if support is not None else
        {"status": SUPPORTED, "message": None, "version": None, "previous_status": None},
    }
    if with_description:
        result["description"] = (cls.__doc__ or "").strip()
    return result


def _parameter_type(schema: Any) -> str:
    kind = PARAMETER_TYPES.get(schema.type, "string")
    if kind == "comma_delimited_list" and schema.schema is not None:
        items = schema.schema.value if isinstance(schema.schema, AnyIndexDict) else None
        if items is None or items.type != "String":
            return "json"
    return kind


def type_template(cls: Any, type_name: str, kind: str = "cfn") -> dict:
    """A template whose parameters feed every property of one resource of the type, and whose
    outputs give every attribute (``kind``: one of ``TEMPLATE_TYPES``)."""
    resource_name = type_name.split("::")[-1] or type_name
    properties = _properties(cls)
    attrs = _attributes(cls)
    if kind == "hot":
        params = {}
        for name, schema in properties.items():
            entry: dict[str, Any] = {"type": _parameter_type(schema), "description": schema.description or ""}
            if schema.default is not None:
                entry["default"] = schema.default
            if schema.constraints:
                entry["constraints"] = [c.schema_dict() for c in schema.constraints]
            params[name] = entry
        template = {
            "heat_template_version": "2016-10-14",
            "description": f"Initial template of {resource_name}",
            "parameters": params,
            "resources": {resource_name: {"type": type_name,
                                          "properties": {n: {"get_param": n} for n in properties}}},
            "outputs": {name: {"description": a.description or "",
                               "value": {"get_attr": [resource_name, name]}} for name, a in attrs.items()},
        }
        template["outputs"]["OS::stack_id"] = {"value": {"get_resource": resource_name}}
        return template
    params = {}
    for name, schema in properties.items():
        entry = {"Type": CFN_TYPES.get(schema.type, "String"), "Description": schema.description or ""}
        if schema.default is not None:
            entry["Default"] = schema.default
        params[name] = entry
    return {
        "HeatTemplateFormatVersion": "2012-12-12",
        "Description": f"Initial template of {resource_name}",
        "Parameters": params,
        "Resources": {resource_name: {"Type": type_name, "Properties": {n: {"Ref": n} for n in properties}}},
        "Outputs": {name: {"Description": a.description or "", "Value": {"Fn::GetAtt": [resource_name, name]}}
                    for name, a in attrs.items() if name != attributes_mod.SHOW},
    }
