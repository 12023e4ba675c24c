"""Dict-form imports: ``- plugin:NAME: {property: value}`` sets the imported plugins' properties.

Cloudify (DSL 1.5) checks each value against the plugin YAML's ``properties``
schema and refuses a property the plugins do not declare.
"""

from __future__ import annotations

from typing import Any

from stoker.blueprint.functions.base import holds_function
from stoker.blueprint.functions.table import FUNCTIONS
from stoker.errors import Problem

_TYPES = {"string": (str, int), "integer": (int,), "float": (int, float), "boolean": (bool,), "list": (list,)}


def split_entry(entry: Any, version: tuple[int, int] | None, where: str) -> tuple[str | None, dict, Problem | None]:
    """``(url, properties, problem)`` of one entry of ``imports``."""
    if isinstance(entry, str):
        return entry, {}, None
    if not (isinstance(entry, dict) and len(entry) == 1 and isinstance(next(iter(entry)), str)
            and isinstance(next(iter(entry.values())), (dict, type(None)))):
        return None, {}, Problem(("imports",), "invalid-imports",
                                 f"an import is a path or a single-entry mapping of a path to properties, "
                                 f"not {entry!r}", where)
    (url, properties), = entry.items()
    if version is not None and version < (1, 5):
        return None, {}, Problem(("imports",), "version-too-old",
                                 f"import properties not supported in version cloudify_dsl_1_{version[1]}, "
                                 "it was added in cloudify_dsl_1_5", where)
    return url, properties or {}, None


def apply(document: dict, properties: dict, where: str) -> list[str]:
    """Set ``properties`` on the plugins of an imported ``document``; what is wrong, as Cloudify says it."""
    if not properties:
        return []
    plugins = document.get("plugins") if isinstance(document.get("plugins"), dict) else {}
    errors, used = [], set()
    for plugin in plugins.values():
        schema = plugin.get("properties") if isinstance(plugin, dict) else None
        if not isinstance(schema, dict):
            continue
        for name, definition in schema.items():
            if name not in properties or not isinstance(definition, dict):
                continue
            used.add(name)
            value, wanted = properties[name], definition.get("type", "string")
            if isinstance(value, _TYPES.get(wanted, object)) or holds_function(value, FUNCTIONS):
                definition["value"] = value
            else:
                errors.append(f"Property {name}: value '{value}' should be of type {wanted}")
    redundant = [name for name in properties if name not in used]
    if redundant:
        errors.append(f"Properties for imported plugin are redundant: {redundant}, consider updating import lines")
    return errors
