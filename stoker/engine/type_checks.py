"""Type policy and the checks that need resource types, for ``Engine.validate_resources``; and
``Engine.validate_template``/``check_template``: every check a create makes, with no database.

A stack being defined asks its host to check its resources against their plug-ins (unknown
types, properties, attribute names), the project's type policy and the resource limit of the
whole nested tree.  Each function takes the engine first and is bound onto ``Engine`` as a
method of the same name, so the checks live here while callers keep one facade.
"""

from __future__ import annotations

import difflib
from functools import partial
from pathlib import Path
from typing import Any, Iterable, Protocol

from stoker.engine.fanout import Fanout, TooMany
from stoker.engine.stack import Stack
from stoker.errors import FunctionError, Problems, ResourcePending, StokerError, ValidationFailed
from stoker.functions.references import GetAtt
from stoker.functions.sizes import remembering
from stoker.resources.openstack import inventory
from stoker.resources.policy import NOT_ALLOWED
from stoker.template.definition import StackDefinition
from stoker.template.environment import Environment, RegistryLoop
from stoker.template.template import Template, as_template
from stoker.template.verdict import check_attribute_names, check_conditions_in_use


#: the fixed stack id of a template being checked (its pseudo parameters need one)
NIL_UUID = "00000000-0000-0000-0000-000000000000"


class TypeHost(Protocol):
    """What the checks read: the type registry, the policy, this project and the limits."""

    registry: Any
    type_policy: Any
    project_id: str
    max_nested_depth: int
    max_resources: int
    #: the setting a refusal over ``max_resources`` names
    max_resources_setting: str


def validate_template(engine: Any, template: Template | dict | str | Path,
                      environment: Environment | None = None, parameters: dict | None = None,
                      missing_parameters_ok: bool = True, at_validate: bool = False) -> StackDefinition:
    """Every check a create would make, plug-ins included, without touching the database."""
    definition, problems = check_template(engine, template, environment, parameters, missing_parameters_ok,
                                               at_validate)
    if definition is None or problems.errors:
        raise ValidationFailed(problems.items)
    return definition

def check_template(engine: Any, template: Template | dict | str | Path,
                   environment: Environment | None = None, parameters: dict | None = None,
                   missing_parameters_ok: bool = True,
                   at_validate: bool = False) -> tuple[StackDefinition | None, Problems]:
    """Like ``validate_template``, but returns what it found instead of raising.

    The definition comes back even when there are errors, when the
    template was good enough to build one (``resolve`` still evaluates it).
    ``at_validate`` gives Heat's verdict: what Heat checks only at create
    (resources' property values, their plug-ins' own checks) is a warning.
    """
    stack = engine.new_stack("stack")
    stack.id = stack.record.id = NIL_UUID  # checking has no stack yet: fixed pseudo parameters
    stack.at_validate = at_validate
    try:
        definition = stack.define(as_template(template), environment or Environment(),
                                  dict(parameters or {}), missing_parameters_ok=missing_parameters_ok)
    except ValidationFailed as exc:
        return stack.definition, Problems(exc.problems + exc.warnings)
    if at_validate:
        check_conditions_in_use(definition, definition.problems)
        check_attribute_names(definition, definition.problems)
    return definition, definition.problems


def validate_resources(engine: TypeHost, stack: Stack, definition, problems: Problems) -> None:
    """Checks that need resource types: unknown types, properties, attribute names."""
    if stack.parent is None and not check_fanout(engine, stack, definition, problems):
        return  # nested stacks are not checked one by one: there are too many
    # one look at the cloud inventory, and one read of the value size limit, for every value checked
    with inventory.pinned(), remembering():
        instances = _check_each(engine, stack, definition, problems)
    for fn in definition.resource_calls:
        if isinstance(fn, GetAtt):
            target = fn.static_resource_name()
            attribute = fn.attribute_name()
            instance = instances.get(target)
            if instance is not None and attribute is not None and not instance.has_attribute(attribute):
                close = difflib.get_close_matches(str(attribute), list(instance.attribute_schemata()), n=1)
                problems.add(fn.path, "unknown-attribute",
                             f'The Referenced Attribute ({target} {attribute}) is incorrect: '
                             f"{definition.resources[target].type} has no attribute {attribute!r}"
                             + (f'; did you mean "{close[0]}"?' if close else ""))


def _check_each(engine: TypeHost, stack: Stack, definition, problems: Problems) -> dict:
    """Each resource against its type: policy, plug-in, properties; name -> the instance made."""
    instances = {}
    unchecked: dict[str, list[tuple]] = {}  # service constraint -> the places of values it could not check
    verdicts = inventory.Verdicts()  # custom constraints' verdicts and the walk's plans (the inventory is pinned)
    for name, rdef in definition.resources.items():
        if not rdef.type or definition.switched_off(rdef):
            continue  # the missing or broken type is reported already; Heat never builds a disabled one
        refusal = type_refusal(engine, (rdef.type,), None)
        if refusal:  # policy first, as Heat: a listed type is refused before it is looked up
            problems.add(("resources", name, "type"), NOT_ALLOWED, refusal)
            continue
        try:
            instances[name] = stack.instantiate(name, rdef)
        except RegistryLoop as exc:
            problems.add(("resources", name, "type"), "registry-loop",
                         f"resource_registry mappings loop: {exc}")
            continue
        except StokerError as exc:
            problems.add(("resources", name, "type"), getattr(exc, "code", "error"), str(exc))
            continue
        refusal = type_refusal(engine, (rdef.type, stack.effective_type(name, rdef.type)), type(instances[name]))
        if refusal:
            problems.add(("resources", name, "type"), NOT_ALLOWED, refusal)
            continue
        missing = inventory.unavailable(type(instances[name]), rdef.type)
        if missing:
            problems.add(("resources", name, "type"), inventory.UNAVAILABLE, missing)
            continue
        if name in stack.unchanged:
            continue  # checked when stored, with the same definition and inputs
        if rdef.external_id is not None:
            continue  # as Heat: an existing resource is adopted as it is, its properties unchecked
        at_once = instances[name].checked_at_once  # (most types: None) one pass that finds nothing wrong
        places = at_once(verdicts) if at_once is not None else None
        if places is None:  # the generic checks, which report what is wrong
            shape = _found_by(instances[name].validate_shape, name)
            problems.extend(shape.items)
            values = _found_by(instances[name].validate_template, name).items
            if shape.items:  # what the shape check found is not reported again
                found = {(p.path, p.code) for p in shape.items}
                values = [p for p in values if (p.path, p.code) not in found]
            if stack.at_validate:
                problems.extend_as_create_time(values)
            else:
                problems.extend(values)
            walk = getattr(instances[name], "unchecked_constraints", None)
            places = walk(verdicts) if walk is not None else ()
        for place, constraint in places:
            unchecked.setdefault(constraint, []).append(place)
    for constraint, places in unchecked.items():
        problems.warn(places[0], "unchecked-constraint",
                      f'{len(places)} value(s) of "{constraint}" not checked: no cloud inventory '
                      f"(--inventory) lists them; the first is here")
    return instances


def check_fanout(engine: TypeHost, stack: Stack, definition, problems: Problems) -> bool:
    """Types and resource counts of the nested stacks to come, checked before any is made;
    False when the tree is over the resource limit (counted only that far)."""
    walk = Fanout(stack.environment.resource_registry, definition.template.files, partial(class_or_none, engine),
                  partial(type_refusal, engine), engine.max_nested_depth, most=engine.max_resources)
    try:
        walk.count(definition.template.data, dict(definition.parameters))
        over = None
    except TooMany as exc:
        over = exc.at_least
    for path, why in walk.refused:
        problems.add(path, NOT_ALLOWED, f"in a nested stack: {why}")
    if over is None:
        return True
    problems.add(("resources",), "too-many-resources",
                 f"the stack and its nested stacks would hold at least {over} resources, "
                 f"more than the limit of {engine.max_resources} ({engine.max_resources_setting})")
    return False


def class_or_none(engine: TypeHost, type_name: str) -> type | None:
    return engine.registry.get(type_name) if type_name in engine.registry else None


def type_refusal(engine: TypeHost, type_names: Iterable[str], cls: type | None) -> str | None:
    """Why this engine's project may not use a resource type, if the policy says so."""
    if engine.type_policy is None:
        return None
    return engine.type_policy.refusal(type_names, cls, engine.project_id)


def _found_by(check, name: str) -> Problems:
    """What one of a resource's checks finds wrong, each problem at its place."""
    found = Problems()
    try:
        check()
    except ResourcePending:
        return found  # the value waits for another resource: create checks it once it is known
    except ValidationFailed as exc:
        found.extend(exc.problems)
    except FunctionError as exc:
        found.add(exc.path or ("resources", name), exc.code, exc.message)
    except (StokerError, ValueError, TypeError) as exc:
        found.add(("resources", name), "resource-validation-failed", str(exc))
    return found
