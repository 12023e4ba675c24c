"""Read-side queries: what ``stack show|list|output|resource|event`` answer, from the store.

Each takes the engine as its first argument and is bound onto ``Engine`` as a method of the
same name (``Engine.show_stack = reads.show_stack``): callers keep one facade, and reading a
stack is written here, apart from running one.
"""

from __future__ import annotations

from typing import Any, Iterable, Protocol

from stoker.engine import resource_filters
from stoker.engine.stack import Stack
from stoker.engine.summaries import event_summary, output_entries, resource_summary, shown_parameters, stack_summary
from stoker.errors import NotFound
from stoker.functions.base import dependencies
from stoker.template.definition import StackDefinition
from stoker.template.parameters import masked


class ReadHost(Protocol):
    """What the queries read through: the store, this project's records and the type registry."""

    store: Any
    project_id: str

    def get_record(self, name_or_id: str, show_deleted: bool = False) -> Any: ...

    def stored_template(self, template_id: int) -> Any: ...

    def defined(self, record: Any, **kwargs: Any) -> Stack: ...

    def runtime(self, record: Any) -> Stack: ...

    def class_or_none(self, type_name: str) -> type | None: ...


def list_stacks(engine: ReadHost, **filters: Any) -> list[dict]:
    return [stack_summary(r) for r in engine.store.list_stacks(engine.project_id, **filters)]


def show_stack(engine: ReadHost, name_or_id: str, resolve_outputs: bool = True) -> dict:
    record = engine.get_record(name_or_id)
    info = stack_summary(record)
    template = engine.stored_template(record.template_id)
    stack = _for_outputs(engine, record)
    info["description"] = (template.content or {}).get("description", "No description")
    info["parameters"] = shown_parameters(stack)
    info["tags"] = record.tags or []
    info["timeout_mins"] = record.timeout_mins
    info["disable_rollback"] = record.disable_rollback
    if resolve_outputs:
        info["outputs"] = output_entries(stack)
    simulated = _simulated_resources(engine, stack, template.content or {})
    if simulated:
        info["simulated_resources"] = simulated
    return info


def _simulated_resources(engine: ReadHost, stack: Stack, content: dict) -> list[str]:
    """The resources whose type is simulated (resources/openstack), from the template's text:
    no row is read and no resource parsed."""
    found = []
    for name, body in (content.get("resources") or content.get("Resources") or {}).items():
        type_name = (body.get("type") or body.get("Type")) if isinstance(body, dict) else None
        if isinstance(type_name, str):
            cls = engine.class_or_none(stack.effective_type(name, type_name))
            if getattr(cls, "simulated", False):
                found.append(name)
    return sorted(found)


def outputs(engine: ReadHost, name_or_id: str) -> list[dict]:
    return output_entries(_for_outputs(engine, engine.get_record(name_or_id)))


def _for_outputs(engine: ReadHost, record) -> Stack:
    """The stack with what its outputs read: its definition (resources parsed as asked) and the
    resources the outputs name, with what those need in turn.  A client polling a big stack's
    state costs a few rows, not a parse of every resource and a read of every row."""
    stack = engine.defined(record, lazy=True)
    if stack.definition is not None:
        wanted = _read_by_outputs(stack.definition)
        stack.load_resources(engine.store.get_resources(record.id, wanted) if wanted else [])
    return stack


def resources(engine: ReadHost, name_or_id: str, nested_depth: int = 0, filters: dict | None = None) -> list[dict]:
    """The stack's resources; with ``nested_depth`` N, those of nested stacks N levels down;
    ``filters``: only those Heat's resource-list filters keep (``resource_filters``)."""
    wanted = resource_filters.checked(filters or {})
    return _tree_rows(engine, engine.get_record(name_or_id), nested_depth,
                      lambda record: [resource_summary(r, record) for r in engine.store.get_resources(record.id)
                                      if resource_filters.matches(r, wanted)])


def _tree_rows(engine: ReadHost, record, depth: int, rows_of) -> list[dict]:
    rows = rows_of(record)
    if depth > 0:
        for child in engine.store.children(record.id):
            if child.deleted_at is None:
                for row in _tree_rows(engine, child, depth - 1, rows_of):
                    row.setdefault("parent_resource", child.owner_resource)
                    rows.append(row)
    return rows


def failures(engine: ReadHost, name_or_id: str) -> list[dict]:
    """Root causes: failed resources, following failed nested stacks down to what broke."""
    record = engine.get_record(name_or_id)
    return _failures(engine, record, prefix="")


def _failures(engine: ReadHost, record, prefix: str) -> list[dict]:
    children = {c.owner_resource: c for c in engine.store.children(record.id) if c.deleted_at is None}
    found = []
    for row in engine.store.get_resources(record.id):
        if row.status != "FAILED":
            continue
        path = f"{prefix}{row.name}"
        nested = children.get(row.name)
        deeper = _failures(engine, nested, path + ".") if nested is not None else []
        if deeper:
            found.extend(deeper)
        else:
            found.append({**resource_summary(row, record), "resource_name": path})
    return found


def resource(engine: ReadHost, name_or_id: str, resource_name: str, with_attr: Iterable[str] = ()) -> dict:
    """One resource, its attributes resolved; ``with_attr`` names more of them to show (Heat's
    ``resource show --with-attr``: any name ``get_attr`` could ask for; one that cannot be
    resolved shows as null)."""
    record = engine.get_record(name_or_id)
    stack = engine.runtime(record)
    resource = stack.resources.get(resource_name)
    if resource is None:
        raise NotFound(f"The Resource ({resource_name}) could not be found in Stack {record.name}.")
    row = next(r for r in engine.store.get_resources(record.id) if r.id == resource.id)
    info = resource_summary(row, record)
    info["attributes"] = _safe(lambda: resource.all_attributes(), {})
    for name in with_attr:
        if name not in info["attributes"]:
            info["attributes"][name] = _safe(lambda name=name: resource.FnGetAtt(name), None)
    if getattr(resource, "simulated", False):
        info["simulated"] = True
    info["metadata"] = row.rsrc_metadata or {}
    info["required_by"] = sorted(n for n, r in stack.resources.items() if resource_name in r.requires)
    return info


def events(engine: ReadHost, name_or_id: str, resource_name: str | None = None, nested_depth: int = 0,
           **paging: Any) -> list[dict]:
    """Events in the order they happened; ``nested_depth`` adds nested stacks' events."""
    record = engine.get_record(name_or_id, show_deleted=True)
    rows = _tree_rows(engine, record, nested_depth, lambda r: [
        event_summary(e, r) for e in engine.store.list_events(r.id, resource_name=resource_name, **paging)])
    if nested_depth:
        rows.sort(key=lambda e: e["event_time"] or "")
    return rows


def template(engine: ReadHost, name_or_id: str) -> dict:
    return engine.stored_template(engine.get_record(name_or_id).template_id).content


def environment(engine: ReadHost, name_or_id: str) -> dict:
    record = engine.get_record(name_or_id)
    env = dict(record.environment or {})
    stack = engine.runtime(record)
    if stack.definition is not None:
        for section in ("parameters", "parameter_defaults"):
            env[section] = masked(stack.definition.parameter_schemas, env.get(section) or {})
    return env


def _read_by_outputs(definition: StackDefinition) -> set[str]:
    """The resources the outputs name, and those these depend on, to the end of every chain."""
    wanted = [name for output in definition.outputs.values() for name in dependencies(output.value)]
    found: set[str] = set()
    while wanted:
        name = wanted.pop()
        if name not in found and name in definition.resources:
            found.add(name)
            wanted.extend(definition.resources[name].dependencies())
    return found


def _safe(fn, default):
    try:
        return fn()
    except Exception:  # attribute resolution of a broken resource must not break `show`
        return default
