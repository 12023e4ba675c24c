"""How ``Store.list_stacks`` turns filters, tags, sort keys and a marker into SQL."""

from __future__ import annotations

import json
from typing import Any, Sequence

from sqlalchemy import ColumnElement, String, and_, cast, func, not_, or_

from stoker.errors import StokerError
from stoker.store.models import Stack

# Sort keys by our column names and by the names `openstack stack list` uses.
SORT_KEYS: dict[str, ColumnElement] = {
    "id": Stack.id,
    "name": Stack.name,
    "action": Stack.action,
    "status": Stack.status,
    "created_at": Stack.created_at,
    # Never-updated stacks sort by their creation time.
    "updated_at": func.coalesce(Stack.updated_at, Stack.created_at),
}
SORT_KEYS |= {
    "stack_name": SORT_KEYS["name"],
    "stack_status": SORT_KEYS["status"],
    "creation_time": SORT_KEYS["created_at"],
    "updated_time": SORT_KEYS["updated_at"],
}
FILTER_KEYS = {"id", "name", "action", "status", "parent_id", "owner_resource"}
STATUSES = ("IN_PROGRESS", "COMPLETE", "FAILED")
TAG_MODES = ("all", "any", "not", "not-any")


def is_descending(sort_dir: str) -> bool:
    """Also used for events."""
    if sort_dir not in ("asc", "desc"):
        raise StokerError(f"sort direction must be asc or desc, not {sort_dir!r}")
    return sort_dir == "desc"


def sort_columns(sort_keys: Sequence[str]) -> list[ColumnElement]:
    unknown = [k for k in sort_keys if k not in SORT_KEYS]
    if unknown:
        raise StokerError(f"cannot sort stacks by {', '.join(unknown)}; use one of {', '.join(SORT_KEYS)}")
    columns = list(dict.fromkeys(SORT_KEYS[k] for k in sort_keys))
    return columns + [Stack.id] if Stack.id not in columns else columns


def after(keys: list[ColumnElement], marker: tuple, descending: bool) -> ColumnElement[bool]:
    """Rows that sort after the marker row: (k1 > m1) or (k1 = m1 and k2 > m2) or ..."""
    alternatives = []
    for i, (key, value) in enumerate(zip(keys, marker)):
        beyond = key < value if descending else key > value
        alternatives.append(and_(*(k == v for k, v in zip(keys[:i], marker[:i])), beyond))
    return or_(*alternatives)


def filter_clause(key: str, value: Any) -> ColumnElement[bool]:
    if key not in FILTER_KEYS:
        raise StokerError(f"cannot filter stacks by {key}; use one of {', '.join(sorted(FILTER_KEYS))}")
    values = list(value) if isinstance(value, (list, tuple, set)) else [value]
    if key == "status":
        return or_(*(_status_clause(v) for v in values))
    return getattr(Stack, key).in_(values)


def _status_clause(value: str) -> ColumnElement[bool]:
    """``COMPLETE`` matches the status; ``CREATE_COMPLETE`` the action and status."""
    for status in STATUSES:
        if value.endswith("_" + status):
            return and_(Stack.action == value[: -len(status) - 1], Stack.status == status)
    return Stack.status == value


def tags_clause(tags: Sequence[str], mode: str) -> ColumnElement[bool]:
    """Match tags inside the stored JSON text, the same on SQLite and PostgreSQL.

    Each tag is searched as its JSON string literal (quotes included), so it
    only matches whole list elements.
    """
    if mode not in TAG_MODES:
        raise StokerError(f"tag mode must be one of {', '.join(TAG_MODES)}, not {mode!r}")
    has = [cast(Stack.tags, String).like(f"%{_escape_like(json.dumps(t))}%", escape="\\") for t in tags]
    return {"all": and_(*has), "any": or_(*has), "not": not_(and_(*has)), "not-any": not_(or_(*has))}[mode]


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
