"""``stoker worker``: one step of the actions of a batch of ready nodes per task, and what follows.

A task names a traversal and some of its nodes (with the step each is at):
resources of a stack action, or steps of a workflow execution
(``execution_steps``).  The worker takes the nodes' locks, reads the stored
state, and acts on it: start or continue each resource's action (``step``,
by the traversal's kind: ``kinds``), park those that wait with a countdown,
and end the others in one transaction that finds the dependents now ready.
It runs those itself, round after round, for a while (``TASK_SLICE``),
handing out what it does not keep in chunks to the other workers.  A
resource that acts outside Stoker goes to a task of its own when it comes in
a batch: its action may take long, and its neighbours should not wait for
it; so does every node of a kind that runs no batches (an update's, an
execution's).  A task that comes back after its worker died finds the state
its predecessor stored, and runs again what its predecessor was running
after the nodes it was given.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections import OrderedDict
from contextlib import nullcontext
from datetime import datetime, timezone
from typing import Any

from sqlalchemy import ARRAY, String, and_, any_, cast, func, or_, select, union
from sqlalchemy.exc import InterfaceError, OperationalError

from stoker.dispatch import celery_app, stack_actions, traversal
from stoker.dispatch.execution_steps import StepWorker
from stoker.dispatch.heartbeat import beating
from stoker.dispatch.kinds import KINDS, stack_action
from stoker.dispatch.step import STEP_PER_TASK, DirectRecorder
from stoker.errors import DatabaseAway, StokerError
from stoker.resources import processes
from stoker.resources.stepper import Parked
from stoker.store.models import Resource as ResourceRow
from stoker.template.loader import frozen_gc

#: stacks whose definitions a worker process keeps (parsing a big template once, not per task)
CACHED_STACKS = 16
#: seconds before a task finding its node locked by another worker looks again
BUSY_RETRY = 1.0
#: seconds between heartbeats of the stack lock while one step runs (the lock times out after 60)
LOCK_BEAT = 15.0
#: seconds between looks at a cancel or a deadline while one step runs (a nested stack's update)
STEP_WATCH = 1.0
#: seconds a task goes on running the dependents its nodes made ready before it hands them out
TASK_SLICE = 5.0
RESOURCES = ResourceRow.__table__


class StepWatch:
    """Stops the steps of a task when their traversal is interrupted: the one running is cancelled
    (only while it runs a resource's action: its own bookkeeping is never cut), the others fail
    without running."""

    def __init__(self, steps: asyncio.Task):
        self.steps = steps
        self.stopped = False
        self._running = False

    def __enter__(self) -> None:
        """Around a resource's action: the part of a step that may be cancelled."""
        self._running = True

    def __exit__(self, *_exc: Any) -> None:
        self._running = False

    def stop(self) -> None:
        self.stopped = True
        if self._running:
            self.steps.cancel()


class Worker:
    """What one worker process needs: its engine (opened after the fork) and parsed stacks."""

    def __init__(self, app: Any, db_url: str, plugin_dirs: tuple[str, ...] = ()):
        self.app = app
        self.db_url = db_url
        self.plugin_dirs = plugin_dirs
        self.steps = StepWorker(self)
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
            self._engine.registry  # a long-lived worker loads its plug-ins with its engine, whatever it runs first
            self._pid, self._stacks = os.getpid(), OrderedDict()
        return self._engine

    def _defined(self, stack_id: str, project_id: str) -> Any:
        """A stack with its stored definition, under its parents (a nested stack's files are theirs)."""
        record = self.engine.store.get_stack(stack_id, project_id, show_deleted=True)
        parent = self._defined(record.parent_id, project_id) if record.parent_id else None
        # its nested stacks are the project's; the resources parsed as tasks ask for them (each
        # process of each worker host reads the stack, and acts on a share of it)
        return self.engine.for_project(project_id).defined(record, parent, lazy=True)

    def stack_for(self, view: Any, resource_ids: list, conn: Any) -> tuple[Any, dict]:
        """The stack with only the rows the resources need (themselves, same-named ones, their
        requirements; an update's: what the new definition needs), and those resources by id.

        A traversal's stack keeps its definition while it runs: it is read
        and parsed once per worker process, not once per task.
        """
        stack = self._stacks.pop(view.traversal_id, None)
        if stack is None:
            self._forget_ended(conn)
            stack = self._defined(view.stack_id, view.project_id)
            if view.action == "ADOPT":
                stack.adopted_data = traversal.given(self.engine.store, view.traversal_id) or {}
            elif view.action == "SIGNAL":
                stack.signalled = (view.traversal_id, traversal.given(self.engine.store, view.traversal_id)["details"])
        self._stacks[view.traversal_id] = stack
        while len(self._stacks) > CACHED_STACKS:
            self._stacks.popitem(last=False)
        stack.resources, stack.retired, stack.cancel_reason = {}, [], None
        stack.recorder = DirectRecorder(self.engine)
        stack.driver = STEP_PER_TASK  # every action here (an update's new resources' too) one step per task
        updating = KINDS[view.action].updating
        stack.load_resources(_update_rows(conn, stack, resource_ids[0]) if updating else
                             _rows(conn, view.stack_id, resource_ids, _metadata_readers(stack, view.action)))
        wanted, resources = set(resource_ids), {}
        for loaded in [*stack.resources.values(), *stack.retired]:
            if loaded.id in wanted:
                resources[loaded.id] = loaded
            elif loaded.properties_data:  # as applied: their own requirements need not be loaded
                loaded._properties = loaded.stored_properties()
        if updating:  # the update plans the resource by its name
            _leave_out_unmade(stack)
            return stack, resources
        for resource in resources.values():
            if resource in stack.retired and resource.properties_data:  # replaced or removed: as it was made
                resource._properties = resource.stored_properties()
        stack.recorder.defer = not any(resource.acts_outside for resource in resources.values())
        return stack, resources

    def _forget_ended(self, conn: Any) -> None:
        """Drop the kept stacks of traversals that ended (whichever worker ended them): a big stack
        kept for nothing is memory, and objects the collector walks once tasks unfreeze them."""
        running = traversal.in_progress(conn, self._stacks)
        for traversal_id in [key for key in self._stacks if key not in running]:
            del self._stacks[traversal_id]

    def run_nodes(self, traversal_id: str, nodes: list, queue: str, redelivered: bool = False) -> None:
        """Run the given (node, step) pairs, then the dependents they make ready, for a while
        (``redelivered``: the task comes back after its worker was lost).

        The collector never rescans, during a task, what lived before it
        (``frozen_gc``, as an in-process action): a worker process keeps its
        parsed stacks, and each collection walking them made tasks slower
        the longer the process lived.
        """
        with frozen_gc():
            self._run_nodes(traversal_id, nodes, queue, redelivered)

    def _run_nodes(self, traversal_id: str, nodes: list, queue: str, redelivered: bool) -> None:
        batch = {node: step for node, step in nodes}
        until = time.monotonic() + TASK_SLICE
        self.engine.dispatch.queue = queue  # where nested stacks started here go
        with traversal.resource_locks(self.engine.store) as conn:
            if redelivered:
                self._repoll_lost(traversal_id, batch, queue, conn)
            while batch:
                batch = self._round(traversal_id, batch, queue, conn)
                if not batch:
                    break  # what it holds goes as the block ends
                traversal.release_all(conn)  # before what this task does not keep goes to others
                pairs = list(batch.items())
                keep = 0 if time.monotonic() >= until else celery_app.CHUNK_MAX
                for first in range(keep, len(pairs), celery_app.CHUNK_MAX):  # what this task does not keep
                    celery_app.send(self.app, queue, traversal_id, pairs[first:first + celery_app.CHUNK_MAX])
                batch = dict(pairs[:keep])

    def _repoll_lost(self, traversal_id: str, batch: dict, queue: str, conn: Any) -> None:
        """The nodes of a redelivered task one step further than it says: its worker parked them and
        may have died before it enqueued their next step.  Enqueued again: a second task of one
        step finds it stale once the first has acted (or the node locked, and looks again then)."""
        _view, nodes = traversal.read(conn, traversal_id, batch)
        celery_app.send(self.app, queue, traversal_id, [(rid, node.step) for rid, node in nodes.items()
                                                        if node.state != traversal.DONE
                                                        and node.step == batch[rid] + 1], countdown=BUSY_RETRY)

    def _round(self, traversal_id: str, batch: dict, queue: str, conn: Any) -> dict:
        """One pass over ``batch`` (id -> step); returns the nodes to run next here (id -> step)."""
        store = self.engine.store
        held = traversal.try_locks(conn, traversal_id, batch)
        view, nodes = traversal.read(conn, traversal_id, batch)
        if view is not None and view.status == traversal.ENDING:
            self._end_once(view, batch, queue, conn)  # its ender may have been lost
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
            self._end_once(view, batch, queue, conn)  # or the end it was to record
            return {}
        view = self._notice_stop(view, conn)
        following = {rid: step for rid, step in following.items() if rid not in batch}
        acting = sorted(rid for rid, node in nodes.items() if node.state != traversal.DONE)
        if not acting:
            return following
        batched = _batched(view)
        if not batched:  # one node per task: the others go to tasks of their own
            self._hand_out(view, nodes, acting[1:], queue, conn)
            acting = acting[:1]
        if view.execution_pk is not None:
            ended, parked, writes, beat = self._execution_steps(view, nodes, acting, conn)
        else:
            ended, parked, writes, beat = self._resource_steps(view, nodes, acting, queue, conn)
        moved = traversal.advance(store, traversal_id, ended, parked, writes, beat, conn)
        self._repoll(view, queue, parked, moved.steps)
        if ended and not moved.ready and traversal.end_if_done(store, traversal_id, conn):
            self._end_once(view, batch, queue, conn)
            return {}
        keep = celery_app.chunk_size(len(moved.ready)) if batched else 1
        celery_app.publish(self.app, queue, traversal_id, moved.ready[keep:], batched)
        return {**following, **{rid: 0 for rid in moved.ready[:keep]}}

    def _resource_steps(self, view: Any, nodes: dict, acting: list, queue: str, conn: Any) -> tuple:
        """Start or continue the resources' actions: (ended: id -> (dependents, succeeded), parked:
        id -> seconds, the writes not committed yet, the stack lock's heartbeat)."""
        owner = stack_actions.traversal_owner(view.traversal_id)
        stack, resources = self.stack_for(view, acting, conn)
        if len(resources) > 1:  # resources acting outside Stoker may take long: the others need not wait
            alone = sorted(rid for rid, resource in resources.items() if resource.acts_outside)
            self._hand_out(view, nodes, alone, queue, conn)
            resources = {rid: resource for rid, resource in resources.items() if rid not in alone}
            stack.recorder.defer = True
        pending = [rid for rid in resources if nodes[rid].state == traversal.PENDING]
        began = traversal.begin_nodes(conn, view.traversal_id, pending, view.stack_id, owner)
        ended = {rid: (nodes[rid].dependents, False) for rid in pending if rid not in began}
        running = {rid: resource for rid, resource in resources.items() if rid not in ended}
        with _keeping_lock(self.engine.store, view.stack_id, owner, stack.recorder.defer):
            outcomes = asyncio.run(self._steps(view, stack, running, nodes))
        parked = {rid: seconds for rid, (_ok, seconds) in outcomes.items() if seconds is not None}
        ended.update({rid: (nodes[rid].dependents, ok) for rid, (ok, seconds) in outcomes.items() if seconds is None})
        return ended, parked, stack.recorder.take(), (view.stack_id, owner)

    def _execution_steps(self, view: Any, nodes: dict, acting: list, conn: Any) -> tuple:
        """Run the execution's step (``_resource_steps``' result); one whose operation retries later
        parks until then (its node's step is the retry it goes on at)."""
        number = acting[0]
        node = nodes[number]
        owner = stack_actions.traversal_owner(view.traversal_id)
        began = node.state == traversal.RUNNING or bool(
            traversal.begin_nodes(conn, view.traversal_id, [number], None, owner))
        if node.state == traversal.RUNNING and view.interrupt:  # parked (or its worker lost), now stopped
            self.steps.wind_down(view, number)
        try:
            succeeded = began and not view.interrupt and self.steps.run(view, number, node.step,
                                                                        taken_over=node.state == traversal.RUNNING)
        except Parked as parked:
            self.steps.parked(view)
            return {}, {number: parked.seconds}, ([], []), None
        return {number: (node.dependents, succeeded)}, {}, ([], []), None

    def _hand_out(self, view: Any, nodes: dict, ids: list, queue: str, conn: Any) -> None:
        """Give these nodes (their locks released) to tasks of their own."""
        traversal.release(conn, view.traversal_id, ids)
        for rid in ids:
            celery_app.send(self.app, queue, view.traversal_id, [(rid, nodes[rid].step)])

    def _repoll(self, view: Any, queue: str, parked: dict, steps: dict) -> None:
        """Parked nodes come back after their countdown, those of one countdown in one task."""
        by_delay: dict[float, list] = {}
        for rid, seconds in parked.items():
            by_delay.setdefault(seconds, []).append((rid, steps[rid]))
        for seconds, parked_nodes in by_delay.items():
            celery_app.send(self.app, queue, view.traversal_id, parked_nodes, countdown=seconds)

    async def _steps(self, view: Any, stack: Any, resources: dict, nodes: dict) -> dict:
        """Each resource's step, one after the other: id -> (succeeded, None) when its action
        ended, (False, seconds to wait) when it was parked."""
        watch = StepWatch(asyncio.current_task())
        watcher = asyncio.ensure_future(self._watch(view, stack, watch))
        try:
            return {rid: await self._step(view, stack, resource, nodes[rid], watch)
                    for rid, resource in resources.items()}
        finally:
            watcher.cancel()
            await asyncio.gather(watcher, return_exceptions=True)

    async def _step(self, view: Any, stack: Any, resource: Any, node: Any,
                    watch: "StepWatch") -> tuple[bool, float | None]:
        kind = KINDS[view.action]
        if kind.winds_down and (view.stopping is not None or watch.stopped):
            stack.cancel_reason = stack.cancel_reason or _interrupted(view)  # starts nothing, ends what it started
        elif view.interrupt or watch.stopped:  # what is in progress (in an update: perhaps its replacement's create) fails
            acting = stack.resources.get(resource.name, resource) if kind.updating else resource
            if acting.status == acting.IN_PROGRESS:
                if acting.winding_down():  # its nested stack stops first (stopped with this traversal)
                    return False, BUSY_RETRY
                await acting.set_state(acting.action, acting.FAILED, stack.cancel_reason or _interrupted(view))
            return False, None
        if _ended_before(view, node, resource, kind.resource_action):
            return resource.status == resource.COMPLETE, None  # ended before its worker was lost
        if resource.status == resource.IN_PROGRESS:  # perhaps its worker was lost mid-command
            processes.stop_orphan(resource.data().get(processes.PROCESS_KEY))
        try:
            with watch:
                await kind.run(stack, resource)
        except Parked as parked:
            return False, parked.seconds
        except asyncio.CancelledError:
            if not watch.stopped:
                raise
            asyncio.current_task().uncancel()
            return False, None  # failed as cancelled (``Resource.acting``), as in-process
        except (OperationalError, InterfaceError):
            raise  # the database went away: the task is retried, the resource not failed
        except Exception as exc:  # a plug-in may raise anything: it becomes the reason
            reason = str(exc) if isinstance(exc, StokerError) else f"{type(exc).__name__}: {exc}"
            traversal.stop(self.engine.store, view.traversal_id, reason, interrupt=False,
                           first_prefix=f"Resource {kind.stack_action} failed: ")
            return False, None
        return True, None

    async def _watch(self, view: Any, stack: Any, watch: "StepWatch") -> None:
        """Look at the traversal while the steps run, as the in-process watcher does while an action
        runs: what a step runs here (a nested stack's update) starts nothing new once the traversal
        is cancelled, and a cancel with rollback or a timeout cancels the step running."""
        while True:
            await asyncio.sleep(STEP_WATCH)
            reason, interrupt = await asyncio.to_thread(self._stop_seen, view.traversal_id)
            if reason is not None and stack.cancel_reason is None:
                stack.cancel_reason = reason
            if interrupt:
                watch.stop()
                return

    def _stop_seen(self, traversal_id: str) -> tuple[str | None, bool]:
        """(why the traversal stops, if a cancel or a timeout stops it; whether running steps stop
        too), noticing a cancel request or a passed deadline first (no other task may be looking)."""
        with self.engine.store.engine.connect() as conn:
            view = traversal.read(conn, traversal_id)[0]
            if view is None:
                return None, False
            view = self._notice_stop(view, conn)
            conn.commit()
        cancelled = view.interrupt or (view.stopping is not None and not view.cancel_rollback)
        return (view.stopping, view.interrupt) if cancelled else (None, False)

    def _notice_stop(self, view: Any, conn: Any) -> Any:
        """A cancel request or a passed deadline stops the traversal, running nodes included."""
        if view.execution_pk is not None:
            stopped = self.steps.notice_cancel(view)
        else:
            stopped = self._notice_stack_stop(view)
        return (traversal.read(conn, view.traversal_id)[0] or view) if stopped else view

    def _notice_stack_stop(self, view: Any) -> bool:
        """As in-process: a cancel without rollback fails the stack at once and lets what runs
        finish (the request is taken, so that another, a delete's, stops those too); a cancel with
        rollback, a second one, or a timeout stops what runs as well."""
        if view.interrupt:
            return False
        if view.cancel_requested:
            reason = f"Stack {stack_action(view.action)} cancelled"
            if not view.cancel_rollback and view.stopping is None:
                if traversal.cancel_gracefully(self.engine.store, view.traversal_id, reason):
                    stack_actions.fail_at_once(self.engine.for_project(view.project_id), view.stack_id, view.action, reason)
                return True
        elif view.deadline is not None and datetime.now(timezone.utc) >= view.deadline:
            reason = f"{stack_action(view.action)} timed out"
        else:
            return False
        traversal.stop(self.engine.store, view.traversal_id, reason, interrupt=True)
        return True

    def _end_once(self, view: Any, batch: dict, queue: str, conn: Any) -> None:
        """Run the end of the ENDING traversal unless another worker runs it (holds its lock: then
        the batch looks again later, in case that worker is lost before the end is recorded).  A
        traversal's end (a stack action's, a workflow execution's) is run again whole by a task that
        finds its ender lost: each step of it finds what an earlier run did, and does not do it twice."""
        if not traversal.take_end(conn, view.traversal_id):
            celery_app.send(self.app, queue, view.traversal_id, list(batch.items()), countdown=BUSY_RETRY)
        elif traversal.status(self.engine.store, view.traversal_id) == traversal.ENDING:
            self._end(view, queue)

    def _end(self, view: Any, queue: str) -> None:
        if view.execution_pk is not None:
            self.steps.end(view)
            return
        engine = self.engine.for_project(view.project_id)
        record = engine.store.get_stack(view.stack_id, view.project_id, show_deleted=True)
        stack_actions.end_traversal(engine, self.app, queue, view.traversal_id, record)


def _batched(view: Any) -> bool:
    """Whether the traversal's nodes run several per task (an execution's steps do not: each runs
    scripts with a ctx server of its own)."""
    return view.execution_pk is None and KINDS[view.action].batched


def _keeping_lock(store: Any, stack_id: str, owner: str, quick: bool) -> Any:
    """While a plug-in's handler runs (perhaps for minutes), the stack lock's heartbeat goes on;
    not for ``quick`` steps (of resources that act on nothing outside Stoker: a thread per round
    would cost them more than their own work)."""
    return nullcontext() if quick else beating(lambda: store.heartbeat_lock(stack_id, owner), LOCK_BEAT)


def _rows(conn: Any, stack_id: str, resource_ids: list, names: list | tuple = ()) -> list:
    """In one query: the resources' rows (and those ``names`` gives), rows of the same names, and
    those of what they require."""
    this = RESOURCES.alias()
    picked = traversal.among(this.c.id, resource_ids)
    if names:
        picked = or_(picked, and_(this.c.stack_id == stack_id, this.c.name == any_(cast(list(names), ARRAY(String)))))
    names = union(select(this.c.name).where(picked),
                  select(func.json_array_elements_text(this.c.requires).label("name")).where(picked)).subquery()
    # as one array: the planner looks the names up in the (stack, name) index, however many rows
    # it guesses the requirements expand to
    wanted = cast(select(func.array_agg(names.c.name)).scalar_subquery(), ARRAY(String))
    query = (select(RESOURCES).where(RESOURCES.c.stack_id == stack_id, RESOURCES.c.name == any_(wanted))
             .order_by(RESOURCES.c.id))
    return ResourceRow.from_rows(conn.execute(query))


def _metadata_readers(stack: Any, action: str) -> list:
    """A signal's: the resources with template metadata, which its end may resolve again
    (``signals.refresh_metadata``), loaded with what that metadata reads."""
    if action != "SIGNAL":
        return []
    return [name for name, definition in stack.definition.resources.items() if definition.metadata]


def _interrupted(view: Any) -> str:
    return view.stopping or f"Stack {stack_action(view.action)} cancelled"


def _ended_before(view: Any, node: Any, resource: Any, action: str) -> bool:
    """Did the resource's action end before the worker running it was lost (its node's end
    not committed)?  A create is known by its state; the others by the node having run
    (a SUSPEND_COMPLETE from an earlier suspend is not this one's)."""
    if action in ("CREATE", "ADOPT"):  # an adopt creates what it was not given
        return resource.action != resource.INIT and resource.state != (resource.CREATE, resource.IN_PROGRESS)
    return (node.state == traversal.RUNNING and not KINDS[view.action].updating
            and resource.action == action and resource.status != resource.IN_PROGRESS)


def _update_rows(conn: Any, stack: Any, resource_id: int) -> list:
    """The rows an update of the node's resource reads: those of its name (current, replaced,
    placeholder) and those of what the new definition makes it require."""
    name = conn.execute(select(RESOURCES.c.name).where(RESOURCES.c.id == resource_id)).scalar_one()
    definition = stack.definition.resources.get(name)
    names = {name} | (definition.dependencies() & set(stack.definition.resources) if definition else set())
    query = (select(RESOURCES).where(RESOURCES.c.stack_id == stack.id, RESOURCES.c.name.in_(names))
             .order_by(RESOURCES.c.id))
    return ResourceRow.from_rows(conn.execute(query))


def _leave_out_unmade(stack: Any) -> None:
    """Rows never acted on (INIT: placeholders the update's start made for new names, or left by a
    create that stopped) are left out of an update's stack, so the update creates those resources
    on rows of their own and the node's row stays for a redelivered task to read its name from."""
    stack.retired = [r for r in stack.retired if r.action != r.INIT]
    for name, resource in list(stack.resources.items()):
        if resource.action == resource.INIT:
            del stack.resources[name]


def make_worker_app(broker_url: str, db_url: str, plugin_dirs: tuple[str, ...] = ()) -> Any:
    """The Celery app of a worker process, with Stoker's task bound to a ``Worker``."""
    app = celery_app.make_app(broker_url)
    worker = Worker(app, db_url, plugin_dirs)

    @app.task(name=celery_app.RUN_NODES, autoretry_for=(OperationalError, InterfaceError, DatabaseAway),
              retry_backoff=0.5, retry_backoff_max=10, max_retries=None, bind=True)
    def run_nodes(task: Any, traversal_id: str, nodes: list, queue: str) -> None:
        redelivered = bool((task.request.delivery_info or {}).get("redelivered"))
        worker.run_nodes(traversal_id, nodes, queue, redelivered)

    return app
