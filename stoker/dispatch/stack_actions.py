"""A distributed stack action's start and end.

The start does what is quick and must happen once: take the stack's lock
for the traversal, record the stack IN_PROGRESS, give new resources their
rows, store the traversal and enqueue what is ready.  The end is decided by
the worker that saw the last resource end, from the stored state: why the
traversal stopped (or that it did not) and its action; how the stack
action ends, and whether a rollback follows, is ``engine/outcomes.py``'s
(the in-process driver's too); an update's (or its rollback's) resources
done, the delete of what it replaced follows (``kinds.CLEANUP``).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, suppress
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Callable, Iterator

from sqlalchemy.exc import IntegrityError

from stoker.dispatch import celery_app, kinds, traversal
from stoker.dispatch.step import DirectRecorder
from stoker.engine import actions, outcomes, snapshots
from stoker.engine.graph import Graph
from stoker.engine.stack import STACK_RESOURCE_TYPE, Stack
from stoker.errors import Conflict, StokerError
from stoker.lease import StackLease
from stoker.store.models import utcnow

if TYPE_CHECKING:  # pragma: no cover
    from celery import Celery

    from stoker.engine.host import ActionHost
    from stoker.store.models import Stack as StackRecord
    from stoker.store.repository import Store

IN_PROGRESS, COMPLETE, FAILED = "IN_PROGRESS", "COMPLETE", "FAILED"
#: the namespace of ids derived from a traversal's: the traversal that follows it, its failure's event
DERIVED = uuid.UUID("6f1d6c2e-5b0a-4f43-9a57-2d8e0c4b7a31")
LOG = logging.getLogger("stoker.dispatch")


class StartFailed(StokerError):
    """The broker or the database failed while an action was being handed to the workers."""

    code = "dispatch-start-failed"


def traversal_owner(traversal_id: str) -> str:
    """The stack lock's owner while workers run a traversal (alive until the traversal ends)."""
    return f"dispatch:{traversal_id}"


def _follower(traversal_id: str) -> str:
    """The id of the traversal that follows this one (one for each: an end run again after its
    worker was lost starts the same one)."""
    return str(uuid.uuid5(DERIVED, traversal_id))


def _hand_over(store: Store, stack_id: str, follows: str, action: str) -> str | None:
    """The id of the traversal that follows ``follows``, the stack lock now its own (the cancel
    request ``follows`` answered gone with it); None if it ran and ended before (nothing to start
    again)."""
    traversal_id = _follower(follows)
    if traversal.status(store, traversal_id) == traversal.ENDED:
        return None
    store.hand_over_lock(stack_id, traversal_owner(follows), traversal_owner(traversal_id), action)
    return traversal_id


def start_create(engine: ActionHost, app: Celery, queue: str, stack: Stack, timeout_mins: int | None,
                 disable_rollback: bool, action: str = "CREATE") -> None:
    """Create a stored new stack's resources through the workers (or ADOPT them: the adopted
    resources' data goes with the traversal)."""
    traversal_id = str(uuid.uuid4())
    engine.store.acquire_lock(stack.id, traversal_owner(traversal_id), action)
    with _failing_start(engine, stack, action, traversal_id):
        graph = asyncio.run(_prepare_create(stack, action))
        begin(engine, app, queue, traversal_id, stack.id, action, graph, timeout_mins, disable_rollback,
              stack.adopted_data if action == "ADOPT" else None)


async def start_nested(engine: ActionHost, app: Celery, queue: str, stack: Stack, action: str, traversal_id: str,
                       previous: dict | None = None) -> None:
    """A nested stack's CREATE, UPDATE (its new definition stored by ``Engine.prepare_child_update``),
    DELETE, SUSPEND, RESUME or CHECK through the workers: its owner resource, on a worker, polls it
    instead of running it to its end there.  ``traversal_id``, chosen by the owner, is the lock's
    owner: a start a lost worker left half done is made again under it.  Its rollback is off, as
    in-process (the parent's decides); ``previous`` (an update's inputs before) serves a cancel
    that asks for one."""
    engine.store.acquire_lock(stack.id, traversal_owner(traversal_id), action)
    if action == "CREATE":
        graph = await _prepare_create(stack)
    elif action == "UPDATE":
        graph = await _prepare_update(stack, action)
    else:
        await _prepare_stored(stack, action)
        graph = _stored_graph(stack, action)
    timeout_mins = None if action == "CREATE" else stack.record.timeout_mins
    # on a thread of its own: an empty stack ends at once, on an event loop of its own
    await asyncio.to_thread(begin, engine, app, queue, traversal_id, stack.id, action, graph, timeout_mins, True,
                            previous)


def nested_begun(engine: ActionHost, app: Celery, queue: str, traversal_id: str) -> bool:
    """Whether a nested stack's traversal was stored.  The worker that stored it may have been lost
    before it enqueued the nodes ready at its start: while it runs, those still waiting to start
    are enqueued again (a second task of a node finds it taken, or its step stale).  An empty one,
    which its start ends at once, is ended here if that worker was lost before it ended it."""
    empty = traversal.unended_empty(engine.store, traversal_id)
    if empty is not None:
        _end_lost_empty(engine, app, queue, traversal_id, empty)
        return True
    found = traversal.ready_unstarted(engine.store, traversal_id)
    if found is None:
        return False
    action, ready = found
    celery_app.publish(app, queue, traversal_id, ready, kinds.KINDS[action].batched)
    return True


def _end_lost_empty(engine: ActionHost, app: Celery, queue: str, traversal_id: str, stack_id: str) -> None:
    """End a nested stack's empty traversal under its end lock, on a thread of its own: the caller
    (the owner resource's step) runs on an event loop, and the end runs one of its own."""
    def end() -> None:
        with traversal.resource_locks(engine.store) as conn:
            if traversal.take_end(conn, traversal_id):
                record = engine.store.get_stack(stack_id, engine.project_id, show_deleted=True)
                end_traversal(engine, app, queue, traversal_id, record)

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="stoker-end") as pool:
        pool.submit(end).result()


async def _prepare_create(stack: Stack, action: str = "CREATE") -> Graph:
    """The stack IN_PROGRESS, its resources' rows; the graph of resource ids to walk."""
    await stack.set_state(action, IN_PROGRESS, f"Stack {action} started")
    by_name = await actions.insert_new(stack)
    await stack.recorder.flush()
    return by_id(stack, by_name)


@contextmanager
def _failing_start(engine: ActionHost, stack: Stack | StackRecord, action: str, traversal_id: str,
                   state: bool = True) -> Iterator[None]:
    """A start that fails (the broker or the database is down) leaves the stack FAILED (without
    ``state``, as it was: a signal's, whose ``stack`` may be its record) and unlocked."""
    try:
        yield
    except Exception as exc:
        reason = f"Stack {action} could not be started on the workers: {type(exc).__name__}: {exc}"
        try:
            traversal.stop(engine.store, traversal_id, reason, interrupt=True)  # what was enqueued stops
            if state:
                asyncio.run(stack.set_state(action, FAILED, reason))
        finally:
            engine.store.release_lock(stack.id, traversal_owner(traversal_id))
        raise StartFailed(reason) from exc


def by_id(stack: Stack, graph: Graph) -> Graph:
    """A graph of resource names as one of resource ids (the workers' node keys)."""
    ids = {name: stack.resources[name].id for name in graph.requires}
    return Graph({ids[name]: {ids[r] for r in reqs if r in ids} for name, reqs in graph.requires.items()})


def start_on_stored(engine: ActionHost, app: Celery, queue: str, record: StackRecord, action: str,
                    follows: str | None = None) -> None:
    """An action on the stack's stored resources (no new rows) through the workers: a delete (or
    a rollback, following the traversal ``follows``), a suspend, resume, check or snapshot."""
    if follows is None:
        traversal_id = str(uuid.uuid4())
        engine.store.acquire_lock(record.id, traversal_owner(traversal_id), action)
    else:  # a rollback takes the lock over from the create it follows
        traversal_id = _hand_over(engine.store, record.id, follows, action)
        if traversal_id is None:
            return
    stack = engine.runtime(record)
    with _failing_start(engine, stack, action, traversal_id):
        asyncio.run(_prepare_stored(stack, action))
        begin(engine, app, queue, traversal_id, record.id, action, _stored_graph(stack, action), record.timeout_mins,
              True)


def start_signal(engine: ActionHost, app: Celery, queue: str, record: StackRecord, resource_name: str,
                 details: Any) -> None:
    """Have the workers act on a signal (``kinds``' SIGNAL: one node, the signalled resource); the
    caller is answered at once.  The stack lock is the traversal's, its state left alone (a signal
    is no stack action); while another action holds the lock the signal is ignored, as in-process."""
    traversal_id = str(uuid.uuid4())
    try:
        engine.store.acquire_lock(record.id, traversal_owner(traversal_id), "SIGNAL")
    except Conflict as busy:
        LOG.info("signal to %s ignored: %s", resource_name, busy)
        return
    with _failing_start(engine, record, "SIGNAL", traversal_id, state=False):
        node = _current_row(engine.store, record.id, resource_name)
        begin(engine, app, queue, traversal_id, record.id, "SIGNAL", Graph({node: set()}), None, True,
              {"resource": resource_name, "details": details})


def _current_row(store: Store, stack_id: str, name: str) -> int:
    """The id of the resource row that is ``name`` now (not one it replaced): read, not parsed."""
    return [row.id for row in store.get_resources(stack_id, [name]) if row.replaced_by is None][-1]


async def _prepare_stored(stack: Stack, action: str) -> None:
    await stack.set_state(action, IN_PROGRESS, f"Stack {action} started")
    await stack.recorder.flush()


def _stored_graph(stack: Stack, action: str) -> Graph:
    """A delete's: every resource, current and retired, dependents first; else the action's order."""
    if kinds.KINDS[action].resource_action != "DELETE":
        return actions.simple_graph(stack, action)
    return actions.stored_graph(list(stack.resources.values()) + stack.retired).reversed()


def start_update(engine: ActionHost, app: Celery, queue: str, record: StackRecord,
                 prepare: Callable[[], tuple[Stack, Stack]], rollback: bool, action: str = "UPDATE",
                 given: dict | None = None) -> Stack:
    """Update the stack through the workers; ``prepare`` checks and stores the new definition
    (``Engine.prepare_update``) once the lock is held.  Returns the new stack.  ``action``: UPDATE
    or RESTORE (``given``, kept with the traversal, names the snapshot for ``end_traversal``)."""
    traversal_id = str(uuid.uuid4())
    engine.store.acquire_lock(record.id, traversal_owner(traversal_id), action)
    try:
        stack, _old = prepare()
    except BaseException:  # an invalid template changes nothing
        engine.store.release_lock(record.id, traversal_owner(traversal_id))
        raise
    # kept even when rollback is off: a cancel_update rolls back all the same (as Heat)
    _begin_update(engine, app, queue, stack, traversal_id, action, {**record.inputs(), **(given or {})},
                  not rollback)
    return stack


def _begin_update(engine: ActionHost, app: Celery, queue: str, stack: Stack, traversal_id: str, action: str,
                  previous: dict | None, disable_rollback: bool) -> None:
    """An update traversal (or its rollback's): one node per resource of the definition, keyed by
    the resource's row; a new name gets a row (INIT) to key it."""
    shown = kinds.stack_action(action)
    with _failing_start(engine, stack, shown, traversal_id):
        graph = asyncio.run(_prepare_update(stack, action))
        begin(engine, app, queue, traversal_id, stack.id, action, graph, stack.record.timeout_mins,
              disable_rollback, previous)


async def _prepare_update(stack: Stack, action: str) -> Graph:
    """The stack IN_PROGRESS, a row (INIT) for each new name; the graph of the definition's resources."""
    shown = kinds.stack_action(action)
    await stack.set_state(shown, IN_PROGRESS, f"Stack {shown} started")
    names = set(stack.definition.enabled_resources())
    new = [stack.instantiate(name, stack.definition.resources[name])
           for name in names if name not in stack.resources]
    await stack.insert(new)
    stack.resources.update({r.name: r for r in new})
    await stack.recorder.flush()
    return by_id(stack, actions.dependency_graph(stack, names))


def _follow(engine: ActionHost, app: Celery, queue: str, record: StackRecord, follows: str, action: str,
            previous: dict | None, disable_rollback: bool) -> None:
    """The next traversal of the same stack action (after the traversal ``follows``): the lock
    goes over to it."""
    traversal_id = _hand_over(engine.store, record.id, follows, kinds.stack_action(action))
    if traversal_id is None:
        return
    record = engine.store.get_stack(record.id, record.project_id)
    stack = engine.runtime(record)
    if action in kinds.CLEANUP.values():  # what the update replaced or removed, dependents first
        with _failing_start(engine, stack, kinds.stack_action(action), traversal_id):
            begin(engine, app, queue, traversal_id, record.id, action,
                  actions.stored_graph(stack.retired).reversed(), record.timeout_mins, disable_rollback, previous)
        return
    _begin_update(engine, app, queue, stack, traversal_id, action, previous, disable_rollback)


def _roll_update_back(engine: ActionHost, app: Celery, queue: str, record: StackRecord, follows: str,
                      previous: dict) -> None:
    """Back to the inputs before the update (an update the other way); the cancel that stopped
    the update must not stop its rollback too."""
    engine.store.update_stack(record.id, template_id=previous["template_id"], parameters=previous["parameters"],
                              environment=previous["environment"], files=previous["files"])
    _follow(engine, app, queue, record, follows, "UPDATE_ROLLBACK", None, True)


def begin(engine: ActionHost, app: Celery, queue: str, traversal_id: str, stack_id: str, action: str, graph: Graph,
          timeout_mins: int | None, disable_rollback: bool, given: dict | None = None) -> None:
    """Store the traversal and enqueue what is ready; an empty one ends at once."""
    deadline = utcnow() + timedelta(minutes=timeout_mins) if timeout_mins else None
    ready = traversal.start(engine.store, traversal_id, stack_id, action, graph, deadline, disable_rollback,
                            given)
    traversal.inherit_stop(engine.store, traversal_id, stack_id)  # a nested stack's parent was cancelled
    if not graph.requires:
        end_traversal(engine, app, queue, traversal_id, engine.store.get_stack(stack_id, engine.project_id))
        return
    celery_app.publish(app, queue, traversal_id, ready, kinds.KINDS[action].batched)


def end_traversal(engine: ActionHost, app: Celery, queue: str, traversal_id: str, record: StackRecord) -> None:
    """Record the stack's end state and give the lock up, or start what follows (a rollback, an
    update's cleanup), then mark the traversal ended.

    Run again from the start when its worker was lost midway (the traversal
    still ENDING): each step finds what an earlier run did and does not do it
    twice (a state already recorded, what follows already started), and the
    traversal is marked ended last.
    """
    store = engine.store
    action, stopping, disable_rollback = traversal.outcome(store, traversal_id)
    kind = kinds.KINDS[action]
    if not kind.stack_state:  # (a signal's outcome is its resource's event)
        store.release_lock(record.id, traversal_owner(traversal_id))
        traversal.mark_ended(store, traversal_id)
        return
    shown = kind.stack_action
    stack = engine.defined(record, lazy=True)  # its state recorded: no need to parse every resource
    stack.recorder = DirectRecorder(engine)
    owner = traversal_owner(traversal_id)
    if kind.resource_action == "DELETE":  # rows of what is gone go; the others stay for the next delete
        store.delete_resources_bulk(row.id for row in store.get_resources(record.id)
                                    if row.action == "INIT" or (row.action, row.status) == ("DELETE", COMPLETE))
    if stopping is None and action == "CHECK":
        stopping = _check_failures(store, record.id)
    if stopping is None and action in kinds.CLEANUP:
        _follow(engine, app, queue, record, traversal_id, kinds.CLEANUP[action],
                traversal.given(store, traversal_id), disable_rollback)
        traversal.mark_ended(store, traversal_id)
        return
    if shown in ("SNAPSHOT", "RESTORE"):  # the snapshot stored, or its data given back, before the stack ends
        snapshots.after_traversal(engine, record, shown, traversal.given(store, traversal_id), stopping)
    if stopping is not None and outcomes.OUTCOMES[shown].rollback and _began_following(store, record, traversal_id):
        follows = outcomes.OUTCOMES[shown].rollback  # decided by an earlier run of this end
    else:
        follows = asyncio.run(outcomes.end_action(stack, shown, stopping, disable_rollback,
                                                  StackLease(store, record.id).cancel_request()))
    if follows is None:
        store.release_lock(record.id, owner)
        traversal.mark_ended(store, traversal_id)
        return
    _record_failure(store, record, traversal_id, shown, stack.redact(stopping))
    if follows == outcomes.UPDATE_BACK:
        _roll_update_back(engine, app, queue, record, traversal_id, traversal.given(store, traversal_id))
    else:
        start_on_stored(engine, app, queue, store.get_stack(record.id, record.project_id), follows, traversal_id)
    traversal.mark_ended(store, traversal_id)


def _record_failure(store: Store, record: StackRecord, traversal_id: str, shown: str, reason: str) -> None:
    """The failure that starts a rollback is an event; the stack goes on IN_PROGRESS (a ROLLBACK
    now), so no one watching it takes CREATE_FAILED (UPDATE_FAILED) for the end.  Once, however
    often the end runs: the event's uuid is derived from the traversal's id."""
    with suppress(IntegrityError):  # recorded by a run of the end before
        store.add_event(record.id, uuid=str(uuid.uuid5(DERIVED, f"{traversal_id}/failed")),
                        resource_name=record.name, resource_type=STACK_RESOURCE_TYPE,
                        physical_resource_id=record.id, action=shown, status=FAILED, reason=reason)


def fail_at_once(engine: ActionHost, stack_id: str, action: str, reason: str) -> None:
    """The stack FAILED while its traversal winds down (a cancel without rollback); the traversal's
    end records the same state again, which makes no second event."""
    if not kinds.KINDS[action].stack_state:
        StackLease(engine.store, stack_id).heard()  # taken: another request stops the rest
        return
    stack = engine.defined(engine.store.get_stack(stack_id, engine.project_id))
    stack.recorder = DirectRecorder(engine)
    asyncio.run(outcomes.fail_at_once(stack, kinds.stack_action(action), reason))


def _check_failures(store: Store, stack_id: str) -> str | None:
    """A check stops for nothing: what it found wrong is in its resources' CHECK_FAILED states."""
    found = [row.status_reason for row in store.get_resources(stack_id)
             if (row.action, row.status) == ("CHECK", FAILED)]
    return "Resource CHECK failed: " + "; ".join(found) if found else None


def _began_following(store: Store, record: StackRecord, traversal_id: str) -> bool:
    """Whether an earlier run of the end began the rollback (the lock handed over to it, or its
    traversal stored): the cancel request that decided it is gone since."""
    follower = _follower(traversal_id)
    return record.lock_owner == traversal_owner(follower) or traversal.status(store, follower) is not None
