"""``stoker.Engine``: the Python API that the CLI (and later the REST API) wrap.

Each public method is one user-level operation.  Actions take the stack's
lock (one action per stack across processes), run one asyncio event loop
for the walk, persist everything through the store, and release the lock.
"""

from __future__ import annotations

import copy
import json
import os
import re
import threading
import uuid
from datetime import datetime, timezone
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Iterable

from stoker.dispatch.inprocess import InProcess
from stoker.engine import actions, reads, running, signals, type_checks
from stoker.engine.actions import HOOKS_CLEARED_KEY
from stoker.engine.progress import Progress
from stoker.engine.sealing import stored_inputs, stored_resource_fields
from stoker.engine.stack import Stack
from stoker.engine.summaries import output_entries, stack_summary
from stoker.lease import StackLease
from stoker.errors import Conflict, NotFound, Problems, StaleWrite, ValidationFailed
from stoker.limits import limit
from stoker.names import stack_name_error
from stoker.resources import registry
from stoker.store.locks import new_engine_id
from stoker.template.environment import Environment, RegistryLoop, is_template_type, resolve_type
from stoker.template.loader import check_nesting, paused_gc
from stoker.template.definition import StackDefinition
from stoker.template.verdict import check_attribute_names, check_conditions_in_use
from stoker.template.template import Template

IN_PROGRESS, COMPLETE, FAILED = "IN_PROGRESS", "COMPLETE", "FAILED"
NIL_UUID = "00000000-0000-0000-0000-000000000000"
#: one thread at a time opens a store (engines may be shared between threads)
_OPENING = threading.Lock()
#: how often a hook's clear is tried again when the resource's row changed under it
HOOK_CLEAR_ATTEMPTS = 10
#: as Heat's convergence, an update takes over from these actions (stopped, not rolled back)
PREEMPTED_BY_UPDATE = ("CREATE", "UPDATE")


class Engine:
    """Runs stacks on one database (SQLite by default, PostgreSQL by URL)."""

    def __init__(self, db_url: str | None = None, plugin_dirs: Iterable[str] = (),
                 project_id: str = "default", store: Any = None, dispatch: Any = None):
        self._store = store
        #: where actions run: here (``InProcess``) or on workers (``stoker.dispatch``)
        self.dispatch = dispatch or InProcess()
        self._db_url = db_url
        self.project_id = project_id
        self.engine_id = new_engine_id()
        self.registry = registry.default_registry(list(plugin_dirs))
        self.plugin_problems = list(self.registry.problems)
        #: Heat's max_nested_stack_depth, and a cap on resources in one tree of stacks
        self.max_nested_depth = int(os.environ.get("STOKER_MAX_NESTED_DEPTH", 5))
        self.max_resources = limit("max_resources")
        #: the setting a refusal over ``max_resources`` names (the API's is another)
        self.max_resources_setting = "max_resources"
        #: where a Heat-compatible API serves this engine (``http://host:port``), set by
        #: ``stoker api``; None when the engine runs in the ``stoker`` command
        self.api_url: str | None = None
        #: how long a delete waits for a cancelled action to let the stack go
        self.stop_timeout = float(os.environ.get("STOKER_STOP_TIMEOUT", 60))
        self._templates: dict[int, Any] = {}
        #: who watches this process's actions (the CLI's --wait display)
        self.progress = Progress()
        #: which resource types a project may use (resources/policy.py); None: any (the CLI)
        self.type_policy = None
        #: set when the server stops: running actions are handed back (shared by copies)
        self.stopping = threading.Event()
        #: set when the request waiting for this copy's action stopped waiting (``api/runner.py``):
        #: the action stops at its next template check
        self.given_up = threading.Event()

    @property
    def store(self):
        """The database, opened on first use (checking a template needs none)."""
        if self._store is None:
            with _OPENING:
                if self._store is None:
                    from stoker.store.db import open_store  # SQLAlchemy: imported only when needed

                    with paused_gc():  # the driver and dialect modules it imports all live on
                        self._store = open_store(self._db_url)
        return self._store

    @property
    def store_open(self) -> bool:
        """Has the database been opened (checks that only may read it do not open it)?"""
        return self._store is not None

    def validate_template(self, template: Template | dict | str | Path,
                          environment: Environment | None = None, parameters: dict | None = None,
                          missing_parameters_ok: bool = True, at_validate: bool = False) -> StackDefinition:
        """Every check a create would make, plug-ins included, without touching the database."""
        definition, problems = self.check_template(template, environment, parameters, missing_parameters_ok,
                                                   at_validate)
        if definition is None or problems.errors:
            raise ValidationFailed(problems.items)
        return definition

    def check_template(self, template: Template | dict | str | Path,
                       environment: Environment | None = None, parameters: dict | None = None,
                       missing_parameters_ok: bool = True,
                       at_validate: bool = False) -> tuple[StackDefinition | None, Problems]:
        """Like ``validate_template``, but returns what it found instead of raising.

        The definition comes back even when there are errors, when the
        template was good enough to build one (``resolve`` still evaluates it).
        ``at_validate`` gives Heat's verdict: what Heat checks only at create
        (resources' property values, their plug-ins' own checks) is a warning.
        """
        stack = self.new_stack("stack")
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

    @property
    def blueprints(self):
        """Blueprints of this project; ``.deployments`` and ``.secrets`` hang off it."""
        from stoker.blueprint.service import BlueprintService

        return BlueprintService(self.store, self.project_id)

    @property
    def snapshots(self):
        """Snapshots of this project's stacks: take, list, show, restore, delete."""
        from stoker.engine.snapshots import Snapshots

        return Snapshots(self)

    @property
    def executions(self):
        """Workflow executions on this project's deployments (install, uninstall, scale, heal, ...)."""
        from stoker.workflows.service import Executions

        return Executions(self.store, self.project_id, self.engine_id, self.dispatch)

    def for_project(self, project_id: str) -> "Engine":
        """The same engine (store, plug-ins) acting for another project."""
        other = copy.copy(self)
        other.project_id = project_id
        return other

    def db_url_for_others(self) -> str:
        """The database's URL as another process on this machine can use it: SQLite paths
        absolute, and no password (libpq reads it from PGPASSWORD or ~/.pgpass), so that a
        command line holding it (a wait condition's) gives nothing away."""
        url = self.store.engine.url.set(password=None)
        if url.drivername.startswith("sqlite") and url.database and url.database != ":memory:":
            url = url.set(database=os.path.abspath(url.database))
        return url.render_as_string(hide_password=False)

    def close(self) -> None:
        if self._store is not None:
            self._store.close()

    # -- resource types -----------------------------------------------------------------
    def resource_class(self, type_name: str) -> type:
        return self.registry.get(type_name)

    validate_resources = type_checks.validate_resources
    check_fanout = type_checks.check_fanout
    class_or_none = type_checks.class_or_none
    type_refusal = type_checks.type_refusal

    # -- reading (``reads.py``; the shapes clients see: ``summaries.py``) ----------------------
    def get_record(self, name_or_id: str, show_deleted: bool = False):
        return self.store.get_stack(name_or_id, self.project_id, show_deleted=show_deleted)

    list_stacks = reads.list_stacks
    show_stack = reads.show_stack
    outputs = reads.outputs
    resources = reads.resources
    failures = reads.failures
    resource = reads.resource
    events = reads.events
    template = reads.template
    environment = reads.environment

    # -- actions ------------------------------------------------------------------------
    # -- stacks in the making ---------------------------------------------------------
    def new_stack(self, name: str, parent: Stack | None = None, timeout_mins: int | None = None) -> Stack:
        """A stack not yet stored: define it, then ``save_new_stack``."""
        if parent is not None and parent.depth + 1 > self.max_nested_depth:
            raise ValidationFailed.single(("resources",), "nesting-too-deep",
                                          f"Recursion depth exceeds {self.max_nested_depth} "
                                          "(max_nested_stack_depth)")
        return Stack(self, SimpleNamespace(id=str(uuid.uuid4()), name=name, project_id=self.project_id,
                                           action="CREATE", status=IN_PROGRESS, status_reason="",
                                           timeout_mins=timeout_mins, deleted_at=None), parent)

    def save_new_stack(self, stack: Stack, tags: Iterable[str] = (), timeout_mins: int | None = None,
                       disable_rollback: bool = True) -> None:
        template = stack.definition.template
        parameters, environment = stored_inputs(stack, stack.user_parameters, stack.environment.as_dict())
        stack.record = self.store.create_stack(
            stack.name, self._template_id(stack, template), self.project_id, id=stack.id,
            parent_id=stack.parent.id if stack.parent else None,
            owner_resource=stack.owner_name, environment=environment,
            files=template.files if stack.parent is None else {}, parameters=parameters,
            tags=list(tags), timeout_mins=timeout_mins, disable_rollback=disable_rollback,
            status_reason="Stack CREATE started")

    async def save_nested_stack(self, stack: Stack) -> None:
        """``save_new_stack`` for a nested stack, on the writer thread; as in Heat it has
        its parent's timeout."""
        await stack.recorder.call(self.save_new_stack, stack, (), stack.parent.record.timeout_mins)

    def stored_template(self, template_id: int):
        """A stored template; they never change once stored, so each is read once."""
        found = self._templates.get(template_id)
        if found is None:
            found = self._templates[template_id] = self.store.get_template(template_id)
        return found

    def _template_id(self, stack: Stack, template: Template) -> int:
        """Store a template once per action, however many nested stacks use it.

        The files map is kept with the top stack's template only; nested
        stacks read their parent's.
        """
        if stack.parent is None:
            return self.store.store_template(template.data, template.files)
        cache = stack.root.template_ids
        key = json.dumps(template.data, sort_keys=True, default=str)
        if key not in cache:
            cache[key] = self.store.store_template(template.data, {})
        return cache[key]

    def check_tree_size(self, child: Stack) -> None:
        root = child.root
        root.tree_size += len(child.definition.resources)
        if root.tree_size > self.max_resources:
            raise ValidationFailed.single(("resources",), "too-many-resources",
                                          f"the stack tree would hold more than {self.max_resources} "
                                          f"resources ({self.max_resources_setting})")

    # -- actions ------------------------------------------------------------------------
    def create_stack(self, name: str, template: Template | dict | str | Path,
                     environment: Environment | None = None, parameters: dict | None = None,
                     timeout_mins: int | None = None, disable_rollback: bool = True,
                     tags: Iterable[str] = (), dry_run: bool = False,
                     adopted_data: dict | None = None) -> dict:
        """Create a stack; ``adopted_data`` (Heat's adopt, the stack's action then ADOPT) gives
        resources their physical ids, stored data and metadata back."""
        if error := stack_name_error(name):
            raise ValidationFailed.single(("stack_name",), "invalid-stack-name", error)
        stack = self.new_stack(name, timeout_mins=timeout_mins)
        stack.adopted_data = dict(adopted_data or {})
        stack.validates_nested = True
        definition = stack.define(as_template(template), environment or Environment(), dict(parameters or {}))
        if dry_run:
            order = actions.dependency_graph(stack, set(definition.enabled_resources())).order()
            return {"stack_name": name, "resources": [
                {"resource_name": n, "resource_type": definition.resources[n].type, "action": "CREATE"}
                for n in order]}
        self.save_new_stack(stack, tags, timeout_mins, disable_rollback)
        action = "CREATE" if adopted_data is None else "ADOPT"
        self.dispatch.create(self, stack, timeout_mins, disable_rollback, action)
        return self._result(stack)

    def export_stack(self, name_or_id: str) -> dict:
        """Heat's export: everything needed to adopt the stack elsewhere."""
        from stoker.engine.exported import export

        return export(self, self.get_record(name_or_id))

    def abandon_stack(self, name_or_id: str) -> dict:
        """Heat's abandon: the export data; the stack is forgotten, nothing it made is deleted."""
        from stoker.engine.exported import abandon

        return abandon(self, self.get_record(name_or_id))

    def adopt_stack(self, name: str, data: Any, environment: Environment | None = None,
                    parameters: dict | None = None, timeout_mins: int | None = None) -> dict:
        """Heat's adopt: a stack made from abandon ``data`` (a map or its JSON text), taking over
        what it lists instead of making it again."""
        from stoker.engine.exported import adopt_data, adopted_resource_data, adoption_template

        data = adopt_data(data)
        template = Template(adoption_template(data), data.get("files") or {})
        environment = environment or Environment.from_dict(data.get("environment") or {})
        return self.create_stack(name, template, environment, parameters, timeout_mins=timeout_mins,
                                 tags=data.get("tags") or (), adopted_data=adopted_resource_data(data))

    def preview_stack(self, name: str, template: Template | dict | str | Path,
                      environment: Environment | None = None, parameters: dict | None = None) -> list:
        """Heat's create preview: each resource as a create would make it (``create_preview``)."""
        from stoker.engine.create_preview import preview_resources

        stack = self.new_stack(name)
        stack.validates_nested = True
        stack.define(as_template(template), environment or Environment(), dict(parameters or {}))
        return preview_resources(stack)

    def _result(self, stack: Stack) -> dict:
        """What an action returns: the stack as stored, with outputs from the live stack."""
        info = stack_summary(self.store.get_stack(stack.id, self.project_id, show_deleted=True))
        info["outputs"] = output_entries(stack)
        return info

    def delete_stack(self, name_or_id: str) -> dict:
        """Delete the stack; an action running on it (a create, say) is cancelled first, as in Heat,
        and its snapshots go first (as Heat's delete_all_snapshots)."""
        record = self.get_record(name_or_id)
        self.snapshots.forget(record.id)
        self.dispatch.delete(self, record)
        return stack_summary(self.store.get_stack(record.id, self.project_id, show_deleted=True))

    def stop_running_action(self, record):
        """Cancel (without rollback) the action a live engine runs on the stack, and wait
        until it has let the stack go; returns the stack as it is then."""
        stopped = StackLease(self.store, record.id).stop_holder(
            record, self.engine_id, lambda: self.get_record(record.id), self.stop_timeout)
        if stopped is None:
            raise Conflict(f"Stack {record.name} already has an action ({record.lock_action}) in progress, "
                           f"and it did not stop within {self.stop_timeout:g} seconds of being cancelled")
        return stopped

    def suspend_stack(self, name_or_id: str) -> dict:
        return self._simple(name_or_id, "SUSPEND")

    def resume_stack(self, name_or_id: str) -> dict:
        return self._simple(name_or_id, "RESUME")

    def check_stack(self, name_or_id: str) -> dict:
        return self._simple(name_or_id, "CHECK")

    def _simple(self, name_or_id: str, action: str) -> dict:
        record = self.get_record(name_or_id)
        self.dispatch.simple(self, record, action)
        return self.show_stack(record.id, resolve_outputs=False)

    def update_stack(self, name_or_id: str, template: Template | dict | str | Path | None = None,
                     environment: Environment | None = None, parameters: dict | None = None,
                     existing: bool = False, disable_rollback: bool | None = None,
                     timeout_mins: int | None = None, dry_run: bool = False,
                     show_nested: bool = False, clear_parameters: Iterable[str] = (),
                     tags: Iterable[str] | None = None) -> dict:
        """Update a stack; ``dry_run`` only previews it (nested stacks too with ``show_nested``).
        With ``existing``, ``clear_parameters`` go back to their defaults (Heat's PATCH);
        ``tags``, when given, replace the stack's."""
        record = self.get_record(name_or_id)
        if (record.action, record.status) == ("SUSPEND", COMPLETE):
            raise Conflict(f"Updating stack {record.name} while it is suspended is not supported; "
                           "resume it first")
        if template is None:
            if not existing:
                raise ValidationFailed.single((), "missing-template",
                                              "give a new template, or --existing to keep the current one")
            old_raw = self.store.get_template(record.template_id)
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
            return self._preview_update(record, template, environment, params, show_nested)
        rollback = not (record.disable_rollback if disable_rollback is None else disable_rollback)
        if record.lock_action in PREEMPTED_BY_UPDATE:
            record = self.stop_running_action(record)
        stack = self.dispatch.update(self, record, lambda: self.prepare_update(
            record, template, environment, params, disable_rollback=not rollback, timeout_mins=timeout_mins),
            rollback)
        if tags is not None:  # the update was taken (a refused one raised)
            self.store.update_stack(record.id, tags=list(tags))
        return self._result(stack)

    def prepare_update(self, record, template: Template, environment: Environment, params: dict,
                       disable_rollback: bool, timeout_mins: int | None = None,
                       parent: Stack | None = None, facade: dict | None = None) -> tuple[Stack, Stack]:
        """Check the new definition against the old stack and store it; returns (new, old)."""
        old = self.runtime(record, parent=parent, facade=facade)
        stack = Stack(self, record, parent)
        stack.facade = facade or {}
        stack.validates_nested = parent is None  # a nested stack's update was checked with its parent's
        stack.define(template, environment, params, previous=old)
        _check_immutable(old, stack)
        stack.adopt_resources(old)
        stored_params, stored_env = stored_inputs(stack, params, environment.as_dict())
        self.store.update_stack(record.id, template_id=self._template_id(stack, template),
                                previous_template_id=record.template_id,
                                parameters=stored_params, environment=stored_env,
                                files=template.files if parent is None else {},
                                updated_at=datetime.now(timezone.utc),
                                timeout_mins=timeout_mins or record.timeout_mins,
                                disable_rollback=disable_rollback)
        return stack, old

    def prepare_child_update(self, child: Stack, template: Template, environment: Environment,
                             params: dict) -> tuple[Stack, Stack]:
        # read the row again: an earlier update in this action (a batch) changed its template
        record = self.store.get_stack(child.id, self.project_id, show_deleted=True)
        return self.prepare_update(record, template, environment, params, disable_rollback=True,
                                   parent=child.parent, facade=child.facade)

    def _preview_update(self, record, template: Template, environment: Environment, params: dict,
                        show_nested: bool = False) -> dict:
        from stoker.engine.preview import add_knock_on_changes, preview_update

        old = self.runtime(record)
        probe = Stack(self, record)
        probe.define(template, environment, params)
        probe.resources = old.resources
        plan = preview_update(self, old, probe, show_nested)
        add_knock_on_changes(plan, probe.definition,
                             actions.dependency_graph(probe, set(probe.definition.enabled_resources())).order())
        return plan

    def mark_unhealthy(self, name_or_id: str, resource_name: str, unhealthy: bool = True,
                       reason: str = "") -> None:
        """CHECK_FAILED (the next update replaces it), or back to CHECK_COMPLETE."""
        record = self.get_record(name_or_id)
        with self.locked(record, "CHECK"):
            stack = self.runtime(record)
            resource = stack.resources.get(resource_name)
            if resource is None:
                raise NotFound(f"The Resource ({resource_name}) could not be found in Stack {record.name}.")
            status = FAILED if unhealthy else COMPLETE
            reason = reason or ("marked unhealthy by user" if unhealthy else "marked healthy by user")
            self.run(self._set_and_flush(resource, resource.CHECK, status, reason))

    @staticmethod
    async def _set_and_flush(resource, action: str, status: str, reason: str) -> None:
        await resource.set_state(action, status, reason)
        await resource.stack.recorder.flush()

    def signal(self, name_or_id: str, resource_name: str, details: Any = None) -> None:
        """Send ``details`` to a resource's ``handle_signal`` (wait condition handles, scaling
        policies; see ``stoker.engine.signals``), or clear a hook (``{"unset_hook": ...}``)."""
        if isinstance(details, dict) and "unset_hook" in details:
            self.clear_hook(name_or_id, resource_name, details["unset_hook"])
            return
        signals.deliver(self, self.get_record(name_or_id), resource_name, details)

    def clear_hook(self, name_or_id: str, resource_name: str, hook: str | None = None) -> str:
        """Let a resource paused at a breakpoint go on; returns the hook cleared.

        ``hook`` (pre-create, pre-update, pre-delete) defaults to the one the
        resource is paused at; clearing a hook it is not paused at is an error.
        """
        record = self.get_record(name_or_id)
        for _attempt in range(HOOK_CLEAR_ATTEMPTS):  # the row's data is read, changed, written back if unchanged
            row, hook = self._hook_to_clear(record, resource_name, hook)
            data = dict(row.data or {})
            data[HOOKS_CLEARED_KEY] = sorted({*data.get(HOOKS_CLEARED_KEY, []), hook})
            try:
                self.store.update_resource(row.id, expected_atomic_key=row.atomic_key,
                                           **stored_resource_fields(self.runtime(record), {"data": data}))
                break
            except StaleWrite:
                continue
        else:
            raise Conflict(f"Resource {resource_name} kept changing while its hook was cleared; try again")
        self.store.add_event(record.id, resource_name=resource_name, resource_type=row.type,
                             physical_resource_id=row.physical_resource_id, action=row.action,
                             status=row.status, reason=f"Hook {hook} is cleared")
        return hook

    def _hook_to_clear(self, record, resource_name: str, hook: str | None) -> tuple:
        """The resource's row and the hook it is paused at (``hook``, if given, must be that one)."""
        rows = [r for r in self.store.get_resources(record.id) if r.name == resource_name and r.replaced_by is None]
        if not rows:
            raise NotFound(f"The Resource ({resource_name}) could not be found in Stack {record.name}.")
        row = rows[-1]
        paused = re.search(r"paused until Hook (\S+) is cleared", row.status_reason or "")
        if paused is None or (hook is not None and paused.group(1) != hook):
            raise Conflict(f"Resource {resource_name} is not paused at hook {hook or '(any)'}")
        return row, paused.group(1)

    def cancel_stack(self, name_or_id: str, rollback: bool = True) -> None:
        record = self.get_record(name_or_id)
        gone = record.lock_owner is not None and self.store.owner_gone(record.lock_owner)
        if gone:
            self.stop_dead_commands(record)
        if record.status != IN_PROGRESS or record.lock_owner is None or gone:
            raise Conflict(f"Stack {record.name} has no action in progress to cancel"
                           + (" (the process running it has died)" if record.lock_owner else ""))
        self.store.request_cancel(record.id, rollback)

    def runtime(self, record, parent: Stack | None = None, facade: dict | None = None,
                strict: bool = False, provider_template: str | None = None) -> Stack:
        """A runtime stack from the store: definition (when it still checks) and resources;
        ``provider_template``: the template it was made from, when its owner knows it."""
        with paused_gc():  # everything built here lives as long as the stack
            stack = self.defined(record, parent, facade, strict, provider_template)
            stack.load_resources()
            return stack

    def defined(self, record, parent: Stack | None = None, facade: dict | None = None,
                strict: bool = False, provider_template: str | None = None, lazy: bool = False) -> Stack:
        """A runtime stack with its stored definition, its resources not loaded yet (``lazy``: their
        definitions parsed when first asked for, see ``build_definition``'s ``stored``)."""
        stack = Stack(self, record, parent)
        stack.facade = facade or {}
        stack.provider_template = provider_template or self._provider_template_of(record)
        raw = self.stored_template(record.template_id)
        files = raw.files or (parent.definition.template.files if parent and parent.definition else {})
        try:
            stack.define(Template(raw.content, files), Environment.from_dict(record.environment),
                         dict(record.parameters or {}), check_resources=strict, stored=lazy and not strict)
        except ValidationFailed:
            if strict:
                raise
            stack.definition = None
        return stack

    def _provider_template_of(self, record) -> str | None:
        """The provider template a nested stack was made from (for its registry look-ups)."""
        if not getattr(record, "parent_id", None) or not getattr(record, "owner_resource", None):
            return None
        try:
            parent = self.store.get_stack(record.parent_id, record.project_id, show_deleted=True)
        except NotFound:
            return None
        if not (parent.environment or {}).get("resource_registry"):
            return None  # the usual case: nothing is mapped
        owner = Template(self.stored_template(parent.template_id).content).section("resources").get(
            record.owner_resource)
        rtype = owner.get("type") if isinstance(owner, dict) else None
        if not isinstance(rtype, str):
            return None
        try:
            effective = resolve_type(parent.environment["resource_registry"], record.owner_resource, rtype)
        except RegistryLoop:
            return None
        return effective if is_template_type(effective) else None

    def holding(self, stack_id: str):
        """Around an action that holds the stack's lease (``StackLease.held``)."""
        return StackLease(self.store, stack_id).held(self.engine_id, self.stopping)

def declared_only(template: Template, params: dict, environment: Environment) -> dict:
    """As Heat's PATCH update: the parameter values (kept from before or given) that the
    new template does not declare are dropped, from the environment's too."""
    declared = set(template.section("parameters"))
    for name in environment.parameters.keys() - declared:
        del environment.parameters[name]
    return {name: value for name, value in params.items() if name in declared}


def _check_immutable(old: Stack, new: Stack) -> None:
    if old.definition is None:
        return
    changed = [name for name, schema in new.definition.parameter_schemas.items()
               if getattr(schema, "immutable", False) and name in old.definition.parameters
               and old.definition.parameters.get(name) != new.definition.parameters.get(name)]
    if changed:
        raise ValidationFailed.single(("parameters",), "immutable-parameter",
                                      "The following parameters are immutable and may not be updated: "
                                      + ", ".join(changed))


def as_template(template: Template | dict | str | Path) -> Template:
    if isinstance(template, Template):
        return template
    if isinstance(template, dict):
        check_nesting(template)  # text is checked as it loads; data given as it is, here
        return Template(template)
    return Template.from_file(template)


def default_engine(**kwargs: Any) -> Engine:
    return Engine(db_url=kwargs.pop("db_url", None) or os.environ.get("STOKER_DB_URL"), **kwargs)
