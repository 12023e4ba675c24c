"""One resource action, one step at a time: what a worker runs instead of waiting.

``Resource.run_action`` starts an action and polls it to its end with
sleeps in between.  A worker must not sleep: ``step_action`` starts the
action (or picks it up where the stored state says it stands), checks it
once, and when it is not done stores the plug-in's token and raises
``Parked``; the task is enqueued again with a countdown.  The stored state
decides on every step, so a redelivered task (its worker was killed)
continues a create whose plug-in stored its physical id instead of
creating the resource a second time.
"""

from __future__ import annotations

import asyncio
import logging
from functools import partial
from typing import Any, Callable

from sqlalchemy.exc import InterfaceError, OperationalError

from stoker.engine import signals
from stoker.resources.exceptions import NoActionRequired, ResourceFailure
from stoker.resources.resource import POLL_FACTOR, POLL_FIRST, Resource
from stoker.store.edits import merge_into

#: the longest countdown between two polls of one resource
POLL_MAX = 2.0
#: the action a signal's poll is kept as (``Resource.keep_poll``, under the signal's own key)
SIGNAL = "SIGNAL"
LOG = logging.getLogger("stoker.dispatch")


class Parked(BaseException):
    """The action waits; poll it again in ``seconds``.

    Not an ``Exception``: it passes through the resource's failure handling
    and leaves the state IN_PROGRESS.
    """

    def __init__(self, seconds: float):
        super().__init__(seconds)
        self.seconds = seconds


def drive_by_steps(resource: Resource) -> None:
    """Have this resource's actions run one step per task (and its handlers on the task's thread,
    so a physical id the plug-in sets is stored before the plug-in goes on); what it waits for
    outside an action (a paused hook) is looked at again by a later task too."""
    resource.run_action = partial(step_action, resource)  # type: ignore[method-assign]
    resource.wait_a_while = park  # type: ignore[method-assign]
    resource.run_in_thread = False


async def park(seconds: float) -> None:
    """Instead of waiting ``seconds`` here: the step ends, and a task comes back to it then."""
    raise Parked(seconds)


async def step_action(resource: Resource, action: str, handler: Callable, checker: Callable,
                      pass_through: tuple = ()) -> None:
    """``Resource.run_action`` as one step: start or pick up, check once, park or end."""
    polling = resource.stored_poll(action) or {}
    begun, token = resource.poll_begun(polling.get("token")) if polling else (True, None)
    resuming = begun and (bool(polling) or (resource.state == (action, resource.IN_PROGRESS)
                                            and action == resource.CREATE and resource.resource_id is not None))
    try:
        async with resource.acting(action, pass_through):
            if resuming:
                delay = float(polling.get("delay", POLL_FIRST))
            else:
                if begun:  # (a start cut short is IN_PROGRESS already)
                    await resource.set_state(action, resource.IN_PROGRESS, "state changed")
                token, delay = await resource._call(handler), POLL_FIRST
            wait = await resource.check_once(checker, token, delay)
            if wait is None:
                resource.forget_poll()
                return
            await _park(resource, action, checker, token, wait, delay)
    except Parked:
        raise
    except BaseException:
        resource.forget_poll()
        raise


async def _park(resource: Resource, action: str, checker: Callable, token: Any, wait: tuple[float, bool],
                delay: float) -> None:
    """Keep the poll (with the next step's delay) and park until the next check; a token that cannot
    be kept is polled here, to its end."""
    seconds, backoff = wait
    if not resource.keep_poll(action, token, min(delay * POLL_FACTOR, POLL_MAX) if backoff else delay):
        await _poll_here(resource, action, checker, token, seconds, delay)
        return
    await resource.stack.persist(resource, event=False)
    raise Parked(min(seconds, POLL_MAX))


async def step_signal(resource: Resource, signal_id: str, details: Any, may_start: bool = True) -> None:
    """A signal's acting handler (a scaling policy's) as one step: start it, or find what this
    signal started; check once; park.  Once done: Heat's ``SIGNAL`` event, queued for the commit
    that ends the node (once however often a lost worker's step runs again).  A handler that
    changed nothing (``NoActionRequired``) leaves no event; one that failed, an event saying why.
    The resource's state is left alone: a signal is no action of its own.  Unless ``may_start``
    (its traversal stops) it only goes on with what it started."""
    resource.signal_id = signal_id
    if not may_start and resource.stored_poll(SIGNAL) is None:
        LOG.info("signal to %s dropped: %s", resource.name, resource.stack.cancel_reason)
        return
    try:
        reason: str | None = signals.reason(details, await _signal_once(resource, details))
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


async def _signal_once(resource: Resource, details: Any) -> Any:
    """What the handler said once its work is done (parks while it is not).  With a
    ``check_signal_complete`` the handler's answer is a token that check polls, else it is done."""
    checker = getattr(resource, "check_signal_complete", None)
    polling = resource.stored_poll(SIGNAL)
    if polling is None:
        token, delay = await resource._call(resource.handle_signal, details), POLL_FIRST
    else:
        token, delay = polling.get("token"), float(polling.get("delay", POLL_FIRST))
    if checker is None:
        return token
    wait = await resource.check_once(checker, token, delay)
    if wait is not None:
        await _park(resource, SIGNAL, checker, token, wait, delay)
    return None


async def _poll_here(resource: Resource, action: str, checker: Callable, token: Any, seconds: float,
                     delay: float) -> None:
    """Poll to the end in this task: the one case where waiting holds the worker slot.

    The plug-in's token is not JSON (a live object: a client handle, a
    generator, a task runner, as many of Heat's plug-ins return), so it
    cannot be stored for a later task, which may run in any worker process;
    only this process can go on with it.  (The resource acts outside
    Stoker, so it has a task of its own: no other node waits behind it.)
    """
    LOG.warning("%s (%s): its %s token is not JSON, so it is polled in this worker slot until done",
                resource.name, resource.type(), action)
    while True:
        await asyncio.sleep(seconds)
        wait = await resource.check_once(checker, token, delay)
        if wait is None:
            return
        seconds, backoff = wait
        if backoff:
            delay = min(delay * POLL_FACTOR, POLL_MAX)


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

    async def write_stack(self, stack_id: str, fields: dict, event: dict) -> None:
        changes, events = self.take()
        self.engine.store.write_batch(changes, [*events, event], [(stack_id, fields)])

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

    async def call(self, fn: Callable, *args: Any) -> Any:
        return fn(*args)

    def close(self) -> None:
        """Nothing to stop."""
