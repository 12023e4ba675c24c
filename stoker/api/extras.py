"""What the API needs beyond ``Engine``'s methods, built on the Engine and its Store.

Stack lookup by the API's rules, nested-stack walks (resources and events
to a depth), stack export, abandon and adopt.  Each of these would sit
better in the engine itself; here they use only the Engine and its Store.
"""

from __future__ import annotations

import copy
import json
from typing import Any, Iterator

from stoker.engine.exported import children, export  # noqa: F401 - the API's names too
from stoker.errors import NotFound, ValidationFailed
from stoker.template.versions import get_version



def identify(engine: Any, stack_name: str, stack_id: str, deleted_ok: bool = False) -> Any:
    """The stack record at ``/stacks/{stack_name}/{stack_id}`` of the engine's project."""
    try:
        record = engine.store.get_stack(stack_id, engine.project_id, show_deleted=True)
    except NotFound:
        raise NotFound(f"The Stack ({stack_name}) could not be found.") from None
    if record.name != stack_name or record.id != stack_id:
        raise NotFound(f"The Stack ({stack_name}) could not be found.")
    if record.deleted_at is not None and not deleted_ok:
        raise NotFound(f"The Stack ({stack_name}) could not be found.")
    return record


def lookup(engine: Any, name_or_id: str) -> Any:
    """A live stack by name or id; an id also finds a deleted stack (for polling clients)."""
    try:
        return engine.store.get_stack(name_or_id, engine.project_id, show_deleted=False)
    except NotFound:
        pass
    try:
        record = engine.store.get_stack(name_or_id, engine.project_id, show_deleted=True)
    except NotFound:
        raise NotFound(f"The Stack ({name_or_id}) could not be found.") from None
    if record.id != name_or_id:
        raise NotFound(f"The Stack ({name_or_id}) could not be found.")
    return record


def walk(engine: Any, record: Any, depth: int, parent_resource: str | None = None
         ) -> Iterator[tuple[Any, list, str | None, dict[str, Any]]]:
    """(stack record, its resource rows, owning resource name, its children) down to ``depth``."""
    kids = children(engine, record) if depth > 0 else {}
    yield record, engine.store.get_resources(record.id), parent_resource, kids
    if depth > 0:
        for owner, child in kids.items():
            yield from walk(engine, child, depth - 1, owner)


# -- abandon, adopt (export: stoker.engine.exported) ----------------------------------------
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
