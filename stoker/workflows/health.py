"""Node instance health as Cloudify 7 keeps it in ``system_properties``: what a status or drift check's
operation reported, what reaching ``configured`` / ``started`` resets, and the markers heal and a
deployment update leave on the instances whose heal or update operations failed.

Every change is ``(instance id, keys, value)``: ``keys`` the path in the instance's system properties,
``value`` ``GONE`` to remove it; the runner applies them to its model and stores them as edits.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from stoker.store.instance_health import DRIFTS, implied
from stoker.workflows.model import Instance

#: a change's value that removes its key
GONE = object()
#: how a phase keeps its operations' results (``Runner.keep``)
STATUS, DRIFT = "status", "drift"
#: the phases whose operations' results are kept, and how: the check workflows', heal's and an update's checks
KEPT = {"check_status": STATUS, "heal-check-status": STATUS, "update-check-status": STATUS,
        "check_drift": DRIFT, "update-check-drift": DRIFT}
Change = tuple[str, tuple, Any]


def checked(ok: bool, task: str | None, result: Any) -> dict:
    """One check's record, as Cloudify's ``_format_system_task_result``."""
    return {"ok": ok, "timestamp": datetime.now(timezone.utc).isoformat()[:-6], "task": task,  # UTC, naive (as Cloudify)
            "result": result}


def task_name(operation: dict) -> str:
    """The task an operation runs, as Cloudify names it (its implementation less its plugin)."""
    implementation, plugin = str(operation.get("implementation") or ""), operation.get("plugin")
    return implementation[len(plugin) + 1:] if plugin and implementation.startswith(f"{plugin}.") else implementation


def on_state(instance: Instance, state: str) -> list[Change]:
    """What Cloudify's manager records when an instance reaches ``state``: a configured one has no drift, a
    started one passes its status check."""
    if state == "configured":
        return [(instance.id, (DRIFTS[0],), checked(True, None, None))]
    if state == "started":
        return [(instance.id, ("previous_status",), None), (instance.id, ("status",), checked(True, None, None))]
    return []


def status_kept(instance: Instance, record: dict) -> list[Change]:
    """A status check's result: the previous one kept as ``previous_status``."""
    return [(instance.id, ("previous_status",), instance.system_properties.get("status")),
            (instance.id, ("status",), record)]


def drift_kept(instance: Instance, target: Instance | None, side: str | None, record: dict) -> list[Change]:
    """A drift check's result: the instance's own, or its relationship's to ``target`` (the source side's kept
    on the source by target id, the target side's on the target by source id)."""
    if target is None:
        return [(instance.id, (DRIFTS[0],), record)]
    if side == "source":
        return [(instance.id, (DRIFTS[1], target.id), record)]
    return [(target.id, (DRIFTS[2], instance.id), record)]


def marked(instance: Instance, key: str, execution_id: str) -> bool:
    """Whether ``key`` (heal_failed, update_failed) marks the instance in this execution."""
    return instance.system_properties.get(key) == execution_id


def apply(system_properties: dict, keys: tuple, value: Any) -> None:
    """Set (or remove) ``keys`` in ``system_properties``; a nested entry is replaced by a changed copy, never
    changed in place (a copy of the top level waiting for the writer keeps what it had)."""
    first, *rest = keys
    if rest:
        inner = dict(system_properties.get(first) or {})
        apply(inner, tuple(rest), value)
        system_properties[first] = inner
    elif value is GONE:
        system_properties.pop(first, None)
    else:
        system_properties[first] = value


def apply_stored(stored: dict, state: str | None, keys: tuple, value: Any) -> None:
    """A change applied to an instance's stored system properties: none stored yet, first the records its
    ``state`` implied (``instance_health.implied``)."""
    if not stored and state is not None:
        stored.update(implied({}, state))
    apply(stored, keys, value)


def healthy(instance: Instance, require_task: bool) -> bool:
    """Passing its status check, as Cloudify's heal reads it: ok, or (not ``require_task``) never checked by a
    task at all."""
    status = instance.system_properties.get("status")
    task, ok = (status.get("task"), status.get("ok")) if isinstance(status, dict) and "task" in status \
        and "ok" in status else (None, None)
    return bool(ok or (task is None and not require_task))


def has_drift(instance: Instance) -> bool:
    """A drift found on the instance or one of its relationships (a result that is not empty)."""
    return any(drift.get("result") for drift in _drifts(instance))


def failed_drift_check(instance: Instance) -> bool:
    return any(not drift.get("ok") for drift in _drifts(instance))


def own_drift(instance: Instance) -> bool:
    return bool((instance.system_properties.get(DRIFTS[0]) or {}).get("result"))


def _drifts(instance: Instance) -> list[dict]:
    props = instance.system_properties
    found = [props.get(DRIFTS[0])] + list((props.get(DRIFTS[1]) or {}).values()) + list(
        (props.get(DRIFTS[2]) or {}).values())
    return [drift for drift in found if drift]
