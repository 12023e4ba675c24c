"""One resource action, one step per task: the driver a worker's stacks run their actions with.

A worker must not sleep while a resource waits: ``StepPerTask`` takes one
step of the action's stepper (``resources/stepper.py``: start it or pick
it up where the stored state says it stands, check once), and when it is
not done keeps the plug-in's token and raises ``Parked``; the task is
enqueued again with a countdown.  The stored state decides on every step,
so a redelivered task (its worker was killed) continues a create whose
plug-in stored its physical id instead of creating the resource a second
time.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Callable

from sqlalchemy.exc import InterfaceError, OperationalError

from stoker.engine import signals
from stoker.resources.exceptions import NoActionRequired, ResourceFailure
from stoker.resources.resource import Resource
from stoker.resources.stepper import RUN_TO_END, ActionStepper, Parked
from stoker.store.edits import merge_into

#: the action a signal's poll is kept as (``Resource.keep_poll``, under the signal's own key)
SIGNAL = "SIGNAL"
LOG = logging.getLogger("stoker.dispatch")


class StepPerTask:
    """The worker's driver: one step per task, the wait parked; handlers on the task's thread, so a
    physical id the plug-in sets is stored before the plug-in goes on."""

    threads = False
    #: the longest countdown between two steps of one resource
    longest_poll = 2.0
    resumes_unpolled_create = True

    async def drive(self, stepper: ActionStepper) -> None:
        seconds = await stepper.step()
        if seconds is None:
            return
        if stepper.keep():
            await stepper.resource.stack.persist(stepper.resource, event=False)
            raise Parked(min(seconds, self.longest_poll))
        await self._poll_here(stepper, seconds)

    async def pause(self, seconds: float) -> None:
        """Instead of waiting ``seconds`` here: the step ends, and a task comes back to it then."""
        raise Parked(seconds)

    @staticmethod
    async def _poll_here(stepper: ActionStepper, seconds: float) -> None:
        """Poll to the end in this task: the one case where waiting holds the worker slot.

        The plug-in's token is not JSON (a live object: a client handle, a
        generator, a task runner, as many of Heat's plug-ins return), so it
        cannot be stored for a later task, which may run in any worker process;
        only this process can go on with it.  (The resource acts outside
        Stoker, so it has a task of its own: no other node waits behind it.)
        """
        resource = stepper.resource
        LOG.warning("%s (%s): its %s token is not JSON, so it is polled in this worker slot until done",
                    resource.name, resource.type(), stepper.action)
        await asyncio.sleep(seconds)
        await RUN_TO_END.drive(stepper)


#: how a worker's stacks run their resources' actions
STEP_PER_TASK = StepPerTask()


async def step_signal(resource: Resource, signal_id: str, details: Any, may_start: bool = True) -> None:
    """A signal's acting handler (a scaling policy's) as one step: start it, or find what this
    signal started; check once; park.  Once done: Heat's ``SIGNAL`` event, queued for the commit
    that ends the node (once however often a lost worker's step runs again).  A handler that
    changed nothing (``NoActionRequired``) leaves no event; one that failed, an event saying why.
    The resource's state is left alone: a signal is no action of its own.  Unless ``may_start``
    (its traversal stops) it only goes on with what it started.  With a ``check_signal_complete``
    the handler's answer is a token that check polls, else it is what the handler said."""
    resource.signal_id = signal_id
    if not may_start and resource.stored_poll(SIGNAL) is None:
        LOG.info("signal to %s dropped: %s", resource.name, resource.stack.cancel_reason)
        return
    checker: Callable | None = getattr(resource, "check_signal_complete", None)
    stepper = ActionStepper(resource, SIGNAL, lambda: resource.handle_signal(details), checker, records_state=False)
    try:
        await stepper.run()
        reason: str | None = signals.reason(details, stepper.token if checker is None else None)
        signals.refresh_metadata(resource.stack, resource.name)
    except NoActionRequired as ignored:
        LOG.info("signal to %s ignored: %s", resource.name, ignored)
        reason = None
    except (OperationalError, InterfaceError):
        raise  # the database went away: the task is retried
    except Exception as exc:  # a plug-in may raise anything: it becomes the reason
        reason = str(ResourceFailure(exc, resource, SIGNAL))
    resource.forget_poll()
    if reason is None:
        await resource.stack.persist(resource, event=False)
    else:
        resource.stack.record_event(resource, SIGNAL, reason)


class DirectRecorder:
    """The recorder of a stack in a worker: one commit per resource step, not one per change.

    A worker acts on one resource per task.  When that resource acts
    outside Stoker (``Resource.acts_outside``) every change is committed at
    once: a physical id must be on disk before the plug-in goes on.  When it
    does not (``defer``), its changes wait here and go out with the node's end
    or park, in the transaction that moves the traversal on (``take``); a
    worker lost before that commit leaves the node to run again, harmlessly.
    """

    def __init__(self, engine: Any, defer: bool = False):
        self.engine = engine
        self.defer = defer
        self.changes: list = []
        self.events: list = []

    def queue(self, resource_id: int, fields: dict, event: dict | None = None) -> None:
        self.changes.append((resource_id, fields))
        if event:
            self.events.append(event)
        if not self.defer:
            self._commit()

    async def write(self, resource_id: int, fields: dict, event: dict | None = None) -> None:
        self.queue(resource_id, fields, event)
        self._commit()

    def queue_stack(self, stack_id: str, fields: dict, event: dict) -> None:
        """A stack's state (committed at once here, with what waits)."""
        changes, events = self.take()
        self.engine.store.write_batch(changes, [*events, event], [(stack_id, fields)])

    async def write_stack(self, stack_id: str, fields: dict, event: dict) -> None:
        self.queue_stack(stack_id, fields, event)

    async def flush(self) -> None:
        self._commit()

    def take(self) -> tuple[list, list]:
        """The changes not committed yet (for the caller's transaction), forgotten here; a resource's
        successive changes as one (its state at the end), its events all, in order."""
        merged: dict[int, dict] = {}
        for resource_id, fields in self.changes:
            merge_into(merged.setdefault(resource_id, {}), fields)
        taken = (list(merged.items()), self.events)
        self.changes, self.events = [], []
        return taken

    def _commit(self) -> None:
        changes, events = self.take()
        if changes or events:
            self.engine.store.write_batch(changes, events)

    async def call(self, fn: Callable, *args: Any, small: bool = True) -> Any:
        """Every call runs here (a worker's task has no loop to keep busy meanwhile)."""
        return fn(*args)

    def close(self) -> None:
        """Nothing to stop."""
