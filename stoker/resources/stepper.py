"""How a resource polls: one action as a stepper, driven the same way here and on the workers.

As Heat's ``action_handler_task`` (one generator both its engines drive),
``ActionStepper.step`` starts the action or picks up the poll a stopped
process kept, checks once, and says: done (None), or the seconds to wait.
The stack's ``driver`` takes the steps: ``RunToEnd`` here (step, sleep,
step), or ``dispatch.step.StepPerTask`` on a worker (one step per task,
the wait parked with a countdown).  The poll (token, delay) is kept in the
resource's data once the action waits, so whoever takes the next step goes
on from there instead of acting again.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from typing import Any, Callable, Protocol

from stoker.resources.exceptions import PollDelay

#: the first wait between two checks: short, so quick resources finish quickly; each wait the
#: plug-in does not choose is ``POLL_FACTOR`` times longer, up to the driver's ``longest_poll``
POLL_FIRST, POLL_FACTOR = 0.002, 2.0
LOG = logging.getLogger("stoker.resources")


class Parked(BaseException):
    """The action waits; a later step goes on with it in ``seconds``.  Not an ``Exception``: it
    passes through the resource's failure handling and leaves the state IN_PROGRESS."""

    def __init__(self, seconds: float):
        super().__init__(seconds)
        self.seconds = seconds


class Driver(Protocol):
    """What runs a resource's actions: to their end here, or one step per task on a worker."""

    #: may a plug-in's blocking handler run in the thread pool (else on the caller's thread)
    threads: bool
    #: the longest wait between two checks the backoff grows to
    longest_poll: float
    #: does a create found IN_PROGRESS with a physical id but no poll go on (its stepper lost after
    #: the plug-in stored the id) rather than start again
    resumes_unpolled_create: bool

    async def drive(self, stepper: "ActionStepper") -> None:
        """Take the steps of ``stepper``'s action (inside ``ActionStepper.run``)."""

    async def pause(self, seconds: float) -> None:
        """Wait before looking again at what a resource waits for outside an action (a paused hook)."""


class ActionStepper:
    """One action of one resource (or a signal's acting handler): ``handler`` once, ``checker``
    each step until it says done.  ``records_state``: the action shows as the resource's state (a
    signal's does not).  (``resource``: a ``Resource``, whose module imports this one.)"""

    def __init__(self, resource: Any, action: str, handler: Callable[[], Any],
                 checker: Callable[[Any], Any] | None, pass_through: tuple = (), records_state: bool = True):
        self.resource = resource
        self.action = action
        self.handler = handler
        self.checker = checker
        self.pass_through = pass_through
        self.records_state = records_state
        self.driver: Driver = resource.stack.driver
        #: what the handler returned (the plug-in's token): what each check is given
        self.token: Any = None
        self.delay = POLL_FIRST
        #: the first step ran; the token is known (the handler returned, or a kept poll was picked up);
        #: that poll was kept earlier (it is in the resource's data already)
        self.begun = self.started = self.picked_up = False

    async def run(self) -> None:
        """The action, driven by the stack's driver, its end recorded (``Resource.acting``)."""
        if not self.records_state:
            await self._driven()
            return
        async with self.resource.acting(self.action, self.pass_through):
            await self._driven()

    async def _driven(self) -> None:
        try:
            await self.driver.drive(self)
        except Parked:
            raise
        except BaseException as exc:
            self._stopped(exc)
            raise
        self.resource.forget_poll()

    async def step(self) -> float | None:
        """Begin (the first step), then check once: None when done, else seconds until the next step."""
        if not self.begun:
            await self._begin()
        try:
            if self.checker is None or await self.call(self.checker, self.token):
                return None
        except PollDelay as wait:
            return self.delay * wait.period
        hint = self.resource.poll_delay(self.token)
        if hint is not None:
            return max(0.0, hint)
        seconds, self.delay = self.delay, min(self.delay * POLL_FACTOR, self.driver.longest_poll)
        return seconds

    def keep(self) -> bool:
        """Keep the poll in the resource's data (written with its next change); False when the
        token cannot be stored (not JSON: a live object only this process can go on with)."""
        return self.resource.keep_poll(self.action, self.token, self.delay)

    async def call(self, fn: Callable, *args: Any) -> Any:
        """A plug-in's handler or check: a blocking one in the thread pool when the driver and the
        plug-in allow it (a physical id it sets then reaches the stack from its thread)."""
        resource = self.resource
        if self.driver.threads and resource.run_in_thread and not asyncio.iscoroutinefunction(fn):
            resource._loop = asyncio.get_running_loop()
            result = await resource._loop.run_in_executor(None, fn, *args)
        else:
            result = fn(*args)
        return await result if inspect.iscoroutine(result) else result  # (a lambda over an async handler)

    async def _begin(self) -> None:
        """Pick up the kept poll (what it polls begun: ``Resource.poll_begun``), or start the action."""
        resource = self.resource
        polling = resource.stored_poll(self.action) or {}
        begun, token = resource.poll_begun(polling.get("token")) if polling else (True, None)
        unpolled = (self.driver.resumes_unpolled_create and self.action == resource.CREATE
                    and resource.state == (resource.CREATE, resource.IN_PROGRESS) and resource.resource_id is not None
                    and not resource.handler_cut_short())
        self.begun = True
        if begun and (polling or unpolled):
            self.token, self.delay, self.started = token, float(polling.get("delay", POLL_FIRST)), True
            self.picked_up = bool(polling)
            return
        if begun and self.records_state:  # (a start cut short is IN_PROGRESS already)
            await resource.set_state(self.action, resource.IN_PROGRESS, "state changed")
        self.token = await self.call(self.handler)
        self.started = True

    def _stopped(self, exc: BaseException) -> None:
        """The action stops unfinished: a cancel tells the plug-in (Heat's ``handle_<action>_cancel``);
        its poll is kept when its server hands it back, else forgotten (nothing is left to pick up)."""
        resource = self.resource
        if not isinstance(exc, asyncio.CancelledError):
            resource.forget_poll()
            return
        canceller = getattr(resource, f"handle_{self.action.lower()}_cancel", None)
        if callable(canceller):
            try:
                canceller(self.token)
            except Exception:  # the cancel goes on: the plug-in's trouble is only logged
                LOG.exception("%s: cancelling its %s failed", resource.name, self.action)
        if resource.stack.root.handing_back and self.started:
            self.keep()
        else:
            resource.forget_poll()


class RunToEnd:
    """The in-process driver: every step on this event loop, a sleep in between."""

    threads = True
    longest_poll = 0.1
    resumes_unpolled_create = False

    async def drive(self, stepper: ActionStepper) -> None:
        """An action not done at its first check has its poll kept at once (with the next batch): a
        server killed meanwhile cannot hand it back, and the next one picks it up from there."""
        seconds = await stepper.step()
        if seconds is not None and not stepper.picked_up and stepper.keep():
            stepper.resource.stack.persist_soon(stepper.resource)
        while seconds is not None:
            await asyncio.sleep(seconds)
            seconds = await stepper.step()

    async def pause(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


#: how stacks run their resources' actions unless a worker says otherwise
RUN_TO_END = RunToEnd()
