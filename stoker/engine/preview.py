"""What an update would do, resource by resource, without doing it (``update --dry-run``).

Each resource is ``added``, ``deleted``, ``replaced``, ``updated`` or
``unchanged``.  As in Heat, a nested stack is always ``updated``; with
``show_nested`` its own resources are previewed too, each entry naming its
``parent_resource``, and the resources under a nested stack that goes away
are all ``deleted``.

A resource whose own definition is unchanged still changes when it reads
(``get_attr``) a resource that is updated or replaced, or names
(``get_resource``) one that is replaced.  Heat's preview leaves these out as
"unchanged"; ``add_knock_on_changes`` lists them under ``updated`` as "may
change", with the reason, following the chain (a reader of a resource that
may change may change too).
"""

from __future__ import annotations

from typing import Any, Iterable

from stoker.engine import actions
from stoker.resources.nested_stack import NestedStackResource
from stoker.engine.host import StackHost
from stoker.engine.stack import Stack
from stoker.errors import ResourcePending, StokerError
from stoker.functions.base import functions_in
from stoker.functions.references import GetAtt, GetResource

KINDS = ("added", "deleted", "replaced", "updated", "unchanged")
#: how a change of the resource read reaches its reader, by the function reading it
REACHES = {GetAtt: ("replaced", "updated"), GetResource: ("replaced",)}


def preview_update(engine: StackHost[Stack], old: Stack, probe: Stack, show_nested: bool = False) -> dict:
    """``probe`` is the stack defined with the new inputs; ``old``, the stack as it is."""
    plan: dict[str, list] = {kind: [] for kind in KINDS}
    _preview(engine, old, probe, plan, None, show_nested)
    return plan


def _entry(stack: Stack, name: str, rtype: str, parent: str | None, reason: str = "") -> dict:
    entry = {"resource_name": name, "resource_type": rtype, "stack_name": stack.name, "stack_id": stack.id}
    if parent is not None:
        entry["parent_resource"] = parent
    if reason:
        entry["reason"] = reason
    return entry


def _preview(engine: StackHost[Stack], old: Stack, probe: Stack, plan: dict, parent: str | None,
             show_nested: bool) -> None:
    new_names = set(probe.definition.enabled_resources())
    for name in sorted(new_names):
        rdef = probe.definition.resources[name]
        current = old.resources.get(name)
        if current is None or actions.needs_recreate(current):
            plan["added"].append(_entry(old, name, rdef.type, parent))
            continue
        if actions.implementation_changes(probe, current, rdef):
            plan["replaced"].append(_entry(old, name, rdef.type, parent, f"type changes from {current.type()}"))
            _deleted_below(current, plan, show_nested)
            continue
        try:
            update = current.plan_update(rdef, current.build_properties(rdef.properties))
        except ResourcePending as exc:
            plan["updated"].append(_entry(old, name, rdef.type, parent, f"may change: depends on {exc.resource}"))
            continue
        if update is not None and update.replace:
            plan["replaced"].append(_entry(old, name, rdef.type, parent, "changing " + ", ".join(update.forcing)
                                           + " requires replacement"))
            _deleted_below(current, plan, show_nested)
        elif isinstance(current, NestedStackResource):
            plan["updated"].append(_entry(old, name, rdef.type, parent, "a nested stack is always updated"))
            if show_nested:
                _preview_child(engine, current, probe.instantiate(name, rdef), plan)
        elif update is None:
            plan["unchanged"].append(_entry(old, name, rdef.type, parent))
        else:
            plan["updated"].append(_entry(old, name, rdef.type, parent,
                                          "changes " + ", ".join(update.prop_diff or update.tmpl_diff)))
    for name, resource in sorted(old.resources.items()):
        if name not in new_names:
            plan["deleted"].append(_entry(old, name, resource.type(), parent))
            _deleted_below(resource, plan, show_nested)


def _preview_child(engine: StackHost[Stack], current: NestedStackResource, new: NestedStackResource,
                   plan: dict) -> None:
    child = current.child()
    if child is None:
        return
    try:
        template, parameters = new.child_template(), new.child_parameters()
        probe = Stack(engine, child.record, parent=new.stack)
        probe.define(template, new.child_environment(), parameters)
    except (StokerError, ResourcePending):  # not knowable before the update runs
        return
    probe.resources = child.resources
    _preview(engine, child, probe, plan, current.name, True)


def _deleted_below(resource: Any, plan: dict, show_nested: bool) -> None:
    """Every resource under a nested stack that goes away."""
    if not show_nested or not isinstance(resource, NestedStackResource):
        return
    child = resource.child()
    if child is None:
        return
    for name, member in sorted(child.resources.items()):
        plan["deleted"].append(_entry(child, name, member.type(), resource.name))
        _deleted_below(member, plan, show_nested)


def add_knock_on_changes(plan: dict[str, list], definition, order: Iterable[str]) -> None:
    """Move ``unchanged`` entries of ``plan`` that read a changing resource to ``updated``.

    ``order`` names the new definition's resources, those read first.
    """
    top = lambda entry: "parent_resource" not in entry  # noqa: E731 - nested stacks' entries aside
    change = {entry["resource_name"]: kind for kind in ("replaced", "updated")
              for entry in plan[kind] if top(entry)}
    unchanged = {entry["resource_name"]: entry for entry in plan["unchanged"] if top(entry)}
    for name in order:
        entry = unchanged.get(name)
        if entry is None:
            continue
        reason = _reason(definition.resources[name], change)
        if reason is not None:
            del unchanged[name]
            change[name] = "updated"
            plan["updated"].append({**entry, "reason": reason})
    plan["unchanged"] = [entry for entry in plan["unchanged"]
                         if not top(entry) or entry["resource_name"] in unchanged]
    plan["updated"].sort(key=lambda entry: entry["resource_name"])


def _reason(rdef, change: dict[str, str]) -> str | None:
    """Why ``rdef`` may change (the first changing resource it reads), or None."""
    for section in (rdef.properties, rdef.metadata):
        for call in functions_in(section):
            kinds = next((k for cls, k in REACHES.items() if isinstance(call, cls)), ())
            target = call.static_resource_name() if kinds else None
            if target is None or change.get(target) not in kinds:
                continue
            read = f"{call.name} {target}"
            if isinstance(call, GetAtt):
                read += f".{call.attribute_name() or '*'}"
            what = "is replaced" if change[target] == "replaced" else "changes"
            return f"may change: it reads {read}, and {target} {what}"
    return None
