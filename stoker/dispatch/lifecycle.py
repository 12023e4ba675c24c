"""A distributed stack action's start and end.

The start does what is quick and must happen once: take the stack's lock
for the traversal, record the stack IN_PROGRESS, give new resources their
rows, store the traversal and enqueue what is ready.  The end is decided by
the worker that saw the last resource end, from the stored state: why the
traversal stopped (or that it did not), its action, and whether a failed
create rolls back.
"""

from __future__ import annotations

import asyncio
import uuid
from contextlib import contextmanager
from datetime import timedelta
from typing import Any, Iterator

from stoker.dispatch import celery_app, traversal
from stoker.dispatch.step import DirectRecorder
from stoker.engine import actions
from stoker.engine.graph import Graph
from stoker.engine.stack import STACK_RESOURCE_TYPE, Stack
from stoker.errors import StokerError
from stoker.store.models import utcnow

IN_PROGRESS, COMPLETE, FAILED = "IN_PROGRESS", "COMPLETE", "FAILED"


class StartFailed(StokerError):
    """The broker or the database failed while an action was being handed to the workers."""

    code = "dispatch-start-failed"


def traversal_owner(traversal_id: str) -> str:
    """The stack lock's owner while workers run a traversal (alive until the traversal ends)."""
    return f"dispatch:{traversal_id}"


def start_create(engine: Any, app: Any, queue: str, stack: Stack, timeout_mins: int | None,
                 disable_rollback: bool) -> None:
    """Create a stored new stack's resources through the workers."""
    traversal_id = str(uuid.uuid4())
    engine.store.acquire_lock(stack.id, traversal_owner(traversal_id), "CREATE")
    with _failing_start(engine, stack, "CREATE", traversal_id):
        graph = asyncio.run(_prepare_create(stack))
        begin(engine, app, queue, traversal_id, stack.id, "CREATE", graph, timeout_mins, disable_rollback)


async def start_nested_create(engine: Any, app: Any, queue: str, stack: Stack) -> None:
    """Create a stored new nested stack's resources through the workers (its owner resource, on a
    worker, polls it instead of running it to its end there)."""
    traversal_id = str(uuid.uuid4())
    engine.store.acquire_lock(stack.id, traversal_owner(traversal_id), "CREATE")
    graph = await _prepare_create(stack)
    # on a thread of its own: an empty stack ends at once, on an event loop of its own
    await asyncio.to_thread(begin, engine, app, queue, traversal_id, stack.id, "CREATE", graph, None, True)


async def start_nested_delete(engine: Any, app: Any, queue: str, stack: Stack) -> None:
    """Delete a nested stack's resources through the workers (its owner resource polls it)."""
    traversal_id = str(uuid.uuid4())
    engine.store.acquire_lock(stack.id, traversal_owner(traversal_id), "DELETE")
    await _prepare_delete(stack, "DELETE")
    await asyncio.to_thread(begin, engine, app, queue, traversal_id, stack.id, "DELETE", _delete_graph(stack),
                            stack.record.timeout_mins, True)


async def _prepare_create(stack: Stack) -> Graph:
    """The stack IN_PROGRESS, its resources' rows; the graph of resource ids to walk."""
    await stack.set_state("CREATE", IN_PROGRESS, "Stack CREATE started")
    by_name = await actions.insert_new(stack)
    await stack.recorder.flush()
    return by_id(stack, by_name)


@contextmanager
def _failing_start(engine: Any, stack: Stack, action: str, traversal_id: str) -> Iterator[None]:
    """A start that fails (the broker or the database is down) leaves the stack FAILED and unlocked."""
    try:
        yield
    except Exception as exc:
        reason = f"Stack {action} could not be started on the workers: {type(exc).__name__}: {exc}"
        try:
            traversal.stop(engine.store, traversal_id, reason, interrupt=True)  # what was enqueued stops
            asyncio.run(stack.set_state(action, FAILED, reason))
        finally:
            engine.store.release_lock(stack.id, traversal_owner(traversal_id))
        raise StartFailed(reason) from exc


def by_id(stack: Stack, graph: Graph) -> Graph:
    """A graph of resource names as one of resource ids (the workers' node keys)."""
    ids = {name: stack.resources[name].id for name in graph.requires}
    return Graph({ids[name]: {ids[r] for r in reqs if r in ids} for name, reqs in graph.requires.items()})


def start_delete(engine: Any, app: Any, queue: str, record: Any, action: str,
                 owner: str | None = None) -> None:
    """Delete (or roll back) every resource of the stack through the workers."""
    traversal_id = str(uuid.uuid4())
    if owner is not None:  # a rollback takes the lock over from the create it follows
        engine.store.release_lock(record.id, owner)
    engine.store.acquire_lock(record.id, traversal_owner(traversal_id), action)
    stack = engine.runtime(record)
    with _failing_start(engine, stack, action, traversal_id):
        asyncio.run(_prepare_delete(stack, action))
        begin(engine, app, queue, traversal_id, record.id, action, _delete_graph(stack), record.timeout_mins, True)


async def _prepare_delete(stack: Stack, action: str) -> None:
    await stack.set_state(action, IN_PROGRESS, f"Stack {action} started")
    await stack.recorder.flush()


def _delete_graph(stack: Stack) -> Graph:
    """Every resource, current and retired, dependents first."""
    return actions.stored_graph(list(stack.resources.values()) + stack.retired).reversed()


def begin(engine: Any, app: Any, queue: str, traversal_id: str, stack_id: str, action: str, graph: Graph,
          timeout_mins: int | None, disable_rollback: bool) -> None:
    """Store the traversal and enqueue what is ready; an empty one ends at once."""
    deadline = utcnow() + timedelta(minutes=timeout_mins) if timeout_mins else None
    ready = traversal.start(engine.store, traversal_id, stack_id, action, graph, deadline, disable_rollback)
    if not graph.requires:
        end_traversal(engine, app, queue, traversal_id, engine.store.get_stack(stack_id, engine.project_id))
        return
    celery_app.publish(app, queue, traversal_id, ready)


def end_traversal(engine: Any, app: Any, queue: str, traversal_id: str, record: Any) -> None:
    """Record the stack's end state and give the lock up (or start the create's rollback)."""
    store = engine.store
    action, stopping, disable_rollback = traversal.outcome(store, traversal_id)
    stack = engine.defined(record)
    stack.recorder = DirectRecorder(engine)
    owner = traversal_owner(traversal_id)
    if action in ("DELETE", "ROLLBACK"):  # rows of what is gone go; the others stay for the next delete
        store.delete_resources_bulk(row.id for row in store.get_resources(record.id)
                                    if row.action == "INIT" or (row.action, row.status) == ("DELETE", COMPLETE))
    if stopping is None:
        asyncio.run(stack.set_state(action, COMPLETE, f"Stack {action} completed successfully"))
        if action == "DELETE":
            store.soft_delete_stack(record.id)
    elif action == "CREATE" and not disable_rollback:
        # the failure is an event; the stack goes on IN_PROGRESS (a ROLLBACK now), so no one
        # watching it takes CREATE_FAILED for the end
        store.add_event(record.id, resource_name=record.name, resource_type=STACK_RESOURCE_TYPE,
                        physical_resource_id=record.id, action=action, status=FAILED,
                        reason=stack.redact(stopping))
        traversal.mark_ended(store, traversal_id)
        start_delete(engine, app, queue, store.get_stack(record.id, record.project_id), "ROLLBACK", owner)
        return
    else:
        asyncio.run(stack.set_state(action, FAILED, stopping))
    store.release_lock(record.id, owner)
    traversal.mark_ended(store, traversal_id)
