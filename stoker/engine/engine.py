"""``stoker.Engine``: the Python API that the CLI and the REST API wrap, a facade over its parts.

Each public method is one user-level operation.  An action is handed to the
dispatcher (here: ``dispatch.inprocess``, or the workers), which holds the
stack's lease (``stoker.lease``) while it walks; how it ends is
``outcomes.py``'s.  The rest lives in modules bound on as methods: checks
(``type_checks``), reads (``reads``), stored stacks (``stored_stacks``),
updates (``updates``), running here (``running``), one resource's marks
(``resource_marks``), signals (``signals``).
"""

from __future__ import annotations

import copy
import functools
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable

from stoker.dispatch.inprocess import InProcess
from stoker.engine.bound_later import BoundLater
from stoker.engine.progress import Progress
from stoker.errors import ValidationFailed
from stoker.limits import limit
from stoker.names import stack_name_error
from stoker.started import Started, in_thread
from stoker.store.locks import new_engine_id
from stoker.template.loader import paused_gc

if TYPE_CHECKING:
    from stoker.engine.host import Dispatcher
    from stoker.template.environment import Environment
    from stoker.template.template import Template


#: one thread at a time opens a store (engines may be shared between threads)
_OPENING = threading.Lock()


class Engine:
    """Runs stacks on one database (SQLite by default, PostgreSQL by URL)."""

    def __init__(self, db_url: str | None = None, plugin_dirs: Iterable[str] = (),
                 project_id: str = "default", store: Any = None, dispatch: Dispatcher | None = None,
                 warn: Callable[[str], None] | None = None):
        self._store = store
        #: where actions run: here (``InProcess``) or on workers (``stoker.dispatch``)
        self.dispatch: Dispatcher = dispatch or InProcess()
        self._db_url = db_url
        self.project_id = project_id
        self.engine_id = new_engine_id()
        self._plugin_dirs = list(plugin_dirs)
        #: told each broken plug-in once, when the types are first looked up
        self._warn = warn
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
        #: stored templates read so far, by id (``stored_stacks.stored_template``)
        self.templates_read: dict[int, Any] = {}
        #: who watches this process's actions (the CLI's --wait display)
        self.progress = Progress()
        #: which resource types a project may use (resources/policy.py); None: any (the CLI)
        self.type_policy = None
        #: set when the server stops: running actions are handed back (shared by copies)
        self.stopping = threading.Event()
        #: set when the request waiting for this copy's action stopped waiting (``api/background.py``):
        #: the action stops at its next template check
        self.given_up = threading.Event()
        #: do create and update return the stack's summary?  Not when the API starts them: it
        #: answers with the id and drops the result, so the re-read would be wasted
        self.returns_summary = True

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

    @functools.cached_property
    def registry(self):
        """The resource types and plug-ins, loaded on first use (a blueprint command never looks one up)."""
        from stoker.resources import registry

        types = registry.default_registry(self._plugin_dirs)
        for problem in types.problems if self._warn else ():
            self._warn(problem)
        return types

    @property
    def store_open(self) -> bool:
        """Has the database been opened (checks that only may read it do not open it)?"""
        return self._store is not None

    @property
    def blueprints(self):
        """Blueprints of this project; ``.deployments`` and ``.secrets`` hang off it."""
        from stoker.blueprint.blueprints import BlueprintService

        return BlueprintService(self.store, self.project_id)

    @property
    def snapshots(self):
        """Snapshots of this project's stacks: take, list, show, restore, delete."""
        from stoker.engine.snapshots import Snapshots

        return Snapshots(self)

    @property
    def executions(self):
        """Workflow executions on this project's deployments (install, uninstall, scale, heal, ...)."""
        from stoker.workflows.executions import Executions

        return Executions(self.store, self.project_id, self.engine_id, self.dispatch,
                          self.type_policy is None or self.type_policy.allows_local(self.project_id))

    def for_project(self, project_id: str) -> "Engine":
        """The same engine (store, plug-ins) acting for another project."""
        self.registry  # loaded now, for the same reason
        other = copy.copy(self)
        # opened now if not yet, so that every copy shares one database pool (a copy opening its
        # own would keep that pool's connections open after the copy is gone)
        other._store = self.store
        other.project_id = project_id
        return other

    def close(self) -> None:
        if self._store is not None:
            self._store.close()

    # -- resource types -----------------------------------------------------------------
    def resource_class(self, type_name: str) -> type:
        return self.registry.get(type_name)

    validate_template = BoundLater("type_checks")
    check_template = BoundLater("type_checks")
    validate_resources = BoundLater("type_checks")
    check_fanout = BoundLater("type_checks")
    class_or_none = BoundLater("type_checks")
    type_refusal = BoundLater("type_checks")

    # -- reading (``reads.py``; the shapes clients see: ``summaries.py``) ----------------------
    def get_record(self, name_or_id: str, show_deleted: bool = False):
        return self.store.get_stack(name_or_id, self.project_id, show_deleted=show_deleted)

    list_stacks = BoundLater("reads")
    show_stack = BoundLater("reads")
    outputs = BoundLater("reads")
    resources = BoundLater("reads")
    failures = BoundLater("reads")
    resource = BoundLater("reads")
    events = BoundLater("reads")
    template = BoundLater("reads")
    environment = BoundLater("reads")

    # -- stacks to and from the store (``stored_stacks.py``) ----------------------------------
    new_stack = BoundLater("stored_stacks")
    save_new_stack = BoundLater("stored_stacks")
    save_nested_stack = BoundLater("stored_stacks")
    stored_template = BoundLater("stored_stacks")
    check_tree_size = BoundLater("stored_stacks")
    runtime = BoundLater("stored_stacks")
    defined = BoundLater("stored_stacks")
    db_url_for_others = BoundLater("stored_stacks")

    # -- actions ------------------------------------------------------------------------
    def create_stack(self, name: str, template: Template | dict | str | Path,
                     environment: Environment | None = None, parameters: dict | None = None,
                     timeout_mins: int | None = None, disable_rollback: bool = True,
                     tags: Iterable[str] = (), dry_run: bool = False,
                     adopted_data: dict | None = None) -> dict:
        """Create a stack; ``adopted_data`` (Heat's adopt, the stack's action then ADOPT) gives
        resources their physical ids, stored data and metadata back."""
        from stoker.engine import actions

        if error := stack_name_error(name):
            raise ValidationFailed.single(("stack_name",), "invalid-stack-name", error)
        stack = self.new_stack(name, timeout_mins=timeout_mins)
        stack.adopted_data = dict(adopted_data or {})
        definition = self._define(stack, template, environment, parameters)
        if dry_run:
            order = actions.dependency_graph(stack, set(definition.enabled_resources())).order()
            return {"stack_name": name, "resources": [
                {"resource_name": n, "resource_type": definition.resources[n].type, "action": "CREATE"}
                for n in order]}
        action = "CREATE" if adopted_data is None else "ADOPT"
        self.save_new_stack(stack, tags, timeout_mins, disable_rollback,
                            locked_for=action if self.dispatch.runs_here else None)
        self.dispatch.create(self, stack, timeout_mins, disable_rollback, action)
        return self.summary(stack)

    def summary(self, stack: Any) -> dict | None:
        """What an action returns (``summaries.action_result``), if anyone takes it."""
        from stoker.engine.summaries import action_result

        return action_result(self.store, stack) if self.returns_summary else None

    def begin(self, verb: str, name: str, *args: Any, **kwargs: Any) -> Started:
        """``<verb>_stack(name, ...)`` under way in a thread of its own: the handle once it shows."""
        from stoker.engine import starting

        return starting.begin(self, lambda engine: getattr(engine, f"{verb}_stack")(name, *args, **kwargs),
                              in_thread)

    # -- Heat's abandon, export and adopt (``exported.py``) ----------------------------------
    export_stack = BoundLater("exported")
    abandon_stack = BoundLater("exported")
    adopt_stack = BoundLater("exported")

    def preview_stack(self, name: str, template: Template | dict | str | Path,
                      environment: Environment | None = None, parameters: dict | None = None) -> list:
        """Heat's create preview: each resource as a create would make it (``create_preview``)."""
        from stoker.engine.create_preview import preview_resources

        stack = self.new_stack(name)
        self._define(stack, template, environment, parameters)
        return preview_resources(stack)

    @staticmethod
    def _define(stack: Any, template: Any, environment: Environment | None, parameters: dict | None):
        """A new stack's definition, its nested templates checked too (a create or its preview)."""
        from stoker.template.environment import Environment
        from stoker.template.template import as_template

        stack.validates_nested = True
        return stack.define(as_template(template), environment or Environment(), dict(parameters or {}))

    def delete_stack(self, name_or_id: str) -> dict:
        """Delete the stack; an action running on it (a create, say) is cancelled first, as in Heat,
        and its snapshots go first (as Heat's delete_all_snapshots)."""
        from stoker.engine.summaries import stack_summary

        record = self.get_record(name_or_id)
        self.snapshots.forget(record.id)
        self.dispatch.delete(self, record)
        return stack_summary(self.store.get_stack(record.id, self.project_id, show_deleted=True))

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

    signal = BoundLater("signals")
    mark_unhealthy = BoundLater("resource_marks")
    clear_hook = BoundLater("resource_marks")

    # -- updates (``updates.py``) ----------------------------------------------------------
    update_stack = BoundLater("updates")
    prepare_update = BoundLater("updates")
    prepare_child_update = BoundLater("updates")

    # -- running (``running.py``: here, to the end; ``outcomes.py``: how an action ends) ------
    run = BoundLater("running", static=True)
    locked = BoundLater("running")
    stop_dead_commands = BoundLater("running")
    resume_abandoned = BoundLater("running")
    watch = BoundLater("running")
    run_create = BoundLater("running")
    run_delete = BoundLater("running")
    run_simple = BoundLater("running")
    run_update = BoundLater("running")
    stop_running_action = BoundLater("running")
    cancel_stack = BoundLater("running")
    holding = BoundLater("running")
