"""A stack's data as Heat's abandon and export give it: template, files, environment with
the parameters, every resource's state and data (nested stacks inside their owner).
Adopt reads it back (``adopt_data``, ``adoption_template``, ``adopted_resource_data``);
a snapshot keeps it; ``abandon`` gives it and forgets the stack."""

from __future__ import annotations

import copy
import json
from typing import Any

from stoker.errors import ValidationFailed
from stoker.store.sealed import opened_values
from stoker.template.versions import get_version


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


def abandon(engine: Any, record: Any) -> dict:
    """Forget the stack but leave what it made: its rows go, no resource is deleted."""
    data = export(engine, record)
    engine.store.acquire_lock(record.id, engine.engine_id, "ABANDON")
    try:
        _forget(engine, record)
    finally:
        engine.store.release_lock(record.id, engine.engine_id)
    return data


def _forget(engine: Any, record: Any) -> None:
    for child in engine.store.children(record.id):
        _forget(engine, child)
    engine.store.delete_resources_bulk(row.id for row in engine.store.get_resources(record.id))
    engine.store.update_stack(record.id, action="ABANDON", status="COMPLETE",
                              status_reason="Stack ABANDON completed successfully")
    engine.store.soft_delete_stack(record.id)


def adopt_data(raw: Any) -> dict:
    """Heat's ``adopt_stack_data``: the abandon output, as a map or its JSON text."""
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError as exc:
            raise ValidationFailed.single(("adopt_stack_data",), "invalid-adopt-data",
                                          f"Invalid adopt data: {exc}") from None
    if not isinstance(raw, dict) or not isinstance(raw.get("template"), dict):
        raise ValidationFailed.single(("adopt_stack_data",), "invalid-adopt-data",
                                      "Invalid adopt data: it needs the stack's 'template'")
    if not isinstance(raw.get("resources", {}), dict):
        raise ValidationFailed.single(("adopt_stack_data",), "invalid-adopt-data",
                                      "Invalid adopt data: 'resources' must be a map")
    return raw


def adoption_template(data: dict) -> dict:
    """The adopted stack's template; from 2016-10-14 each existing resource is taken over
    through ``external_id`` (earlier versions have no such key: see adopted_resource_data)."""
    template = copy.deepcopy(data["template"])
    version = get_version(template.get("heat_template_version"))
    if version is None or "external_id" not in version.resource_keys:
        return template
    resources = template.get("resources") or {}
    for name, entry in (data.get("resources") or {}).items():
        if name in resources and isinstance(resources[name], dict) and isinstance(entry, dict) \
                and entry.get("resource_id") not in (None, "") and "resources" not in entry:
            resources[name]["external_id"] = str(entry["resource_id"])
    return template


def adopted_resource_data(data: dict) -> dict:
    """From abandon data: each resource's physical id, data and metadata, for the engine to
    give back at adopt."""
    found = {}
    for name, entry in (data.get("resources") or {}).items():
        if not isinstance(entry, dict):
            continue
        kept = {}
        if entry.get("resource_id") not in (None, "") and "resources" not in entry:
            kept["resource_id"] = str(entry["resource_id"])
        if isinstance(entry.get("resource_data"), dict) and entry["resource_data"]:
            kept["data"] = entry["resource_data"]
        if isinstance(entry.get("metadata"), dict) and entry["metadata"]:
            kept["metadata"] = entry["metadata"]
        if isinstance(entry.get("resources"), dict):  # a nested stack: its resources are adopted
            kept["nested"] = adopted_resource_data(entry)
        if kept:
            found[name] = kept
    return found


def export_stack(engine: Any, name_or_id: str) -> dict:
    """Heat's export: everything needed to adopt the stack elsewhere."""
    return export(engine, engine.get_record(name_or_id))


def abandon_stack(engine: Any, name_or_id: str) -> dict:
    """Heat's abandon: the export data; the stack is forgotten, nothing it made is deleted."""
    return abandon(engine, engine.get_record(name_or_id))


def adopt_stack(engine: Any, name: str, data: Any, environment: Any = None, parameters: dict | None = None,
                timeout_mins: int | None = None) -> dict:
    """Heat's adopt: a stack made from abandon ``data`` (a map or its JSON text), taking over what it
    lists instead of making it again."""
    from stoker.template.environment import Environment
    from stoker.template.template import Template

    data = adopt_data(data)
    template = Template(adoption_template(data), data.get("files") or {})
    environment = environment or Environment.from_dict(data.get("environment") or {})
    return engine.create_stack(name, template, environment, parameters, timeout_mins=timeout_mins,
                               tags=data.get("tags") or (), adopted_data=adopted_resource_data(data))
