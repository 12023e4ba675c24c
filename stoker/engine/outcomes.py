"""What happens when a stack action ends or fails: one table, one function, two drivers.

An action walked here (``engine/running.py``) and one spread over the
workers (``dispatch/stack_actions.end_traversal``) both end through
``end_action``: COMPLETE (a delete then forgets the stack), or FAILED, or,
when the table says a rollback follows and the cancel (if any) allows it,
the rollback's name for the driver to start.  As in Heat, a failed create
or adopt rolls back by deleting what it made, a failed update (or restore)
by updating back to the previous definition, unless rollback is off; a
cancel without rollback never rolls back, and a cancel of an update that
asks for one (Heat's cancel_update) rolls back even when rollback is off.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from stoker.lease import Cancel, StackLease

COMPLETE, FAILED = "COMPLETE", "FAILED"
#: the rollbacks: delete what the action made; update back to the definition before it
DELETE_BACK, UPDATE_BACK = "ROLLBACK", "UPDATE_ROLLBACK"


@dataclass(frozen=True)
class Outcome:
    """How one stack action ends."""

    #: what follows a failure when rollback is on (``DELETE_BACK``, ``UPDATE_BACK``), or None
    rollback: str | None = None
    #: a cancel asking for a rollback rolls back even when rollback is off (Heat's cancel_update)
    cancel_rolls_back: bool = False
    #: success forgets the stack (soft-deleted: its row and events stay readable)
    removes: bool = False


_UPDATE = Outcome(rollback=UPDATE_BACK, cancel_rolls_back=True)
#: by the action the stack shows
OUTCOMES = {
    "CREATE": Outcome(rollback=DELETE_BACK),
    "ADOPT": Outcome(rollback=DELETE_BACK),
    "UPDATE": _UPDATE,
    "RESTORE": _UPDATE,
    "DELETE": Outcome(removes=True),
    "ROLLBACK": Outcome(),
    "SUSPEND": Outcome(),
    "RESUME": Outcome(),
    "CHECK": Outcome(),
    "SNAPSHOT": Outcome(),
}


def rollback_after(action: str, disable_rollback: bool, cancel: Cancel | None) -> str | None:
    """The rollback that follows ``action``'s failure (stopped by ``cancel``, if any), or None."""
    outcome = OUTCOMES[action]
    if outcome.rollback is None or (cancel is not None and not cancel.rollback):
        return None
    if cancel is not None and outcome.cancel_rolls_back:
        return outcome.rollback
    return None if disable_rollback else outcome.rollback


async def end_action(stack: Any, action: str, failure: str | None, disable_rollback: bool,
                     cancel: Cancel | None, release: str | None = None) -> str | None:
    """Record how ``action`` ended on ``stack`` (``failure``: why it failed, or None) and return
    the rollback that follows, if one does: the driver shows the failure and starts it.
    ``release``: the owner whose lock the end gives up in the same commit, when nothing follows."""
    if failure is None:
        # a removed stack leaves the lists in the commit that shows it complete, not after it
        gone = {"deleted_at": datetime.now(timezone.utc)} if OUTCOMES[action].removes else {}
        await stack.set_state(action, COMPLETE, f"Stack {action} completed successfully", release, **gone)
        if gone:
            stack.record.deleted_at = gone["deleted_at"]
        return None
    follows = rollback_after(action, disable_rollback, cancel)
    if follows is None:
        await stack.set_state(action, FAILED, failure, release)
    return follows


async def fail_at_once(stack: Any, action: str, reason: str) -> None:
    """Heat's cancel_without_rollback: the stack fails at once and nothing new starts, while what
    runs ends as it would.  The request is acknowledged, so that another one (a delete's) stops
    what still runs."""
    await asyncio.to_thread(StackLease(stack.store, stack.id).heard)
    await stack.set_state(action, FAILED, reason)
