"""What the API needs beyond ``Engine``'s methods, built on the Engine and its Store.

Stack lookup by the API's rules and nested-stack walks (resources and events
to a depth); export, abandon and adopt live in the engine (``stoker.engine.exported``)
and keep their names here for the routes.
"""

from __future__ import annotations

from contextlib import suppress
from typing import Any, Iterator

from stoker.engine.exported import (abandon, adopt_data, adopted_resource_data, adoption_template,  # noqa: F401
                                    children, export)
from stoker.errors import NotFound



def identify(engine: Any, stack_name: str, stack_id: str, deleted_ok: bool = False) -> Any:
    """The stack record at ``/stacks/{stack_name}/{stack_id}`` of the engine's project."""
    try:
        record = engine.store.get_stack(stack_id, engine.project_id, show_deleted=True)
    except NotFound:
        record = None
    if record is None or (record.name, record.id) != (stack_name, stack_id) or (
            record.deleted_at is not None and not deleted_ok):
        raise NotFound(f"The Stack ({stack_name}) could not be found.")
    return record


def lookup(engine: Any, name_or_id: str) -> Any:
    """A live stack by name or id; an id also finds a deleted stack (for polling clients)."""
    with suppress(NotFound):
        return engine.store.get_stack(name_or_id, engine.project_id, show_deleted=False)
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
