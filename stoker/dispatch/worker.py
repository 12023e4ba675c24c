"""``stoker worker``: one step of one resource action per task, then what follows from it.

A task names a traversal and a resource.  The worker takes the resource's
lock, reads the stored state, and acts on it: start or continue the
resource's action (``step``), park it with a countdown when it waits, or
end it and enqueue the dependents that became ready.  A task that comes
back after its worker died finds the state its predecessor stored.
"""

from __future__ import annotations

import asyncio
import os
from collections import OrderedDict
from datetime import datetime, timezone
from typing import Any

from sqlalchemy import func, select, union
from sqlalchemy.exc import InterfaceError, OperationalError

from stoker.dispatch import celery_app, lifecycle, traversal
from stoker.dispatch.execution_steps import StepWorker
from stoker.dispatch.heartbeat import beating
from stoker.dispatch.kinds import KINDS, stack_action
from stoker.dispatch.step import DirectRecorder, Parked, drive_by_steps
from stoker.errors import StokerError
from stoker.store.models import Resource as ResourceRow

#: stacks whose definitions a worker process keeps (parsing a big template once, not per task)
CACHED_STACKS = 16
#: seconds before a task finding its resource locked by another worker looks again
BUSY_RETRY = 1.0
#: seconds between heartbeats of the stack lock while one step runs (the lock times out after 60)
LOCK_BEAT = 15.0


class Worker:
    """What one worker process needs: its engine (opened after the fork) and parsed stacks."""

    def __init__(self, app: Any, db_url: str, plugin_dirs: tuple[str, ...] = ()):
        self.app = app
        self.db_url = db_url
        self.plugin_dirs = plugin_dirs
        self._engine: Any = None
        self._pid = 0
        self._stacks: OrderedDict = OrderedDict()

    @property
    def engine(self) -> Any:
        if self._engine is None or self._pid != os.getpid():  # a forked child opens its own
            from stoker.engine.engine import Engine

            self._engine = Engine(db_url=self.db_url, plugin_dirs=self.plugin_dirs)
            self._pid, self._stacks = os.getpid(), OrderedDict()
        return self._engine

    def stack_for(self, view: Any, resource_id: int, conn: Any) -> tuple[Any, Any]:
        """The stack with only the rows the resource needs (itself, same-named ones, its requirements).

        A traversal's stack keeps its definition while it runs: it is read
        and parsed once per worker process, not once per task.
        """
        stack = self._stacks.pop(view.traversal_id, None)
        if stack is None:
            stack = self.engine.defined(self.engine.store.get_stack(view.stack_id, view.project_id,
                                                                    show_deleted=True))
            if view.action == "ADOPT":
                stack.adopted_data = traversal.given(self.engine.store, view.traversal_id) or {}
        self._stacks[view.traversal_id] = stack
        while len(self._stacks) > CACHED_STACKS:
            self._stacks.popitem(last=False)
        stack.resources, stack.retired, stack.cancel_reason = {}, [], None
        stack.recorder = DirectRecorder(self.engine)
        updating = KINDS[view.action].updating
        stack.load_resources(_update_rows(conn, stack, resource_id) if updating else
                             _rows(conn, view.stack_id, resource_id))
        resource = None
        for loaded in [*stack.resources.values(), *stack.retired]:
            if loaded.id == resource_id:
                resource = loaded
            elif loaded.properties_data:  # as applied: their own requirements need not be loaded
                loaded._properties = loaded.stored_properties()
        if updating:
            _leave_out_unmade(stack)
            return stack, resource
        if resource in stack.retired and resource.properties_data:  # replaced or removed: as it was made
            resource._properties = resource.stored_properties()
        drive_by_steps(resource)
        stack.recorder.defer = not resource.acts_outside
        return stack, resource

    def run_node(self, traversal_id: str, resource_id: int, queue: str, step: int = 0) -> None:
        store = self.engine.store
        with traversal.resource_lock(store, resource_id) as (held, conn):
            view = traversal.read(conn, traversal_id, resource_id)
            if view is None or view.status != traversal.IN_PROGRESS or view.step != step:
                return  # the action ended (or its stack is gone), or a later task carries on
            if not held and view.node_state != traversal.DONE:
                # a worker acts on it, or died doing so and its lock is not released yet
                celery_app.publish(self.app, queue, traversal_id, [resource_id], countdown=BUSY_RETRY, step=step)
            if not held:
                return
            if view.node_state == traversal.DONE:  # a redelivery: its dependents may not have been sent
                ready = traversal.ready_not_started(store, traversal_id, view.dependents)
                celery_app.publish(self.app, queue, traversal_id, ready)
                if traversal.end_if_done(store, traversal_id, conn):  # or the end it was to record
                    self._end(view, queue)
                return
            view = self._notice_stop(view, resource_id, conn)
            if view.node_state == traversal.PENDING and not traversal.begin_node(
                    store, traversal_id, resource_id, view.stack_id, lifecycle.traversal_owner(traversal_id), conn):
                self._node_ended(view, resource_id, queue, False, conn=conn)
                return
            stack, resource = self.stack_for(view, resource_id, conn)
            with _keeping_lock(store, view.stack_id, lifecycle.traversal_owner(traversal_id)):
                succeeded = self._step(view, stack, resource, queue)
            if succeeded is None:
                return
            self._node_ended(view, resource_id, queue, succeeded, stack.recorder.take(), conn)

    def _step(self, view: Any, stack: Any, resource: Any, queue: str) -> bool | None:
        """Run one step; True/False when the resource's action ended, None when it was parked."""
        kind = KINDS[view.action]
        action = kind.resource_action
        if view.interrupt:  # what is in progress (in an update: perhaps its replacement's create) fails
            acting = stack.resources.get(resource.name, resource) if kind.updating else resource
            if acting.status == acting.IN_PROGRESS:
                asyncio.run(acting.set_state(acting.action, acting.FAILED, _interrupted(view)))
            return False
        if _ended_before(view, resource, action):
            return resource.status == resource.COMPLETE  # ended before its worker was lost
        try:
            asyncio.run(kind.run(stack, resource))
        except Parked as parked:
            step = traversal.park(self.engine.store, view.traversal_id, resource.id, view.stack_id,
                                  lifecycle.traversal_owner(view.traversal_id), stack.recorder.take())
            celery_app.publish(self.app, queue, view.traversal_id, [resource.id], countdown=parked.seconds,
                               step=step)
            return None
        except (OperationalError, InterfaceError):
            raise  # the database went away: the task is retried, the resource not failed
        except Exception as exc:  # a plug-in may raise anything: it becomes the reason
            reason = str(exc) if isinstance(exc, StokerError) else f"{type(exc).__name__}: {exc}"
            traversal.stop(self.engine.store, view.traversal_id, reason, interrupt=False,
                           first_prefix=f"Resource {stack_action(view.action)} failed: ")
            return False
        return True

    def _notice_stop(self, view: Any, resource_id: int, conn: Any) -> Any:
        """A cancel request or a passed deadline stops the traversal, running resources included."""
        reason = None
        if view.cancel_requested:
            reason = f"Stack {stack_action(view.action)} cancelled"
        elif view.deadline is not None and datetime.now(timezone.utc) >= view.deadline:
            reason = f"{stack_action(view.action)} timed out"
        if reason is None or view.interrupt:
            return view
        traversal.stop(self.engine.store, view.traversal_id, reason, interrupt=True)
        return traversal.read(conn, view.traversal_id, resource_id) or view

    def _node_ended(self, view: Any, resource_id: int, queue: str, succeeded: bool,
                    writes: tuple[list, list] = ([], []), conn: Any = None) -> None:
        store = self.engine.store
        ready, ends = traversal.end_node(store, view.traversal_id, resource_id, view.dependents, succeeded,
                                         writes, conn)
        celery_app.publish(self.app, queue, view.traversal_id, ready)
        if ends:
            self._end(view, queue)

    def _end(self, view: Any, queue: str) -> None:
        record = self.engine.store.get_stack(view.stack_id, view.project_id, show_deleted=True)
        lifecycle.end_traversal(self.engine, self.app, queue, view.traversal_id, record)


def _keeping_lock(store: Any, stack_id: str, owner: str) -> Any:
    """While a plug-in's handler runs (perhaps for minutes), the stack lock's heartbeat goes on."""
    return beating(lambda: store.heartbeat_lock(stack_id, owner), LOCK_BEAT)


def _rows(conn: Any, stack_id: str, resource_id: int) -> list:
    """In one query: the resource's row, rows of the same name, and those of what it requires."""
    this = ResourceRow.__table__.alias()
    names = union(select(this.c.name).where(this.c.id == resource_id),
                  select(func.json_array_elements_text(this.c.requires)).where(this.c.id == resource_id))
    query = (select(ResourceRow.__table__).where(ResourceRow.stack_id == stack_id, ResourceRow.name.in_(names))
             .order_by(ResourceRow.id))
    return [ResourceRow.from_row(row) for row in conn.execute(query)]


def _interrupted(view: Any) -> str:
    return view.stopping or f"Stack {stack_action(view.action)} cancelled"


def _ended_before(view: Any, resource: Any, action: str) -> bool:
    """Did the resource's action end before the worker running it was lost (its node's end
    not committed)?  A create is known by its state; the others by the node having run
    (a SUSPEND_COMPLETE from an earlier suspend is not this one's)."""
    if action in ("CREATE", "ADOPT"):  # an adopt creates what it was not given
        return resource.action != resource.INIT and resource.state != (resource.CREATE, resource.IN_PROGRESS)
    return (view.node_state == traversal.RUNNING and not KINDS[view.action].updating
            and resource.action == action and resource.status != resource.IN_PROGRESS)


def _update_rows(conn: Any, stack: Any, resource_id: int) -> list:
    """The rows an update of the node's resource reads: those of its name (current, replaced,
    placeholder) and those of what the new definition makes it require."""
    name = conn.execute(select(ResourceRow.name).where(ResourceRow.id == resource_id)).scalar_one()
    definition = stack.definition.resources.get(name)
    names = {name} | (definition.dependencies() & set(stack.definition.resources) if definition else set())
    query = (select(ResourceRow.__table__).where(ResourceRow.stack_id == stack.id, ResourceRow.name.in_(names))
             .order_by(ResourceRow.id))
    return [ResourceRow.from_row(row) for row in conn.execute(query)]


def _leave_out_unmade(stack: Any) -> None:
    """Rows never acted on (INIT: placeholders the update's start made for new names, or left by a
    create that stopped) are left out of an update's stack, so the update creates those resources
    on rows of their own and the node's row stays for a redelivered task to read its name from."""
    stack.retired = [r for r in stack.retired if r.action != r.INIT]
    for name, resource in list(stack.resources.items()):
        if resource.action == resource.INIT:
            del stack.resources[name]


def make_worker_app(broker_url: str, db_url: str, plugin_dirs: tuple[str, ...] = ()) -> Any:
    """The Celery app of a worker process, with Stoker's tasks bound to a ``Worker``."""
    app = celery_app.make_app(broker_url)
    worker = Worker(app, db_url, plugin_dirs)

    steps = StepWorker(worker)
    retried = {"autoretry_for": (OperationalError, InterfaceError), "retry_backoff": 0.5, "retry_backoff_max": 10,
               "max_retries": None}

    @app.task(name=celery_app.RUN_NODE, **retried)
    def run_node(traversal_id: str, resource_id: int, queue: str, step: int = 0) -> None:
        worker.run_node(traversal_id, resource_id, queue, step)

    @app.task(name=celery_app.RUN_STEP, **retried)
    def run_step(traversal_id: str, number: int, queue: str, step: int = 0) -> None:
        steps.run_step(traversal_id, number, queue, step)

    return app
