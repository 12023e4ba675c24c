"""``NestedParameters`` of Heat's ``/validate?show_nested=true``: the parameters of each nested
stack the template would make (a group: one member), recursively, as Heat shows them."""

from __future__ import annotations

from typing import Any

from stoker.resources.nested_stack import NestedStackResource
from stoker.errors import StokerError
from stoker.template.environment import Environment
from stoker.template.template import Template


def nested_parameters(engine: Any, template: Template, environment: Environment, values: dict) -> dict:
    """Resource name -> ``{Type, Description, Parameters[, ParameterGroups][, NestedParameters]}``."""
    stack = engine.new_stack("validate")
    try:
        stack.define(template, environment, values, check_resources=False, missing_parameters_ok=True)
    except StokerError:
        return {}
    return _of_stack(engine, stack)


def _of_stack(engine: Any, stack: Any) -> dict:
    result = {}
    for name, definition in stack.definition.resources.items():
        try:
            resource = stack.instantiate(name, definition)
            if not isinstance(resource, NestedStackResource):
                continue
            template, given = resource.validation_template(), _given(resource)
            child = engine.new_stack(f"{stack.name}-{name}", parent=stack)
            child.define(template, resource.child_environment(), given, check_resources=False,
                         missing_parameters_ok=True)
        except (StokerError, ValueError, TypeError, KeyError):
            continue  # what cannot be known before create (a value from a resource) is not shown
        entry: dict[str, Any] = {
            "Type": definition.type,
            "Description": template.description,
            "Parameters": {key: {**schema.as_validate_output(mask_hidden=False),
                                 **({"Value": given[key]} if given.get(key) not in (None, "") else {})}
                           for key, schema in child.definition.parameter_schemas.items()},
        }
        if template.section("parameter_groups"):
            entry["ParameterGroups"] = template.section("parameter_groups")
        deeper = _of_stack(engine, child)
        if deeper:
            entry["NestedParameters"] = deeper
        result[name] = entry
    return result


def _given(resource: NestedStackResource) -> dict:
    """The values the resource passes down; none where they cannot be known yet or do not fit
    the nested template (Heat shows its parameters all the same, without a ``Value``)."""
    try:
        return resource.child_parameters()
    except (StokerError, ValueError, TypeError, KeyError):
        return {}
