"""A tenant's saved deployment filters: named, checked filter rules (``blueprint.filter_rules``) that lists,
searches and deployment groups name by id."""

from __future__ import annotations

from typing import Any

from stoker.blueprint.blueprint_errors import BlueprintError
from stoker.blueprint import visibility
from stoker.blueprint.filter_rules import checked
from stoker.store.filter_records import FilterRecords, missing

class SavedFilters:
    def __init__(self, store: Any, project_id: str):
        self.records = FilterRecords(store)
        self.project_id = project_id

    def create(self, filter_id: str, rules: Any, shown_to: Any = None, created_by: str = "admin") -> dict:
        if not filter_id or len(filter_id) > 255:
            raise BlueprintError("a filter id is 1 to 255 characters", code="invalid-filter")
        self.records.add({"project_id": self.project_id, "id": filter_id, "filter_rules": checked(rules),
                          "visibility": visibility.checked(shown_to or "tenant"), "created_by": created_by})
        return self.get(filter_id)

    def get(self, filter_id: str) -> dict:
        return self.records.get(self.project_id, filter_id)

    def rules(self, filter_id: str) -> list[dict]:
        return self.get(filter_id)["filter_rules"]

    def list(self) -> list[dict]:
        return self.records.list([self.project_id])

    def update(self, filter_id: str, rules: Any = None, shown_to: Any = None) -> dict:
        found = self._own(filter_id)
        fields: dict[str, Any] = {}
        if rules is not None:
            fields["filter_rules"] = checked(rules)
        if shown_to:
            fields["visibility"] = visibility.checked(shown_to)
        self.records.change(found["pk"], **fields)
        return self.get(filter_id)

    def delete(self, filter_id: str) -> None:
        self.records.delete(self._own(filter_id)["pk"])

    def _own(self, filter_id: str) -> dict:
        found = self.get(filter_id)
        if found["project_id"] != self.project_id:  # another tenant's global filter: used, not changed here
            raise missing(filter_id)
        return found
