"""What clients see: the JSON shapes of stacks, resources, events, outputs and parameters.

As Heat's ``engine/api.py``, one module defines every shape the CLI and the API print, so
a field is named once and both agree.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from stoker.engine.stack import Stack
from stoker.errors import ResourcePending, StokerError
from stoker.functions.base import resolve
from stoker.functions.sizes import check_stored
from stoker.resources.openstack.shapes import ATTRIBUTES_KEY as SIMULATED_KEY  # present: a simulated row
from stoker.template.parameters import masked


def _iso(value: datetime | None) -> str | None:
    return value.strftime("%Y-%m-%dT%H:%M:%SZ") if value else None


def stack_summary(record) -> dict:
    return {
        "id": record.id,
        "stack_name": record.name,
        "stack_status": f"{record.action}_{record.status}",
        "stack_status_reason": record.status_reason,
        "creation_time": _iso(record.created_at),
        "updated_time": _iso(record.updated_at),
        "deletion_time": _iso(record.deleted_at),
        "parent": record.parent_id,
        "stack_owner": None,
        "project": record.project_id,
    }


def action_result(store: Any, stack: Stack) -> dict:
    """What an action returns: the stack as stored, with outputs from the live stack."""
    info = stack_summary(store.get_stack(stack.id, stack.project_id, show_deleted=True))
    info["outputs"] = stack.ended_outputs if stack.ended_outputs is not None else output_entries(stack)
    return info


def resource_summary(row, record) -> dict:
    return {
        "resource_name": row.name,
        "resource_type": row.type,
        "resource_status": f"{row.action}_{row.status}",
        "resource_status_reason": row.status_reason,
        "physical_resource_id": row.physical_resource_id or "",
        "logical_resource_id": row.name,
        "creation_time": _iso(row.created_at),
        "updated_time": _iso(row.updated_at),
        "stack_name": record.name,
        "replaces": row.replaces,
        "replaced_by": row.replaced_by,
        **({"simulated": True} if SIMULATED_KEY in (row.data or {}) else {}),
    }


def event_summary(event, record) -> dict:
    return {
        "id": event.uuid,
        "resource_name": event.resource_name,
        "resource_type": event.resource_type,
        "physical_resource_id": event.physical_resource_id or "",
        "resource_status": f"{event.action}_{event.status}",
        "resource_status_reason": event.reason,
        "event_time": _iso(event.created_at),
        "stack_name": record.name,
    }


def output_entries(stack: Stack) -> list[dict]:
    """The stack's outputs as clients see them: a value, or null and the error that stopped it."""
    definition = stack.definition
    if definition is None:
        return []
    result = []
    for name, output in definition.outputs.items():
        entry = {"output_key": name, "description": output.description or "No description given"}
        try:
            value = resolve(output.value) if definition.enabled(output.condition) else None
            entry["output_value"] = check_stored(value, f"Output {name}")
        except ResourcePending:
            entry["output_value"] = None  # as Heat: a resource never created reads as null
        except (StokerError, ValueError, TypeError) as exc:
            entry["output_value"] = None
            entry["output_error"] = str(exc)
        result.append(entry)
    return result


def shown_parameters(stack: Stack) -> dict:
    """Parameter values with hidden ones masked, pseudo parameters added, all as text."""
    if stack.definition is None:
        return {}
    values = masked(stack.definition.parameter_schemas, stack.definition.parameters)
    values.update(stack.definition.context.pseudo_parameters())
    return {k: v if isinstance(v, str) else as_text(v) for k, v in values.items()}


def as_text(value: Any) -> str:
    """A parameter's value as Heat shows it: JSON for a map or list, ``true`` for True."""
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    return str(value).lower() if isinstance(value, bool) else str(value)
