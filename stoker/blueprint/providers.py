"""A project's secrets providers (``cfy secrets providers``): made, changed, listed, deleted and checked; how a
secret reads its value from one is ``secret_providers``."""

from __future__ import annotations

import json
from typing import Any

from stoker import secretbox
from stoker.blueprint import visibility
from stoker.blueprint.secret_providers import check, checked_parameters, checked_type, invalid, parameters_of
from stoker.store.provider_records import ProviderRecords, not_found

LONGEST_NAME = 255


class Providers:
    """A project's secrets providers, and the global ones of other projects."""

    def __init__(self, store: Any, project_id: str):
        self.records = ProviderRecords(store)
        self.project_id = project_id

    def create(self, name: Any, kind: Any, params: Any, shown_to: Any, created_by: str) -> dict:
        if not isinstance(name, str) or not 0 < len(name) <= LONGEST_NAME:
            raise invalid(f"a secrets provider's name is 1 to {LONGEST_NAME} characters")
        kind = checked_type(kind)
        self.records.add({"project_id": self.project_id, "name": name, "type": kind,
                          "connection_parameters": secretbox.encrypt(json.dumps(checked_parameters(kind, params))),
                          "visibility": visibility.checked(shown_to or "tenant"), "created_by": created_by})
        return self.get(name)

    def get(self, name: str) -> dict:
        return self.records.find(self.project_id, name)

    def _own(self, name: str) -> dict:
        found = self.get(name)
        if found["project_id"] != self.project_id:  # another tenant's global one: used, not changed here
            raise not_found(name)
        return found

    def list(self) -> list[dict]:
        return self.records.list([self.project_id])

    def update(self, name: str, kind: Any = None, params: Any = None, shown_to: Any = None) -> dict:
        """Change what is given (parameters checked against the new type, or the kept one; none or an empty map
        keeps them); a visibility only widens (``cfy ... update`` sends ``tenant`` when none is asked: no change)."""
        row = self._own(name)
        fields: dict[str, Any] = {}
        if kind:
            fields["type"] = checked_type(kind)
        if params or "type" in fields:
            kept = params or parameters_of(row)
            fields["connection_parameters"] = secretbox.encrypt(json.dumps(
                checked_parameters(fields.get("type", row["type"]), kept)))
        if shown_to and visibility.widens(row["visibility"], visibility.checked(shown_to)):
            fields["visibility"] = shown_to
        if fields:
            self.records.change(row["pk"], **fields)
        return self.get(name)

    def delete(self, name: str) -> None:
        self.records.delete(self._own(name))

    def check(self, name: Any = None, kind: Any = None, params: Any = None) -> None:
        """``cfy secrets providers test``: a stored provider (by name), or one described (type and parameters)."""
        if name:
            row = self.get(name)
            check(row["type"], parameters_of(row), name)
        else:
            kind = checked_type(kind)
            check(kind, checked_parameters(kind, params), "(not stored)")
