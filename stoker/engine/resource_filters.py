"""Heat's filters on a resource list (``GET .../resources?status=FAILED``, ``openstack stack
resource list --filter status=FAILED``): which rows they keep, for the API and the CLI alike."""

from __future__ import annotations

from typing import Any, Callable

from stoker.errors import StokerError

#: the keys Heat's resource list filters on
FILTERS = ("type", "status", "name", "action", "id", "physical_resource_id")


class InvalidFilter(StokerError):
    """A filter key Heat does not know (Heat's words, so clients match them)."""


def checked(filters: dict) -> dict:
    """``filters`` as given, refused when a key is not one of ``FILTERS``."""
    unknown = sorted(set(filters) - set(FILTERS))
    if unknown:
        raise InvalidFilter(f"Invalid filter parameters {unknown}; the filters are: {', '.join(FILTERS)}")
    return filters


def matches(row: Any, filters: dict, fields: Callable[[Any, str], list] | None = None) -> bool:
    """Does the stored resource ``row`` (or what ``fields`` reads: an event) pass every filter?  A
    filter given several values keeps a row that has any of them; a status matches the status alone
    or with its action (``FAILED``, ``CREATE_FAILED``)."""
    for key, wanted in filters.items():
        values = [str(v) for v in (wanted if isinstance(wanted, (list, tuple)) else [wanted])]
        if not any(value in (fields or _fields)(row, key) for value in values):
            return False
    return True


def _fields(row: Any, key: str) -> list[str]:
    if key == "status":
        return [row.status, f"{row.action}_{row.status}"]
    value = {"type": row.type, "name": row.name, "action": row.action, "id": row.id,
             "physical_resource_id": row.physical_resource_id}[key]
    return [str(value)] if value is not None else []
