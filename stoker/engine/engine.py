"""``stoker.Engine``: the Python API that the CLI (and later the REST API) wrap.

Each public method is one user-level operation.  Actions take the stack's
lock (one action per stack across processes), run one asyncio event loop
for the walk, persist everything through the store, and release the lock.
"""

from __future__ import annotations

import asyncio
import copy
import json
import os
import re
import threading
import time
import uuid
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Iterable, Iterator

from stoker.dispatch.inprocess import InProcess
from stoker.engine import actions, drift, reads, signals, type_checks
from stoker.engine.actions import HOOKS_CLEARED_KEY, ActionFailed
from stoker.engine.progress import Progress
from stoker.engine.sealing import stored_inputs, stored_resource_fields
from stoker.engine.stack import Stack
from stoker.engine.summaries import output_entries, stack_summary
from stoker.errors import Conflict, NotFound, Problems, StaleWrite, ValidationFailed
from stoker.limits import limit
from stoker.names import stack_name_error
from stoker.resources import processes, registry
from stoker.store.locks import HANDED_BACK, new_engine_id
from stoker.template.environment import Environment, RegistryLoop, is_template_type, resolve_type
from stoker.template.loader import check_nesting, frozen_gc, paused_gc
from stoker.template.definition import StackDefinition
from stoker.template.verdict import check_attribute_names, check_conditions_in_use
from stoker.template.template import Template

IN_PROGRESS, COMPLETE, FAILED = "IN_PROGRESS", "COMPLETE", "FAILED"
NIL_UUID = "00000000-0000-0000-0000-000000000000"
#: one thread at a time opens a store (engines may be shared between threads)
_OPENING = threading.Lock()
#: how often a hook's clear is tried again when the resource's row changed under it
HOOK_CLEAR_ATTEMPTS = 10
#: how often a running action refreshes its lock and looks for a cancel request
WATCH_INTERVAL = 0.5
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

    async def run_create(self, stack: Stack, timeout_mins, disable_rollback, action: str = "CREATE",
                         resume: bool = False) -> None:
        """Create (or, ``resume``, go on with a create a stopped server handed back)."""
        await stack.set_state(action, IN_PROGRESS, f"Stack {action} {'resumed' if resume else 'started'}")
        try:
            await (actions.resume_create if resume else actions.create)(stack, _seconds(timeout_mins))
        except ActionFailed as exc:
            await stack.set_state(action, FAILED, str(exc))
            if not disable_rollback and stack.rollback_on_cancel:
                stack.cancel_reason = None  # the cancel that stopped the create must not stop its rollback too
                await self._take_cancel_request(stack)
                await self.run_delete(stack, "ROLLBACK")
            return
        await stack.set_state(action, COMPLETE, f"Stack {action} completed successfully")

    def delete_stack(self, name_or_id: str) -> dict:
        """Delete the stack; an action running on it (a create, say) is cancelled first, as in Heat,
        and its snapshots go first (as Heat's delete_all_snapshots)."""
        record = self.get_record(name_or_id)
        self.snapshots.forget(record.id)
        self.dispatch.delete(self, record)
        return stack_summary(self.store.get_stack(record.id, self.project_id, show_deleted=True))

    async def run_delete(self, stack: Stack, action: str) -> bool:
        await stack.set_state(action, IN_PROGRESS, f"Stack {action} started")
        everything = list(stack.resources.values()) + stack.retired
        try:
            await actions.delete_all(stack, everything, action, _seconds(stack.record.timeout_mins))
        except ActionFailed as exc:
            await stack.set_state(action, FAILED, str(exc))
            return False
        await stack.set_state(action, COMPLETE, f"Stack {action} completed successfully")
        if action == "DELETE":
            self.store.soft_delete_stack(stack.id)
            stack.record.deleted_at = datetime.now(timezone.utc)
        return True

    def _stop_running_action(self, record):
        """Cancel (without rollback) the action a live engine runs on the stack, and wait
        until it has let the stack go; returns the stack as it is then."""
        if not self._held_by_another(record):
            return record
        deadline = time.monotonic() + self.stop_timeout
        while time.monotonic() < deadline:
            # asked again until it lets go: a second request stops the resources still running
            self.store.request_cancel(record.id, rollback=False)
            time.sleep(WATCH_INTERVAL / 5)
            record = self.get_record(record.id)
            if not self._held_by_another(record):
                return record
        raise Conflict(f"Stack {record.name} already has an action ({record.lock_action}) in progress, "
                       f"and it did not stop within {self.stop_timeout:g} seconds of being cancelled")

    def _held_by_another(self, record) -> bool:
        """Is the stack's lock held by another engine that is alive (its heartbeat fresh)?"""
        owner, beat = record.lock_owner, record.lock_time
        if owner is None or owner == self.engine_id or self.store.owner_gone(owner):
            return False
        return beat is None or (datetime.now(timezone.utc) - beat).total_seconds() < self.store.lock_timeout

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

    async def run_simple(self, stack: Stack, action: str) -> None:
        await stack.set_state(action, IN_PROGRESS, f"Stack {action} started")
        try:
            await actions.simple_action(stack, action, _seconds(stack.record.timeout_mins))
        except ActionFailed as exc:
            await stack.set_state(action, FAILED, str(exc))
            return
        await stack.set_state(action, COMPLETE, f"Stack {action} completed successfully")

    def update_stack(self, name_or_id: str, template: Template | dict | str | Path | None = None,
                     environment: Environment | None = None, parameters: dict | None = None,
                     existing: bool = False, disable_rollback: bool | None = None,
                     timeout_mins: int | None = None, dry_run: bool = False,
                     show_nested: bool = False, clear_parameters: Iterable[str] = (),
                     tags: Iterable[str] | None = None, converge: bool = False) -> dict:
        """Update a stack; ``dry_run`` only previews it (nested stacks too with ``show_nested``).
        With ``existing``, ``clear_parameters`` go back to their defaults (Heat's PATCH);
        ``tags``, when given, replace the stack's; ``converge`` also puts right the resources
        whose live state drifted from what was applied (``engine/drift.py``)."""
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
            record = self._stop_running_action(record)
        stack = self.dispatch.update(self, record, lambda: self.prepare_update(
            record, template, environment, params, disable_rollback=not rollback, timeout_mins=timeout_mins,
            converge=converge), rollback)
        if tags is not None:  # the update was taken (a refused one raised)
            self.store.update_stack(record.id, tags=list(tags))
        return self._result(stack)

    def prepare_update(self, record, template: Template, environment: Environment, params: dict,
                       disable_rollback: bool, timeout_mins: int | None = None,
                       parent: Stack | None = None, facade: dict | None = None,
                       converge: bool = False) -> tuple[Stack, Stack]:
        """Check the new definition against the old stack and store it; returns (new, old).
        ``converge``: every resource goes through the update, its live state observed first."""
        old = self.runtime(record, parent=parent, facade=facade)
        stack = Stack(self, record, parent)
        stack.facade = facade or {}
        stack.validates_nested = parent is None  # a nested stack's update was checked with its parent's
        stack.define(template, environment, params, previous=old)
        _check_immutable(old, stack)
        stack.adopt_resources(old)
        if converge:
            stack.unchanged = frozenset()
            drift.observe(self.store, stack.resources)
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

    async def run_update(self, stack: Stack, old: Stack, rollback: bool, action: str = "UPDATE") -> None:
        """``action``: UPDATE, or RESTORE for an update back to a snapshot."""
        await stack.set_state(action, IN_PROGRESS, f"Stack {action} started")
        try:
            await actions.update(stack, _seconds(stack.record.timeout_mins))
        except ActionFailed as exc:
            await stack.set_state(action, FAILED, str(exc))
            # as Heat, a cancel_update rolls back even a stack whose rollback is disabled
            if (rollback or stack.rollback_requested) and stack.rollback_on_cancel:
                await self._rollback_update(stack, old)
            return
        await stack.set_state(action, COMPLETE, f"Stack {action} completed successfully")

    async def _rollback_update(self, stack: Stack, old: Stack) -> None:
        """Return to the previous template and parameters (an update the other way)."""
        record = stack.record
        back = Stack(self, record, stack.parent)
        back.definition, back.environment = old.definition, old.environment
        old.definition.context.runtime = back
        back.adopt_resources(stack)
        # the cancel that stopped the update must not stop its rollback too
        parameters, environment = stored_inputs(back, record.parameters, record.environment)
        self.store.update_stack(record.id, template_id=record.template_id, parameters=parameters,
                                environment=environment, files=record.files, cancel_requested=False)
        await back.set_state("ROLLBACK", IN_PROGRESS, "Stack ROLLBACK started")
        try:
            await actions.update(back, _seconds(record.timeout_mins), rollback=True)
        except ActionFailed as exc:
            await back.set_state("ROLLBACK", FAILED, str(exc))
            return
        await back.set_state("ROLLBACK", COMPLETE, "Stack ROLLBACK completed successfully")

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
        with self._locked(record, "CHECK"):
            stack = self.runtime(record)
            resource = stack.resources.get(resource_name)
            if resource is None:
                raise NotFound(f"The Resource ({resource_name}) could not be found in Stack {record.name}.")
            status = FAILED if unhealthy else COMPLETE
            reason = reason or ("marked unhealthy by user" if unhealthy else "marked healthy by user")
            self._run(self._set_and_flush(resource, resource.CHECK, status, reason))

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

    def stop_dead_commands(self, record) -> None:
        """Kill the commands a dead engine left running in this stack and its nested ones,
        before anyone acts on them (``processes.stop_orphan`` says which)."""
        for row in self.store.get_resources(record.id):
            processes.stop_orphan((row.data or {}).get(processes.PROCESS_KEY))
        for child in self.store.children(record.id):
            self.stop_dead_commands(child)

    # -- running ------------------------------------------------------------------------
    def _run(self, coroutine) -> None:
        with frozen_gc():
            asyncio.run(coroutine)

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

    @contextmanager
    def _locked(self, record, action: str) -> Iterator[None]:
        self.store.acquire_lock(record.id, self.engine_id, action)
        if record.status == IN_PROGRESS:  # taken over from an engine that died
            self.stop_dead_commands(record)
        with self.holding(record.id):
            yield

    @contextmanager
    def holding(self, stack_id: str) -> Iterator[None]:
        """Around an action that holds the stack's lock: released at the end, or, when the
        server stops meanwhile (the action cancelled, in progress), handed back for the
        next server to resume."""
        try:
            yield
        except asyncio.CancelledError:
            if not self.stopping.is_set():
                raise
            self.store.hand_back_lock(stack_id, self.engine_id)
        finally:
            self.store.release_lock(stack_id, self.engine_id)  # not ours any more once handed back

    # -- a server's stop, and the next one's start ------------------------------------------
    def resume_abandoned(self, record) -> bool:
        """Go on with the action a stopped server handed back, or a dead one left (``record``
        as read when its holder was found gone); False if another engine took it first.

        Creates (and their rollbacks) and deletes go on where they stood; an
        update or another action cannot be picked up halfway: it is marked FAILED.
        """
        if not self.store.take_over(record.id, record.lock_owner, self.engine_id):
            return False
        with self.holding(record.id):
            if record.status != IN_PROGRESS:  # it died between the action's end and the lock's release
                return True
            if record.lock_owner != HANDED_BACK:  # its commands outlived it, unwatched
                self.stop_dead_commands(record)
            self._run(self._resume(self.runtime(record), record.lock_action))
        return True

    async def _resume(self, stack: Stack, lock_action: str | None) -> None:
        record = stack.record
        if lock_action in ("CREATE", "ADOPT") and stack.action == lock_action and stack.definition is not None:
            await self.run_create(stack, record.timeout_mins, record.disable_rollback, lock_action, resume=True)
        elif lock_action in ("CREATE", "ADOPT", "DELETE") and stack.action in ("ROLLBACK", "DELETE"):
            await self.run_delete(stack, stack.action)
        else:
            await self._fail_interrupted(stack)

    async def _fail_interrupted(self, stack: Stack) -> None:
        """Mark the stack (its nested stacks too) and its resources still in progress FAILED."""
        reason = f"Stack {stack.action} interrupted: the server stopped while it ran"
        for child in self.store.children(stack.id):
            if child.status == IN_PROGRESS:
                await self._fail_interrupted(self.runtime(child, parent=stack))
        for resource in stack.resources.values():
            if resource.status == IN_PROGRESS:
                resource.forget_poll()
                await resource.set_state(resource.action, FAILED, reason)
        await stack.set_state(stack.action, FAILED, reason)
        await stack.recorder.flush()

    async def watch(self, stack: Stack, task: asyncio.Future) -> None:
        """While an action runs: keep its lock fresh, stop it on a cancel request, and
        hand it back when the server stops."""
        loop = asyncio.get_running_loop()
        while not task.done():
            await asyncio.sleep(WATCH_INTERVAL)
            if self.stopping.is_set():
                stack.handing_back = True
                task.cancel()
                return
            requested, rollback = await loop.run_in_executor(None, self._heartbeat, stack.id)
            if not requested:
                continue
            if stack.cancel_reason is None and not rollback:
                await self._stop_gracefully(stack)
                continue
            if stack.cancel_reason is None:
                stack.cancel_reason = f"Stack {stack.action} cancelled"
                stack.rollback_on_cancel = rollback
                stack.rollback_requested = rollback
            task.cancel()

    async def _stop_gracefully(self, stack: Stack) -> None:
        """Heat's cancel_without_rollback: the stack fails at once and nothing new starts
        (in nested stacks too), but the resources already running finish as they would.
        The request is acknowledged, so that another one (a delete's) stops them as well."""
        stack.cancel_reason = f"Stack {stack.action} cancelled"
        stack.rollback_on_cancel = False
        await self._take_cancel_request(stack)
        await stack.set_state(stack.action, FAILED, stack.cancel_reason)

    async def _take_cancel_request(self, stack: Stack) -> None:
        """The cancel request is acted on: a later one is another's."""
        await asyncio.get_running_loop().run_in_executor(
            None, lambda: self.store.update_stack(stack.id, cancel_requested=False))

    def _heartbeat(self, stack_id: str) -> tuple[bool, bool]:
        self.store.heartbeat_lock(stack_id, self.engine_id)
        return self.store.cancel_requested(stack_id)


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


def _seconds(timeout_mins: int | None) -> float | None:
    return timeout_mins * 60 if timeout_mins else None


def as_template(template: Template | dict | str | Path) -> Template:
    if isinstance(template, Template):
        return template
    if isinstance(template, dict):
        check_nesting(template)  # text is checked as it loads; data given as it is, here
        return Template(template)
    return Template.from_file(template)


def default_engine(**kwargs: Any) -> Engine:
    return Engine(db_url=kwargs.pop("db_url", None) or os.environ.get("STOKER_DB_URL"), **kwargs)
