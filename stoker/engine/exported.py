"""A stack's data as Heat's abandon and export give it: template, files, environment with
the parameters, every resource's state and data (nested stacks inside their owner).
Adopt reads it back; a snapshot keeps it."""

from __future__ import annotations

import copy
from typing import Any

from stoker.store.sealed import opened_values


def children(engine: Any, record: Any) -> dict[str, Any]:
    """Live nested stacks of ``record`` by the name of the resource that owns them."""
    return {child.owner_resource: child for child in engine.store.children(record.id)
            if child.owner_resource}


def export(engine: Any, record: Any) -> dict:
    """Everything needed to adopt the stack elsewhere (Heat's abandon/export data)."""
    raw = engine.store.get_template(record.template_id)
    resources = {}
    for row in _current(engine.store.get_resources(record.id)):
        resources[row.name] = {
            "name": row.name,
            "type": row.type,
            "action": row.action,
            "status": row.status,
            "resource_id": row.physical_resource_id,
            "metadata": row.rsrc_metadata or {},
            # secrets a plug-in kept encrypted (data_set(redact=True)) in clear, as Heat exports them
            "resource_data": opened_values(row.data or {}),
        }
        nested = children(engine, record).get(row.name)
        if nested is not None:
            inner = export(engine, nested)
            resources[row.name].update(resources=inner["resources"], template=inner["template"])
    return {
        "id": record.id,
        "name": record.name,
        "action": record.action,
        "status": record.status,
        "template": raw.content,
        "files": record.files or raw.files or {},
        "environment": _with_parameters(record),
        "resources": resources,
        "project_id": record.project_id,
        "stack_user_project_id": record.project_id,
        "tags": list(record.tags or []),
    }


def _with_parameters(record: Any) -> dict:
    env = copy.deepcopy(record.environment or {})
    params = dict(env.get("parameters") or {})
    params.update(record.parameters or {})
    env["parameters"] = params
    return env


def _current(rows: list) -> list:
    return [row for row in rows if row.replaced_by is None]
