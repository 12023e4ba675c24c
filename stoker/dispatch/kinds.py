"""What one node of a traversal does, by the traversal's action: the in-process engine's
own per-resource functions (``stoker.engine.actions``), batches of resources per task.

A stack action may take several traversals one after another: an update
is the update of every resource (requirements first), then the delete of
what it replaced or removed (``*_CLEANUP``); its rollback is an update back
to the previous definition (``UPDATE_ROLLBACK``) and its own cleanup.  The
stack shows the action the user sees (UPDATE, ROLLBACK), not the step.  A
signal whose handler acts (``SIGNAL``) is a traversal of one node, the
signalled resource, that leaves the stack's state alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Awaitable, Callable

from stoker.dispatch.step import step_signal
from stoker.engine import actions
from stoker.errors import StokerError
from stoker.resources.exceptions import ResourceFailure
from stoker.resources.resource import POLL_KEY


@dataclass(frozen=True)
class Kind:
    #: the stack's action while this traversal runs
    stack_action: str
    #: the resource action a stopped node records as FAILED
    resource_action: str
    #: runs the node's resource: (stack, resource) -> awaitable
    run: Callable[[Any, Any], Awaitable[Any]]
    #: an update: reads the rows the new definition makes the resource need, may make new rows
    updating: bool = False
    #: its end records the stack's state (a signal's does not: in Heat a signal is no stack action)
    stack_state: bool = True
    #: once the traversal stops its node still runs, to end what it started (stopped with the
    #: traversal) and start nothing (``stack.cancel_reason`` set), instead of failing at once
    winds_down: bool = False

    @property
    def batched(self) -> bool:
        """Several nodes per task: an update's stack is loaded for one resource's new definition, so
        its nodes go one per task (through the same task, batches of one)."""
        return not self.updating


def _create(stack: Any, resource: Any) -> Awaitable[None]:
    return actions.create_resource(resource)


def _delete(stack: Any, resource: Any) -> Awaitable[None]:
    return actions.delete_resource(stack, resource)


def _simple(action: str) -> Callable[[Any, Any], Awaitable[Any]]:
    """A CHECK's failure is the resource's CHECK_FAILED state: the traversal's end reads them."""
    return lambda stack, resource: actions.simple_resource(resource, action)


def _update(rollback: bool) -> Callable[[Any, Any], Awaitable[None]]:
    """The resource's update, every action in it one step per task: a create it started (a new
    resource, a replacement) or an update in place that parked goes on where it stood instead of
    being planned again."""
    async def run(stack: Any, resource: Any) -> None:
        live = stack.resources.get(resource.name)
        if live is not None and _creating(live):
            await actions.create_resource(live)
            return
        parked = live is not None and live.stored_poll(live.UPDATE) is not None
        if live is not None and not parked and live.state == (live.UPDATE, live.IN_PROGRESS):
            await _fail_lost_update(live)
        if parked:  # (a parked update the plug-in then turns down is replaced)
            await actions.go_on_updating(stack, live)
        else:
            await actions.update_resource(stack, resource.name, rollback)
    return run


async def _fail_lost_update(resource: Any) -> None:
    """An update in place whose worker was lost while the plug-in's handler ran: its new properties
    are stored already, so planning again would find nothing to do and leave it
    UPDATE_IN_PROGRESS; it fails, saying why (a rollback then plans it back to the old definition)."""
    reason = StokerError("the worker updating it was lost before the update ended")
    failure = ResourceFailure(reason, resource, resource.UPDATE)
    await resource.set_state(resource.UPDATE, resource.FAILED, str(failure))
    raise failure


def _signal(stack: Any, resource: Any) -> Awaitable[None]:
    """The signalled resource's acting handler, by steps (the signal: the traversal's ``given``); once
    the traversal stops, only what it started is polled to its end."""
    signal_id, details = stack.signalled
    return step_signal(resource, signal_id, details, may_start=stack.cancel_reason is None)


def _creating(resource: Any) -> bool:
    """A create that parked, or whose worker was lost after the plug-in stored its physical id."""
    return resource.state == (resource.CREATE, resource.IN_PROGRESS) and (
        POLL_KEY in resource._data or resource.resource_id is not None)


KINDS = {
    "CREATE": Kind("CREATE", "CREATE", _create),
    "ADOPT": Kind("ADOPT", "ADOPT", _create),  # the adopted data: the traversal's ``given``
    "DELETE": Kind("DELETE", "DELETE", _delete),
    "ROLLBACK": Kind("ROLLBACK", "DELETE", _delete),
    "SUSPEND": Kind("SUSPEND", "SUSPEND", _simple("SUSPEND")),
    "RESUME": Kind("RESUME", "RESUME", _simple("RESUME")),
    "CHECK": Kind("CHECK", "CHECK", _simple("CHECK")),
    "SNAPSHOT": Kind("SNAPSHOT", "SNAPSHOT", _simple("SNAPSHOT")),
    "UPDATE": Kind("UPDATE", "UPDATE", _update(False), updating=True),
    "SIGNAL": Kind("SIGNAL", "SIGNAL", _signal, stack_state=False, winds_down=True),
    "UPDATE_CLEANUP": Kind("UPDATE", "DELETE", _delete),
    "UPDATE_ROLLBACK": Kind("ROLLBACK", "UPDATE", _update(True), updating=True),
    "ROLLBACK_CLEANUP": Kind("ROLLBACK", "DELETE", _delete),
    # a snapshot's restore: an update back to the snapshot's definition, shown as RESTORE
    "RESTORE": Kind("RESTORE", "UPDATE", _update(False), updating=True),
    "RESTORE_CLEANUP": Kind("RESTORE", "DELETE", _delete),
}
#: the traversal that follows a successful one within the same stack action
CLEANUP = {"UPDATE": "UPDATE_CLEANUP", "UPDATE_ROLLBACK": "ROLLBACK_CLEANUP", "RESTORE": "RESTORE_CLEANUP"}


def stack_action(traversal_action: str) -> str:
    return KINDS[traversal_action].stack_action
