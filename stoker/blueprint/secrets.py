"""Secrets of a project: stored encrypted, shown masked when hidden, never logged."""

from __future__ import annotations

from typing import Any

from stoker import secretbox
from stoker.errors import NotFound

MASK = "******"


class Secrets:
    def __init__(self, records: Any, project_id: str):
        self.records = records
        self.project_id = project_id

    def create(self, key: str, value: str, update_if_exists: bool = False, hidden: bool = False) -> dict:
        self.records.put_secret(self.project_id, key, secretbox.encrypt(value), hidden, update_if_exists)
        return self.get(key)

    def update(self, key: str, value: str | None = None, hidden: bool | None = None) -> dict:
        fields: dict[str, Any] = {}
        if value is not None:
            fields["value"] = secretbox.encrypt(value)
        if hidden is not None:
            fields["hidden"] = hidden
        self.records.update_secret(self.project_id, key, **fields)
        return self.get(key)

    def get(self, key: str) -> dict:
        """The secret as ``cfy secrets get`` shows it (a hidden value is masked)."""
        row = self.records.get_secret(self.project_id, key)
        if row is None:
            raise NotFound(f"Secret {key} not found")
        value = MASK if row["hidden"] else secretbox.decrypt(row["value"])
        return {"key": row["key"], "value": value, **self._listing(row)}

    @staticmethod
    def _listing(row: dict) -> dict:
        return {"is_hidden_value": row["hidden"], "created_at": row["created_at"].isoformat(),
                "updated_at": row["updated_at"].isoformat()}

    def list(self) -> list[dict]:
        return [{"key": row["key"], **self._listing(row)} for row in self.records.list_secrets(self.project_id)]

    def delete(self, key: str) -> None:
        self.records.delete_secret(self.project_id, key)
