"""What a create would make, without making it (Heat's ``POST /stacks/preview``).

Each resource, in the order a create would start them, with its properties
resolved as far as they can be before anything exists (defaults filled in;
``get_resource`` of another resource gives its name, as Heat's preview does; an attribute
of one is null), its attributes (all null: nothing
exists yet) and what it requires and is required by.  As in Heat, a nested
stack's place holds the list of its own resources, previewed the same way
under the name ``<stack>-<resource>``; a value a nested stack gets from such a name is not
checked against the cloud (Heat validates nested stacks without their values: strict_validate off).
"""

from __future__ import annotations

from typing import Any

from stoker.engine import actions
from stoker.resources.nested_stack import NestedStackResource
from stoker.engine.stack import Stack
from stoker.errors import ResourcePending, StokerError
from stoker.resources import attributes


def preview_resources(stack: Stack, parent_resource: str | None = None) -> list:
    """The entries of ``stack`` (defined, not stored); a nested stack's are a list in its place."""
    definition = stack.definition
    definition.context.previewing = True
    stack.previewing = True
    enabled = definition.enabled_resources()
    order = actions.dependency_graph(stack, set(enabled)).order()
    requires = {name: sorted(d for d in enabled[name].dependencies() if d in enabled) for name in enabled}
    entries: list = []
    for name in order:
        resource = stack.instantiate(name, enabled[name])
        nested = _nested(resource) if isinstance(resource, NestedStackResource) else None
        if nested is not None:
            entries.append(nested)
            continue
        entry = {
            "resource_name": name, "resource_type": enabled[name].type, "stack_name": stack.name,
            "description": enabled[name].description or "", "properties": _properties(resource),
            "attributes": {a: None for a in resource.attribute_schemata() if a != attributes.SHOW},
            "requires": requires[name],
            "required_by": sorted(n for n, needs in requires.items() if name in needs),
        }
        if parent_resource is not None:
            entry["parent_resource"] = parent_resource
        entries.append(entry)
    return entries


def _properties(resource: Any) -> dict:
    values = {}
    for key in resource.properties:
        try:
            values[key] = resource.properties[key]
        except ResourcePending:
            values[key] = None
    return values


def _nested(resource: NestedStackResource) -> list | None:
    """The nested stack's entries; None while its template or inputs wait for other resources."""
    try:
        probe = resource.define_probe(resource.child_template(), resource.child_parameters(),
                                      name=f"{resource.stack.name}-{resource.name}")
    except (ResourcePending, StokerError):
        return None
    return preview_resources(probe, resource.name)
