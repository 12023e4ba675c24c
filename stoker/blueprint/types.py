"""Type definitions with ``derived_from``: node types, relationships, data types.

Each type is flattened once: its hierarchy (root first) and its properties
and interfaces merged down the chain, the derived type winning per name.
"""

from __future__ import annotations

from typing import Any

from stoker.errors import Problems

TYPE_KEYS = {
    "node_types": {"derived_from", "properties", "interfaces", "description", "metadata"},
    "relationships": {"derived_from", "properties", "source_interfaces", "target_interfaces", "description",
                      "connection_type"},
    "data_types": {"derived_from", "properties", "description", "version"},
}
PROPERTY_KEYS = {"type", "default", "required", "description", "display_label", "hidden", "constraints",
                 "item_type", "display"}


def flatten_types(section: str, types: Any, problems: Problems) -> dict[str, dict]:
    """``{name: {"hierarchy": [...], "properties": {...}, <interfaces>...}}`` for every valid type."""
    if types is None:
        return {}
    if not isinstance(types, dict):
        problems.add((section,), "invalid-section", f"{section} must be a mapping")
        return {}
    flat: dict[str, dict] = {}
    for name, definition in types.items():
        definition = definition if definition is not None else {}
        if not isinstance(definition, dict):
            problems.add((section, name), "invalid-type", "a type definition must be a mapping")
            continue
        problems.unknown_keys((section, name), definition, TYPE_KEYS[section], f" in {section} '{name}'")
        _flatten(section, name, types, flat, problems, [])
    return flat


def _flatten(section: str, name: str, types: dict, flat: dict, problems: Problems, chain: list) -> dict | None:
    if name in flat:
        return flat[name]
    if name in chain:
        problems.add((section, name, "derived_from"), "derivation-loop",
                     f"{' -> '.join(chain + [name])}: a type cannot derive from itself")
        return None
    definition = types.get(name) or {}
    if not isinstance(definition, dict):
        return None
    parent_name = definition.get("derived_from")
    if parent_name is None:
        parent = {"hierarchy": [], "properties": {}, "interfaces": {}, "source_interfaces": {},
                  "target_interfaces": {}}
    elif parent_name not in types:
        problems.add((section, name, "derived_from"), "unknown-type",
                     f"'{name}' derives from '{parent_name}', which is not defined")
        return None
    else:
        parent = _flatten(section, parent_name, types, flat, problems, chain + [name])
        if parent is None:
            return None
    properties = dict(parent["properties"])
    own = definition.get("properties") or {}
    if isinstance(own, dict):
        for prop, schema in own.items():
            if not isinstance(schema, dict):  # Cloudify refuses it, an empty one too (``key:``)
                problems.add((section, name, "properties", prop), "invalid-property-schema",
                             f"Expected 'dict' type but found '{_kind(schema)}' type")
                continue
            problems.unknown_keys((section, name, "properties", prop), schema, PROPERTY_KEYS,
                                  f" in the schema of property '{prop}'")
            properties[prop] = schema
    result = {"hierarchy": parent["hierarchy"] + [name], "properties": properties}
    for key in ("interfaces", "source_interfaces", "target_interfaces"):
        result[key] = merge_interfaces(parent[key], definition.get(key) or {})
    flat[name] = result
    return result


def _kind(value: Any) -> str:
    """A YAML value's kind as Cloudify's messages name it."""
    kinds = {type(None): "null", bool: "boolean", int: "integer", float: "float", str: "string", list: "list"}
    return kinds.get(type(value), type(value).__name__)


def merge_interfaces(base: dict, override: Any) -> dict:
    """Interfaces of a derived type: operations replaced by name, interfaces merged."""
    merged = {name: dict(ops) for name, ops in base.items()}
    if isinstance(override, dict):
        for name, ops in override.items():
            merged.setdefault(name, {}).update(ops if isinstance(ops, dict) else {})
    return merged
