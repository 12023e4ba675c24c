"""A tenant's saved filters of one kind (deployments or blueprints): named, checked filter rules
(``blueprint.filter_rules``) that lists, searches and deployment groups name by id."""

from __future__ import annotations

from typing import Any

from stoker.blueprint.blueprint_errors import BlueprintError
from stoker.blueprint import visibility
from stoker.blueprint.filter_rules import checked, meeting
from stoker.store.filter_records import FilterRecords, missing

#: the manager keeps filter ids with this prefix for itself
RESERVED_PREFIX = "csys-"


class SavedFilters:
    def __init__(self, store: Any, project_id: str, kind: str = "deployments"):
        self.records = FilterRecords(store)
        self.project_id = project_id
        self.kind = kind

    def create(self, filter_id: str, rules: Any, shown_to: Any = None, created_by: str = "admin") -> dict:
        if not filter_id or len(filter_id) > 255:
            raise BlueprintError("a filter id is 1 to 255 characters", code="invalid-filter")
        if filter_id.lower().startswith(RESERVED_PREFIX):
            raise BlueprintError(f"All filters with a `{RESERVED_PREFIX}` prefix are reserved for internal use.",
                                 code="invalid-filter")
        self.records.add({"project_id": self.project_id, "kind": self.kind, "id": filter_id,
                          "filter_rules": checked(rules, self.kind),
                          "visibility": visibility.checked(shown_to or "tenant"), "created_by": created_by})
        return self.get(filter_id)

    def get(self, filter_id: str) -> dict:
        return self.records.get(self.project_id, self.kind, filter_id)

    def rules(self, filter_id: str) -> list[dict]:
        return self.get(filter_id)["filter_rules"]

    def list(self) -> list[dict]:
        return self.records.list([self.project_id], self.kind)

    def applied(self, filter_id: str | None, rows: list[dict]) -> list[dict]:
        """The rows (API views) the named filter selects; all of them when none is named."""
        return meeting(self.rules(filter_id), rows) if filter_id else rows

    def update(self, filter_id: str, rules: Any = None, shown_to: Any = None) -> dict:
        """New rules of one type (label or attribute) replace the filter's rules of that type only, as the
        manager's update does; rules of both types replace them all."""
        found = self._own(filter_id)
        fields: dict[str, Any] = {}
        if rules:
            new = checked(rules, self.kind)
            kept = [r for r in found["filter_rules"] if r["type"] not in {n["type"] for n in new}]
            fields["filter_rules"] = kept + new
        if shown_to:
            fields["visibility"] = visibility.checked(shown_to)
        self.records.change(found["pk"], **fields)
        return self.get(filter_id)

    def delete(self, filter_id: str) -> None:
        self.records.delete(self._own(filter_id)["pk"])

    def _own(self, filter_id: str) -> dict:
        found = self.get(filter_id)
        if found["project_id"] != self.project_id:  # another tenant's global filter: used, not changed here
            raise missing(self.kind, filter_id)
        return found
