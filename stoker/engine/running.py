"""A stack action driven here, in this process, to its end (the workers' driver is ``dispatch/stack_actions``).

Each ``run_*`` records the stack IN_PROGRESS, walks its graph (``actions``)
and ends through ``outcomes.end_action``, which both drivers share; what
follows a failure (a rollback) it starts here too.  While the top stack's
walk runs, ``watch`` keeps its lease and turns a cancel request into Heat's
cancel semantics.  ``resume_abandoned`` goes on with what a stopped (or
dead) server left.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from contextlib import contextmanager
from typing import Any, Awaitable, ContextManager, Iterator

from stoker.engine import actions
from stoker.engine.actions import ActionFailed
from stoker.engine.outcomes import DELETE_BACK, end_action, fail_at_once
from stoker.engine.sealing import stored_inputs
from stoker.engine.stack import Stack
from stoker.engine.summaries import output_entries
from stoker.errors import Conflict
from stoker.lease import Cancel, StackLease, keep
from stoker.resources import processes
from stoker.store.locks import HANDED_BACK
from stoker.template.loader import frozen_gc

IN_PROGRESS, FAILED = "IN_PROGRESS", "FAILED"


def run(coroutine: Awaitable[Any]) -> None:
    """Run an action's coroutine on an event loop of its own (the collector frozen meanwhile):
    ``asyncio.run``'s in the main thread (a command's), else the thread's kept loop."""
    with frozen_gc():
        if threading.current_thread() is threading.main_thread():
            asyncio.run(coroutine)
            return
        kept = getattr(_THREAD_LOOPS, "kept", None)
        if kept is None:
            kept = _THREAD_LOOPS.kept = KeptLoop()
        kept.run(coroutine)


#: the event loop of each thread that ran an action, other than the main thread
_THREAD_LOOPS = threading.local()


class KeptLoop:
    """An event loop a thread keeps from one action to the next (a server's pool threads run action
    after action: a new loop each time cost its epoll descriptor, socket pair and teardown, ~4% of
    a one-resource create's CPU).  Each action runs in a copy of the caller's context, and what it
    left running is cancelled, as with ``asyncio.run``; the loop closes when its thread ends (the
    thread's locals go, and this with them)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()

    def run(self, coroutine: Awaitable[Any]) -> Any:
        asyncio.set_event_loop(self.loop)
        task = self.loop.create_task(coroutine, context=contextvars.copy_context())  # type: ignore[arg-type]
        try:
            return self.loop.run_until_complete(task)
        finally:
            left = asyncio.all_tasks(self.loop)
            for each in left:
                each.cancel()
            if left:
                self.loop.run_until_complete(asyncio.gather(*left, return_exceptions=True))

    def __del__(self) -> None:
        if not self.loop.is_closed():
            self.loop.close()


@contextmanager
def locked(engine: Any, record: Any, action: str) -> Iterator[None]:
    """Hold the stack's lease around an action here (one taken over from a dead engine has its
    commands stopped first)."""
    StackLease(engine.store, record.id).acquire(engine.engine_id, action)
    if record.status == IN_PROGRESS:  # taken over from an engine that died
        stop_dead_commands(engine, record)
    with engine.holding(record.id):
        yield


def holding(engine: Any, stack_id: str) -> ContextManager[None]:
    """Around an action that holds the stack's lease (``StackLease.held``)."""
    return StackLease(engine.store, stack_id).held(engine.engine_id, engine.stopping)


def stop_dead_commands(engine: Any, record: Any) -> None:
    """Kill the commands a dead engine left running in this stack and its nested ones,
    before anyone acts on them (``processes.stop_orphan`` says which)."""
    for row in engine.store.get_resources(record.id):
        processes.stop_orphan((row.data or {}).get(processes.PROCESS_KEY))
    for child in engine.store.children(record.id):
        stop_dead_commands(engine, child)


def stop_running_action(engine: Any, record: Any) -> Any:
    """Cancel (without rollback) the action a live engine runs on the stack, and wait
    until it has let the stack go; returns the stack as it is then."""
    stopped = StackLease(engine.store, record.id).stop_holder(
        record, engine.engine_id, lambda: engine.get_record(record.id), engine.stop_timeout)
    if stopped is None:
        raise Conflict(f"Stack {record.name} already has an action ({record.lock_action}) in progress, "
                       f"and it did not stop within {engine.stop_timeout:g} seconds of being cancelled")
    return stopped


def cancel_stack(engine: Any, name_or_id: str, rollback: bool = True) -> None:
    """Ask the engine running the stack's action to stop it (``watch`` hears it), with or
    without rollback; Conflict when no live engine runs one."""
    record = engine.get_record(name_or_id)
    gone = record.lock_owner is not None and engine.store.owner_gone(record.lock_owner)
    if gone:
        stop_dead_commands(engine, record)
    if record.status != IN_PROGRESS or record.lock_owner is None or gone:
        raise Conflict(f"Stack {record.name} has no action in progress to cancel"
                       + (" (the process running it has died)" if record.lock_owner else ""))
    engine.store.request_cancel(record.id, rollback)


def _seconds(timeout_mins: int | None) -> float | None:
    return timeout_mins * 60 if timeout_mins else None


async def _walked(stack: Stack, action: str, walk: Awaitable[Any], verb: str = "started") -> str | None:
    """The stack IN_PROGRESS while ``walk`` runs; why it failed (timed out, cancelled, a resource
    failed), or None."""
    await stack.set_state(action, IN_PROGRESS, f"Stack {action} {verb}")
    try:
        await walk
    except ActionFailed as exc:
        return str(exc)
    return None


async def run_create(engine: Any, stack: Stack, timeout_mins: int | None, disable_rollback: bool,
                     action: str = "CREATE", resume: bool = False) -> None:
    """Create (or, ``resume``, go on with a create a stopped server handed back)."""
    walk = (actions.resume_create if resume else actions.create)(stack, _seconds(timeout_mins))
    failure = await _walked(stack, action, walk, "resumed" if resume else "started")
    await _end(engine, stack, action, failure, disable_rollback, None)
    ended(engine, stack)


async def run_delete(engine: Any, stack: Stack, action: str) -> bool:
    """Delete every resource (``action``: DELETE, or the ROLLBACK of a create); False if it failed."""
    everything = list(stack.resources.values()) + stack.retired
    failure = await _walked(stack, action, actions.delete_all(stack, everything, action,
                                                              _seconds(stack.record.timeout_mins)))
    await end_action(stack, action, failure, True, None, _lease_holder(engine, stack))
    ended(engine, stack)
    return failure is None


def _lease_holder(engine: Any, stack: Stack) -> str | None:
    """Who holds the lease that a create's or delete's end gives up in its last commit (a top
    stack's: ``holding`` then finds it given up and writes nothing); nested stacks hold none."""
    return engine.engine_id if stack.parent is None else None


async def run_simple(engine: Any, stack: Stack, action: str) -> None:
    """SUSPEND, RESUME, CHECK or SNAPSHOT every resource."""
    failure = await _walked(stack, action, actions.simple_action(stack, action, _seconds(stack.record.timeout_mins)))
    await end_action(stack, action, failure, True, None)
    ended(engine, stack)


async def run_update(engine: Any, stack: Stack, old: Stack, rollback: bool, action: str = "UPDATE") -> None:
    """``action``: UPDATE, or RESTORE for an update back to a snapshot."""
    failure = await _walked(stack, action, actions.update(stack, _seconds(stack.record.timeout_mins)))
    await _end(engine, stack, action, failure, not rollback, old)
    ended(engine, stack, old)


def ended(engine: Any, stack: Stack, *others: Stack) -> None:
    """A top stack's action run here has ended (its rollback too): the one place its life ends.

    Nothing reads the stack afterwards but the caller's summary (``Engine.summary``), whose
    outputs are read now; then ``Stack.drop`` cuts its cycles (and those of ``others``: an
    update's old stack) and those of the nested stacks made under it, so reference counting
    frees them and no full collection is due for them (``loader.frozen_gc``).  A nested stack's
    own end drops nothing: its owner resource may still read it.
    """
    if stack.parent is not None:
        return
    if engine.returns_summary and stack.ended_outputs is None:
        stack.ended_outputs = output_entries(stack)
    for each in (stack, *others):
        each.drop()


async def _end(engine: Any, stack: Stack, action: str, failure: str | None, disable_rollback: bool,
               old: Stack | None) -> None:
    """``end_action``, and the rollback it says follows (the failure shown first)."""
    releasing = _lease_holder(engine, stack) if action in ("CREATE", "ADOPT") else None
    follows = await end_action(stack, action, failure, disable_rollback, stack.cancel, releasing)
    if follows is None:
        return
    await stack.set_state(action, FAILED, failure)
    if follows == DELETE_BACK:
        stack.cancel_reason = None  # the cancel that stopped the create must not stop its rollback too
        await asyncio.to_thread(StackLease(engine.store, stack.id).heard)
        await run_delete(engine, stack, "ROLLBACK")
    else:
        await _rollback_update(engine, stack, old)


async def _rollback_update(engine: Any, stack: Stack, old: Stack) -> None:
    """Return to the previous template and parameters (an update the other way)."""
    record = stack.record
    back = Stack(engine, record, stack.parent)
    back.definition, back.environment = old.definition, old.environment
    old.definition.context.runtime = back
    back.adopt_resources(stack)
    # the cancel that stopped the update must not stop its rollback too
    parameters, environment = stored_inputs(back, record.parameters, record.environment)
    engine.store.update_stack(record.id, template_id=record.template_id, parameters=parameters,
                              environment=environment, files=record.files, cancel_requested=False)
    failure = await _walked(back, "ROLLBACK", actions.update(back, _seconds(record.timeout_mins), rollback=True))
    await end_action(back, "ROLLBACK", failure, True, None)


# -- the lease while an action runs ----------------------------------------------------------
async def watch(engine: Any, stack: Stack, task: asyncio.Future) -> None:
    """While an action runs: keep its lease, stop it on a cancel request (Heat's cancel_update
    with rollback; without: ``fail_at_once`` first, a second request stops what still runs),
    and hand it back when the server stops."""
    async def heard(request: Cancel) -> bool:
        if request.hand_back:
            stack.handing_back = True
        elif stack.cancel_reason is None:
            stack.cancel_reason, stack.cancel = f"Stack {stack.action} cancelled", request
            if request.graceful:
                await fail_at_once(stack, stack.action, stack.cancel_reason)
                return False
        return True

    await keep(StackLease(engine.store, stack.id), engine.engine_id, task, heard, engine.stopping)


# -- a server's stop, and the next one's start ------------------------------------------------
def resume_abandoned(engine: Any, record: Any) -> bool:
    """Go on with the action a stopped server handed back, or a dead one left (``record``
    as read when its holder was found gone); False if another engine took it first.

    Creates (and their rollbacks) and deletes go on where they stood; an
    update or another action cannot be picked up halfway: it is marked FAILED.
    """
    if not StackLease(engine.store, record.id).take_over(record.lock_owner, engine.engine_id):
        return False
    with engine.holding(record.id):
        if record.status != IN_PROGRESS:  # it died between the action's end and the lock's release
            return True
        if record.lock_owner != HANDED_BACK:  # its commands outlived it, unwatched
            stop_dead_commands(engine, record)
        run(_resume(engine, engine.runtime(record), record.lock_action))
    return True


async def _resume(engine: Any, stack: Stack, lock_action: str | None) -> None:
    record = stack.record
    if lock_action in ("CREATE", "ADOPT") and stack.action == lock_action and stack.definition is not None:
        await run_create(engine, stack, record.timeout_mins, record.disable_rollback, lock_action, resume=True)
    elif lock_action in ("CREATE", "ADOPT", "DELETE") and stack.action in ("ROLLBACK", "DELETE"):
        await run_delete(engine, stack, stack.action)
    else:
        await _fail_interrupted(engine, stack)


async def _fail_interrupted(engine: Any, stack: Stack) -> None:
    """Mark the stack (its nested stacks too) and its resources still in progress FAILED."""
    reason = f"Stack {stack.action} interrupted: the server stopped while it ran"
    for child in engine.store.children(stack.id):
        if child.status == IN_PROGRESS:
            await _fail_interrupted(engine, engine.runtime(child, parent=stack))
    for resource in stack.resources.values():
        if resource.status == IN_PROGRESS:
            resource.forget_poll()
            await resource.set_state(resource.action, FAILED, reason)
    await stack.set_state(stack.action, FAILED, reason)
    await stack.recorder.flush()
