"""What one node of a traversal does, by the traversal's action: the in-process engine's
own per-resource functions (``stoker.engine.actions``), one resource per task.

A stack action may take several traversals one after another: an update
is the update of every resource (requirements first), then the delete of
what it replaced or removed (``*_CLEANUP``); its rollback is an update back
to the previous definition (``UPDATE_ROLLBACK``) and its own cleanup.  The
stack shows the action the user sees (UPDATE, ROLLBACK), not the step.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Awaitable, Callable

from stoker.engine import actions


@dataclass(frozen=True)
class Kind:
    #: the stack's action while this traversal runs
    stack_action: str
    #: the resource action a stopped node records as FAILED
    resource_action: str
    #: runs the node's resource: (stack, resource) -> awaitable
    run: Callable[[Any, Any], Awaitable[Any]]
    #: reads every row of the stack and runs its action to the end in one task (an update
    #: plans against the whole stack and may make new rows); the others take one step per task
    whole_stack: bool = False


def _create(stack: Any, resource: Any) -> Awaitable[None]:
    return actions.create_resource(resource)


def _delete(stack: Any, resource: Any) -> Awaitable[None]:
    return actions.delete_resource(stack, resource)


def _simple(action: str) -> Callable[[Any, Any], Awaitable[Any]]:
    """A CHECK's failure is the resource's CHECK_FAILED state: the traversal's end reads them."""
    return lambda stack, resource: actions.simple_resource(resource, action)


def _update(rollback: bool) -> Callable[[Any, Any], Awaitable[None]]:
    return lambda stack, resource: actions.update_resource(stack, resource.name, rollback)


KINDS = {
    "CREATE": Kind("CREATE", "CREATE", _create),
    "DELETE": Kind("DELETE", "DELETE", _delete),
    "ROLLBACK": Kind("ROLLBACK", "DELETE", _delete),
    "SUSPEND": Kind("SUSPEND", "SUSPEND", _simple("SUSPEND")),
    "RESUME": Kind("RESUME", "RESUME", _simple("RESUME")),
    "CHECK": Kind("CHECK", "CHECK", _simple("CHECK")),
    "UPDATE": Kind("UPDATE", "UPDATE", _update(False), whole_stack=True),
    "UPDATE_CLEANUP": Kind("UPDATE", "DELETE", _delete),
    "UPDATE_ROLLBACK": Kind("ROLLBACK", "UPDATE", _update(True), whole_stack=True),
    "ROLLBACK_CLEANUP": Kind("ROLLBACK", "DELETE", _delete),
}
#: the traversal that follows a successful one within the same stack action
CLEANUP = {"UPDATE": "UPDATE_CLEANUP", "UPDATE_ROLLBACK": "ROLLBACK_CLEANUP"}
#: traversals whose failure rolls an update back (when rollback is on)
UPDATING = ("UPDATE", "UPDATE_CLEANUP")


def stack_action(traversal_action: str) -> str:
    return KINDS[traversal_action].stack_action
