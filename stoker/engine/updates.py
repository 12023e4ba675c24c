"""A stack's update as the user asks it: the inputs it keeps or replaces, the checks, the preview.

``update_stack`` works out the new template, parameters and environment
(Heat's PATCH keeps the stored ones), stops a create or update still running
(as Heat's convergence), and hands the update to the dispatcher, which holds
the lease while ``prepare_update`` checks and stores the new definition;
the walk itself, and what follows its failure, is ``running``'s (or the
workers').
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable

from stoker.engine import actions, drift
from stoker.engine.sealing import stored_inputs
from stoker.engine.stack import Stack
from stoker.engine.stored_stacks import template_id
from stoker.errors import Conflict, ValidationFailed
from stoker.template.environment import Environment
from stoker.template.template import Template, as_template

COMPLETE = "COMPLETE"
#: as Heat's convergence, an update takes over from these actions (stopped, not rolled back)
PREEMPTED_BY_UPDATE = ("CREATE", "UPDATE")


def update_stack(engine: Any, name_or_id: str, template: Template | dict | str | Path | None = None,
                 environment: Environment | None = None, parameters: dict | None = None,
                 existing: bool = False, disable_rollback: bool | None = None,
                 timeout_mins: int | None = None, dry_run: bool = False,
                 show_nested: bool = False, clear_parameters: Iterable[str] = (),
                 tags: Iterable[str] | None = None, converge: bool = False) -> dict:
    """Update a stack; ``dry_run`` only previews it (nested stacks too with ``show_nested``).
    With ``existing``, ``clear_parameters`` go back to their defaults (Heat's PATCH);
    ``tags``, when given, replace the stack's; ``converge`` also puts right the resources
    whose live state drifted from what was applied (``engine/drift.py``)."""
    record = engine.get_record(name_or_id)
    if (record.action, record.status) == ("SUSPEND", COMPLETE):
        raise Conflict(f"Updating stack {record.name} while it is suspended is not supported; "
                       "resume it first")
    if template is None:
        if not existing:
            raise ValidationFailed.single((), "missing-template",
                                          "give a new template, or --existing to keep the current one")
        old_raw = engine.store.get_template(record.template_id)
        template = Template(old_raw.content, old_raw.files)
    template = as_template(template)
    if existing:
        cleared = set(clear_parameters)
        params = {k: v for k, v in (record.parameters or {}).items() if k not in cleared}
        params.update(parameters or {})
        if environment is None:
            environment = Environment.from_dict(record.environment)
            for section in (environment.parameters, environment.parameter_defaults):
                for key in cleared:
                    section.pop(key, None)
        params = declared_only(template, params, environment)
    else:
        params = dict(parameters or {})
    environment = environment or Environment()
    if dry_run:
        return preview_update(engine, record, template, environment, params, show_nested)
    rollback = not (record.disable_rollback if disable_rollback is None else disable_rollback)
    if record.lock_action in PREEMPTED_BY_UPDATE:
        record = engine.stop_running_action(record)
    stack = engine.dispatch.update(engine, record, lambda: engine.prepare_update(
        record, template, environment, params, disable_rollback=not rollback, timeout_mins=timeout_mins,
        converge=converge), rollback)
    if tags is not None:  # the update was taken (a refused one raised)
        engine.store.update_stack(record.id, tags=list(tags))
    return engine.summary(stack)


def prepare_update(engine: Any, record, template: Template, environment: Environment, params: dict,
                   disable_rollback: bool, timeout_mins: int | None = None,
                   parent: Stack | None = None, facade: dict | None = None,
                   converge: bool = False) -> tuple[Stack, Stack]:
    """Check the new definition against the old stack and store it; returns (new, old).
    ``converge``: every resource goes through the update, its live state observed first."""
    old = engine.runtime(record, parent=parent, facade=facade)
    stack = Stack(engine, record, parent)
    stack.facade = facade or {}
    stack.validates_nested = parent is None  # a nested stack's update was checked with its parent's
    stack.define(template, environment, params, previous=old)
    check_immutable(old, stack)
    stack.adopt_resources(old)
    if converge:
        stack.unchanged = frozenset()
        drift.observe(engine.store, stack.resources)
    stored_params, stored_env = stored_inputs(stack, params, environment.as_dict())
    engine.store.update_stack(record.id, template_id=template_id(engine, stack, template),
                              previous_template_id=record.template_id,
                              parameters=stored_params, environment=stored_env,
                              files=template.files if parent is None else {},
                              updated_at=datetime.now(timezone.utc),
                              timeout_mins=timeout_mins or record.timeout_mins,
                              disable_rollback=disable_rollback)
    return stack, old


def prepare_child_update(engine: Any, child: Stack, template: Template, environment: Environment,
                         params: dict) -> tuple[Stack, Stack]:
    """``prepare_update`` of a nested stack, within its parent's update."""
    # read the row again: an earlier update in this action (a batch) changed its template
    record = engine.store.get_stack(child.id, engine.project_id, show_deleted=True)
    return engine.prepare_update(record, template, environment, params, disable_rollback=True,
                                 parent=child.parent, facade=child.facade)


def preview_update(engine: Any, record, template: Template, environment: Environment, params: dict,
                   show_nested: bool = False) -> dict:
    """What the update would do, changing nothing (``update_stack``'s ``dry_run``)."""
    from stoker.engine.preview import add_knock_on_changes, preview_update as preview

    old = engine.runtime(record)
    probe = Stack(engine, record)
    probe.define(template, environment, params)
    probe.resources = old.resources
    plan = preview(engine, old, probe, show_nested)
    add_knock_on_changes(plan, probe.definition,
                         actions.dependency_graph(probe, set(probe.definition.enabled_resources())).order())
    return plan


def declared_only(template: Template, params: dict, environment: Environment) -> dict:
    """As Heat's PATCH update: the parameter values (kept from before or given) that the
    new template does not declare are dropped, from the environment's too."""
    declared = set(template.section("parameters"))
    for name in environment.parameters.keys() - declared:
        del environment.parameters[name]
    return {name: value for name, value in params.items() if name in declared}


def check_immutable(old: Stack, new: Stack) -> None:
    if old.definition is None:
        return
    changed = [name for name, schema in new.definition.parameter_schemas.items()
               if getattr(schema, "immutable", False) and name in old.definition.parameters
               and old.definition.parameters.get(name) != new.definition.parameters.get(name)]
    if changed:
        raise ValidationFailed.single(("parameters",), "immutable-parameter",
                                      "The following parameters are immutable and may not be updated: "
                                      + ", ".join(changed))
