"""Stacks to and from the store: a new stack made and saved, a stored one loaded back.

``Engine`` wires these in as its own methods (``new_stack``, ``runtime``, ...):
they are what ``StackHost`` promises a stack and its resources.
"""

from __future__ import annotations

import json
import os
import uuid
from types import SimpleNamespace
from typing import Any, Iterable

from stoker.engine.sealing import stored_inputs
from stoker.engine.stack import Stack
from stoker.errors import NotFound, ValidationFailed
from stoker.template.environment import Environment, RegistryLoop, is_template_type, resolve_type
from stoker.template.loader import paused_gc
from stoker.template.template import Template

IN_PROGRESS = "IN_PROGRESS"
#: stored templates kept in memory at most (``stored_template``)
TEMPLATE_CACHE_SIZE = 256


def new_stack(engine: Any, name: str, parent: Stack | None = None, timeout_mins: int | None = None) -> Stack:
    """A stack not yet stored: define it, then ``save_new_stack``."""
    if parent is not None and parent.depth + 1 > engine.max_nested_depth:
        raise ValidationFailed.single(("resources",), "nesting-too-deep",
                                      f"Recursion depth exceeds {engine.max_nested_depth} "
                                      "(max_nested_stack_depth)")
    return Stack(engine, SimpleNamespace(id=str(uuid.uuid4()), name=name, project_id=engine.project_id,
                                         action="CREATE", status=IN_PROGRESS, status_reason="",
                                         timeout_mins=timeout_mins, deleted_at=None), parent)


def save_new_stack(engine: Any, stack: Stack, tags: Iterable[str] = (), timeout_mins: int | None = None,
                   disable_rollback: bool = True, locked_for: str | None = None) -> None:
    """Store a defined new stack (a top one with its template, in one transaction; a nested one's
    template once per action: ``template_id``); ``locked_for``: the action this engine runs on it
    next, whose lock is taken with the row."""
    template = stack.definition.template
    parameters, environment = stored_inputs(stack, stack.user_parameters, stack.environment.as_dict())
    stored = (template.data, template.files) if stack.parent is None else template_id(engine, stack, template)
    lock = {"lock_owner": engine.engine_id, "lock_action": locked_for} if locked_for else {}
    # the action runs here next: its resources' rows go in with the stack's (``actions.insert_new``)
    new = [stack.instantiate(name, stack.definition.resources[name])
           for name in stack.definition.enabled_resources()] if locked_for else []
    rows = stack.new_rows(new)
    stack.record = engine.store.create_stack_with_template(
        stack.name, stored, engine.project_id, id=stack.id, **lock,
        parent_id=stack.parent.id if stack.parent else None,
        owner_resource=stack.owner_name, environment=environment,
        files=template.files if stack.parent is None else {}, parameters=parameters,
        tags=list(tags), timeout_mins=timeout_mins, disable_rollback=disable_rollback,
        status_reason="Stack CREATE started", resources=rows)
    for resource, row in zip(new, rows):
        resource.id = row["id"]
        stack.resources[resource.name] = resource
    stack.stored_state = (stack.record.action, stack.record.status, stack.record.status_reason)


async def save_nested_stack(engine: Any, stack: Stack) -> None:
    """``save_new_stack`` for a nested stack, on the writer thread; as in Heat it has
    its parent's timeout."""
    await stack.recorder.call(engine.save_new_stack, stack, (), stack.parent.record.timeout_mins)


def stored_template(engine: Any, template_id: int):
    """A stored template; they never change once stored, so each is read once (while the
    cache, shared by every copy of the engine, holds fewer than ``TEMPLATE_CACHE_SIZE``: a
    server creating stacks for days would otherwise keep every template it ever showed)."""
    found = engine.templates_read.get(template_id)
    if found is None:
        if len(engine.templates_read) >= TEMPLATE_CACHE_SIZE:
            engine.templates_read.clear()
        found = engine.templates_read[template_id] = engine.store.get_template(template_id)
    return found


def template_id(engine: Any, stack: Stack, template: Template) -> int:
    """Store a template once per action, however many nested stacks use it.

    The files map is kept with the top stack's template only; nested
    stacks read their parent's.
    """
    if stack.parent is None:
        return engine.store.store_template(template.data, template.files)
    cache = stack.root.template_ids
    key = json.dumps(template.data, sort_keys=True, default=str)
    if key not in cache:
        cache[key] = engine.store.store_template(template.data, {})
    return cache[key]


def check_tree_size(engine: Any, child: Stack) -> None:
    root = child.root
    root.tree_size += len(child.definition.resources)
    if root.tree_size > engine.max_resources:
        raise ValidationFailed.single(("resources",), "too-many-resources",
                                      f"the stack tree would hold more than {engine.max_resources} "
                                      f"resources ({engine.max_resources_setting})")


def runtime(engine: Any, record, parent: Stack | None = None, facade: dict | None = None,
            strict: bool = False, provider_template: str | None = None) -> Stack:
    """A runtime stack from the store: definition (when it still checks) and resources;
    ``provider_template``: the template it was made from, when its owner knows it."""
    with paused_gc():  # everything built here lives as long as the stack
        stack = engine.defined(record, parent, facade, strict, provider_template)
        stack.load_resources()
        return stack


def defined(engine: Any, record, parent: Stack | None = None, facade: dict | None = None,
            strict: bool = False, provider_template: str | None = None, lazy: bool = False) -> Stack:
    """A runtime stack with its stored definition, its resources not loaded yet (``lazy``: their
    definitions parsed when first asked for, see ``build_definition``'s ``stored``)."""
    stack = Stack(engine, record, parent)
    stack.facade = facade or {}
    stack.provider_template = provider_template or provider_template_of(engine, record)
    raw = engine.stored_template(record.template_id)
    files = raw.files or (parent.definition.template.files if parent and parent.definition else {})
    try:
        stack.define(Template(raw.content, files), Environment.from_dict(record.environment),
                     dict(record.parameters or {}), check_resources=strict, stored=lazy and not strict)
    except ValidationFailed:
        if strict:
            raise
        stack.definition = None
    return stack


def db_url_for_others(engine: Any) -> str:
    """The database's URL as another process on this machine can use it: SQLite paths
    absolute, and no password (libpq reads it from PGPASSWORD or ~/.pgpass), so that a
    command line holding it (a wait condition's) gives nothing away."""
    url = engine.store.engine.url.set(password=None)
    if url.drivername.startswith("sqlite") and url.database and url.database != ":memory:":
        url = url.set(database=os.path.abspath(url.database))
    return url.render_as_string(hide_password=False)


def provider_template_of(engine: Any, record) -> str | None:
    """The provider template a nested stack was made from (for its registry look-ups)."""
    if not getattr(record, "parent_id", None) or not getattr(record, "owner_resource", None):
        return None
    try:
        parent = engine.store.get_stack(record.parent_id, record.project_id, show_deleted=True)
    except NotFound:
        return None
    if not (parent.environment or {}).get("resource_registry"):
        return None  # the usual case: nothing is mapped
    owner = Template(engine.stored_template(parent.template_id).content).section("resources").get(
        record.owner_resource)
    rtype = owner.get("type") if isinstance(owner, dict) else None
    if not isinstance(rtype, str):
        return None
    try:
        effective = resolve_type(parent.environment["resource_registry"], record.owner_resource, rtype)
    except RegistryLoop:
        return None
    return effective if is_template_type(effective) else None
