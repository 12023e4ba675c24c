"""``stoker worker``: one step of the actions of a batch of ready resources per task, and what follows.

A task names a traversal and some of its resources (with the step each is
at).  The worker takes the resources' locks, reads the stored state, and
acts on it: start or continue each resource's action (``step``), park those
that wait with a countdown, and end the others in one transaction that
finds the dependents now ready.  It runs those itself, round after round,
for a while (``TASK_SLICE``), handing out what it does not keep in chunks
to the other workers.  A resource that acts outside Stoker goes to a task
of its own when it comes in a batch: its action may take long, and its
neighbours should not wait for it.  A task that comes back after its
worker died finds the state its predecessor stored, and runs again what its
predecessor was running after the nodes it was given.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections import OrderedDict
from contextlib import contextmanager
from datetime import datetime, timezone
from typing import Any, Iterator

from sqlalchemy import ARRAY, String, any_, cast, func, select, union
from sqlalchemy.exc import InterfaceError, OperationalError
from sqlalchemy.orm import Session, aliased

from stoker.dispatch import celery_app, lifecycle, traversal
from stoker.dispatch.step import DirectRecorder, Parked, drive_by_steps
from stoker.engine import actions
from stoker.errors import StokerError
from stoker.store.models import Resource as ResourceRow

#: stacks whose definitions a worker process keeps (parsing a big template once, not per task)
CACHED_STACKS = 16
#: seconds before a task finding its resource locked by another worker looks again
BUSY_RETRY = 1.0
#: seconds between heartbeats of the stack lock while one step runs (the lock times out after 60)
LOCK_BEAT = 15.0
#: seconds a task goes on running the dependents its nodes made ready before it hands them out
TASK_SLICE = 5.0
#: the resource action each stack action runs
RESOURCE_ACTION = {"CREATE": "CREATE", "DELETE": "DELETE", "ROLLBACK": "DELETE"}


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
            from stoker.dispatch.distributed import CeleryDispatch
            from stoker.engine.engine import Engine

            # nested stacks that resources here own are created on the workers too
            dispatch = CeleryDispatch(self.app.conf.broker_url, app=self.app)
            self._engine = Engine(db_url=self.db_url, plugin_dirs=self.plugin_dirs, dispatch=dispatch)
            self._pid, self._stacks = os.getpid(), OrderedDict()
        return self._engine

    def _defined(self, stack_id: str, project_id: str) -> Any:
        """A stack with its stored definition, under its parents (a nested stack's files are theirs)."""
        record = self.engine.store.get_stack(stack_id, project_id, show_deleted=True)
        parent = self._defined(record.parent_id, project_id) if record.parent_id else None
        return self.engine.defined(record, parent)

    def stack_for(self, view: Any, resource_ids: list, conn: Any) -> tuple[Any, dict]:
        """The stack with only the rows the resources need (themselves, same-named ones, their
        requirements), and those resources by id, each driven one step per task.

        A traversal's stack keeps its definition while it runs: it is read
        and parsed once per worker process, not once per task.
        """
        stack = self._stacks.pop(view.traversal_id, None)
        if stack is None:
            stack = self._defined(view.stack_id, view.project_id)
        self._stacks[view.traversal_id] = stack
        while len(self._stacks) > CACHED_STACKS:
            self._stacks.popitem(last=False)
        stack.resources, stack.retired, stack.cancel_reason = {}, [], None
        stack.recorder = DirectRecorder(self.engine)
        stack.load_resources(_rows(conn, view.stack_id, resource_ids))
        wanted, resources = set(resource_ids), {}
        for loaded in [*stack.resources.values(), *stack.retired]:
            if loaded.id in wanted:
                drive_by_steps(loaded)
                resources[loaded.id] = loaded
            elif loaded.properties_data:  # as applied: their own requirements need not be loaded
                loaded._properties = loaded.stored_properties()
        return stack, resources

    def run_nodes(self, traversal_id: str, nodes: list, queue: str) -> None:
        """Run the given (resource id, step) nodes, then the dependents they make ready, for a while."""
        batch = {resource_id: step for resource_id, step in nodes}
        until = time.monotonic() + TASK_SLICE
        self.engine.dispatch.queue = queue  # where nested stacks started here go
        with traversal.resource_locks(self.engine.store) as conn:
            while batch:
                batch = self._round(traversal_id, batch, queue, conn)
                traversal.release_all(conn)
                pairs = list(batch.items())
                keep = 0 if time.monotonic() >= until else celery_app.CHUNK_MAX
                for first in range(keep, len(pairs), celery_app.CHUNK_MAX):  # what this task does not keep
                    celery_app.send(self.app, queue, traversal_id, pairs[first:first + celery_app.CHUNK_MAX])
                batch = dict(pairs[:keep])

    def _round(self, traversal_id: str, batch: dict, queue: str, conn: Any) -> dict:
        """One pass over ``batch`` (id -> step); returns the nodes to run next here (id -> step)."""
        store = self.engine.store
        held = traversal.try_locks(conn, batch)
        view, nodes = traversal.read(conn, traversal_id, batch)
        if view is None or view.status != traversal.IN_PROGRESS:
            return {}  # the action ended (or its stack is gone)
        nodes = {rid: node for rid, node in nodes.items() if node.step == batch[rid]}  # a later task carries on
        # a worker acts on these, or died doing so and its lock is not released yet
        celery_app.send(self.app, queue, traversal_id, [(rid, node.step) for rid, node in nodes.items()
                                                        if rid not in held and node.state != traversal.DONE],
                        countdown=BUSY_RETRY)
        nodes = {rid: node for rid, node in nodes.items() if rid in held}
        done = [rid for rid, node in nodes.items() if node.state == traversal.DONE]
        following = traversal.left_behind(store, traversal_id, done)  # a redelivery: what came after them
        if done and not following and traversal.end_if_done(store, traversal_id, conn):
            self._end(view, queue)  # or the end it was to record
            return {}
        view = self._notice_stop(view, conn)
        owner = lifecycle.traversal_owner(traversal_id)
        pending = [rid for rid, node in nodes.items() if node.state == traversal.PENDING]
        running = [rid for rid, node in nodes.items() if node.state == traversal.RUNNING]
        if not pending and not running:
            return {rid: step for rid, step in following.items() if rid not in batch}
        stack, resources = self.stack_for(view, pending + running, conn)
        alone = self._hand_out_outside(view, nodes, resources, queue, conn)
        began = traversal.begin_nodes(conn, traversal_id, [rid for rid in pending if rid not in alone],
                                      view.stack_id, owner)
        ended = {rid: (nodes[rid].dependents, False) for rid in pending if rid not in alone and rid not in began}
        acting = {rid: resources[rid] for rid in [*running, *began] if rid not in alone}
        stack.recorder.defer = not any(resource.acts_outside for resource in acting.values())
        with _keeping_lock(store, view.stack_id, owner):
            outcomes = asyncio.run(self._steps(view, stack, acting))
        parked = {rid: seconds for rid, (ended_ok, seconds) in outcomes.items() if seconds is not None}
        ended.update({rid: (nodes[rid].dependents, ended_ok) for rid, (ended_ok, seconds) in outcomes.items()
                      if seconds is None})
        moved = traversal.advance(store, traversal_id, ended, parked, stack.recorder.take(), (view.stack_id, owner))
        self._repoll(view, queue, parked, moved.steps)
        if ended and not moved.ready and traversal.end_if_done(store, traversal_id, conn):
            self._end(view, queue)
            return {}
        keep = celery_app.chunk_size(len(moved.ready))
        celery_app.publish(self.app, queue, traversal_id, moved.ready[keep:])
        return {**{rid: step for rid, step in following.items() if rid not in batch},
                **{rid: 0 for rid in moved.ready[:keep]}}

    def _hand_out_outside(self, view: Any, nodes: dict, resources: dict, queue: str, conn: Any) -> set:
        """In a batch of several, resources that act outside Stoker go to tasks of their own (they may
        take long; the others need not wait for them); returns their ids."""
        if len(resources) < 2:
            return set()
        alone = sorted(rid for rid, resource in resources.items() if resource.acts_outside)
        traversal.release(conn, alone)
        for rid in alone:
            celery_app.send(self.app, queue, view.traversal_id, [(rid, nodes[rid].step)])
        return set(alone)

    def _repoll(self, view: Any, queue: str, parked: dict, steps: dict) -> None:
        """Parked nodes come back after their countdown, those of one countdown in one task."""
        by_delay: dict[float, list] = {}
        for rid, seconds in parked.items():
            by_delay.setdefault(seconds, []).append((rid, steps[rid]))
        for seconds, nodes in by_delay.items():
            celery_app.send(self.app, queue, view.traversal_id, nodes, countdown=seconds)

    async def _steps(self, view: Any, stack: Any, resources: dict) -> dict:
        """Each resource's step, one after the other: id -> (succeeded, None) when its action
        ended, (False, seconds to wait) when it was parked."""
        return {rid: await self._step(view, stack, resource) for rid, resource in resources.items()}

    async def _step(self, view: Any, stack: Any, resource: Any) -> tuple[bool, float | None]:
        action = RESOURCE_ACTION[view.action]
        if view.interrupt:
            if resource.state == (action, resource.IN_PROGRESS):
                await resource.set_state(action, resource.FAILED, _interrupted(view))
            return False, None
        if action == "CREATE" and resource.action != resource.INIT \
                and resource.state != (resource.CREATE, resource.IN_PROGRESS):
            return resource.status == resource.COMPLETE, None  # ended before its worker was lost
        try:
            if action == "CREATE":
                await actions.create_resource(resource)
            else:
                await actions.delete_resource(stack, resource)
        except Parked as parked:
            return False, parked.seconds
        except (OperationalError, InterfaceError):
            raise  # the database went away: the task is retried, the resource not failed
        except Exception as exc:  # a plug-in may raise anything: it becomes the reason
            reason = str(exc) if isinstance(exc, StokerError) else f"{type(exc).__name__}: {exc}"
            traversal.stop(self.engine.store, view.traversal_id, reason, interrupt=False,
                           first_prefix=f"Resource {view.action} failed: ")
            return False, None
        return True, None

    def _notice_stop(self, view: Any, conn: Any) -> Any:
        """A cancel request or a passed deadline stops the traversal, running resources included."""
        reason = None
        if view.cancel_requested:
            reason = f"Stack {view.action} cancelled"
        elif view.deadline is not None and datetime.now(timezone.utc) >= view.deadline:
            reason = f"{view.action} timed out"
        if reason is None or view.interrupt:
            return view
        traversal.stop(self.engine.store, view.traversal_id, reason, interrupt=True)
        return traversal.read(conn, view.traversal_id)[0] or view

    def _end(self, view: Any, queue: str) -> None:
        record = self.engine.store.get_stack(view.stack_id, view.project_id, show_deleted=True)
        lifecycle.end_traversal(self.engine, self.app, queue, view.traversal_id, record)


@contextmanager
def _keeping_lock(store: Any, stack_id: str, owner: str) -> Iterator[None]:
    """While a plug-in's handler runs (perhaps for minutes), the stack lock's heartbeat goes on."""
    stop = threading.Event()

    def beat() -> None:
        while not stop.wait(LOCK_BEAT):
            store.heartbeat_lock(stack_id, owner)

    beater = threading.Thread(target=beat, name="stoker-lock-beat", daemon=True)
    beater.start()
    try:
        yield
    finally:
        stop.set()
        beater.join()


def _rows(conn: Any, stack_id: str, resource_ids: list) -> list:
    """In one query: the resources' rows, rows of the same names, and those of what they require."""
    this = aliased(ResourceRow)
    names = union(select(this.name).where(this.id.in_(resource_ids)),
                  select(func.json_array_elements_text(this.requires).label("name"))
                  .where(this.id.in_(resource_ids))).subquery()
    # as one array: the planner looks the names up in the (stack, name) index, however many rows
    # it guesses the requirements expand to
    wanted = cast(select(func.array_agg(names.c.name)).scalar_subquery(), ARRAY(String))
    with Session(conn, expire_on_commit=False) as session:
        return list(session.scalars(select(ResourceRow).where(ResourceRow.stack_id == stack_id,
                                                              ResourceRow.name == any_(wanted))
                                    .order_by(ResourceRow.id)))


def _interrupted(view: Any) -> str:
    return view.stopping or f"Stack {view.action} cancelled"


def make_worker_app(broker_url: str, db_url: str, plugin_dirs: tuple[str, ...] = ()) -> Any:
    """The Celery app of a worker process, with Stoker's task bound to a ``Worker``."""
    app = celery_app.make_app(broker_url)
    worker = Worker(app, db_url, plugin_dirs)

    @app.task(name=celery_app.RUN_NODES, autoretry_for=(OperationalError, InterfaceError), retry_backoff=0.5,
              retry_backoff_max=10, max_retries=None)
    def run_nodes(traversal_id: str, nodes: list, queue: str) -> None:
        worker.run_nodes(traversal_id, nodes, queue)

    return app
