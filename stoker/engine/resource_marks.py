"""What a user does to one resource of a stack: mark it (un)healthy, let it past a hook.

Both write the resource's row from outside any running action: a mark
under the stack's lease (a CHECK), a hook's clear as a conditional write
that the action paused at the hook reads (``actions.HOOKS_CLEARED_KEY``).
"""

from __future__ import annotations

import re
from typing import Any

from stoker.engine.actions import HOOKS_CLEARED_KEY
from stoker.engine.sealing import stored_resource_fields
from stoker.errors import Conflict, NotFound, StaleWrite

COMPLETE, FAILED = "COMPLETE", "FAILED"
#: how often a hook's clear is tried again when the resource's row changed under it
HOOK_CLEAR_ATTEMPTS = 10


def mark_unhealthy(engine: Any, name_or_id: str, resource_name: str, unhealthy: bool = True,
                   reason: str = "") -> None:
    """CHECK_FAILED (the next update replaces it), or back to CHECK_COMPLETE."""
    record = engine.get_record(name_or_id)
    with engine.locked(record, "CHECK"):
        stack = engine.runtime(record)
        resource = stack.resources.get(resource_name)
        if resource is None:
            raise NotFound(f"The Resource ({resource_name}) could not be found in Stack {record.name}.")
        status = FAILED if unhealthy else COMPLETE
        reason = reason or ("marked unhealthy by user" if unhealthy else "marked healthy by user")
        engine.run(_set_and_flush(resource, resource.CHECK, status, reason))


async def _set_and_flush(resource, action: str, status: str, reason: str) -> None:
    await resource.set_state(action, status, reason)
    await resource.stack.recorder.flush()


def clear_hook(engine: Any, name_or_id: str, resource_name: str, hook: str | None = None) -> str:
    """Let a resource paused at a breakpoint go on; returns the hook cleared.

    ``hook`` (pre-create, pre-update, pre-delete) defaults to the one the
    resource is paused at; clearing a hook it is not paused at is an error.
    """
    record = engine.get_record(name_or_id)
    for _attempt in range(HOOK_CLEAR_ATTEMPTS):  # the row's data is read, changed, written back if unchanged
        row, hook = _hook_to_clear(engine, record, resource_name, hook)
        data = dict(row.data or {})
        data[HOOKS_CLEARED_KEY] = sorted({*data.get(HOOKS_CLEARED_KEY, []), hook})
        try:
            engine.store.update_resource(row.id, expected_atomic_key=row.atomic_key,
                                         **stored_resource_fields(engine.runtime(record), {"data": data}))
            break
        except StaleWrite:
            continue
    else:
        raise Conflict(f"Resource {resource_name} kept changing while its hook was cleared; try again")
    engine.store.add_event(record.id, resource_name=resource_name, resource_type=row.type,
                           physical_resource_id=row.physical_resource_id, action=row.action,
                           status=row.status, reason=f"Hook {hook} is cleared")
    return hook


def _hook_to_clear(engine: Any, record, resource_name: str, hook: str | None) -> tuple:
    """The resource's row and the hook it is paused at (``hook``, if given, must be that one)."""
    rows = [r for r in engine.store.get_resources(record.id) if r.name == resource_name and r.replaced_by is None]
    if not rows:
        raise NotFound(f"The Resource ({resource_name}) could not be found in Stack {record.name}.")
    row = rows[-1]
    paused = re.search(r"paused until Hook (\S+) is cleared", row.status_reason or "")
    if paused is None or (hook is not None and paused.group(1) != hook):
        raise Conflict(f"Resource {resource_name} is not paused at hook {hook or '(any)'}")
    return row, paused.group(1)
