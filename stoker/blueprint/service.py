"""``Engine.blueprints``: upload and read blueprints; deployments and secrets hang off it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from stoker.blueprint.deployments import Deployments
from stoker.blueprint.errors import BlueprintError
from stoker.blueprint.parser import parse_file
from stoker.blueprint.secrets import Secrets
from stoker.store.blueprint_records import BlueprintRecords


class BlueprintService:
    """Blueprints of one project, with ``deployments`` and ``secrets`` beside them."""

    def __init__(self, store: Any, project_id: str):
        self.records = BlueprintRecords(store)
        self.project_id = project_id
        self.deployments = Deployments(self.records, project_id)
        self.secrets = Secrets(self.records, project_id)

    @staticmethod
    def validate(path: str | Path) -> dict:
        """The plan, or ``ValidationFailed`` with every problem and its place."""
        return parse_file(path)

    def upload(self, path: str | Path, blueprint_id: str) -> dict:
        if not blueprint_id or not isinstance(blueprint_id, str):
            raise BlueprintError("a blueprint needs an id", code="invalid-id")
        path = Path(path).resolve()
        plan = parse_file(path)
        self.records.add_blueprint(self.project_id, blueprint_id, description=plan.get("description"),
                                   main_file_name=path.name, source_dir=str(path.parent), plan=plan)
        return self.get(blueprint_id)

    @staticmethod
    def _view(row: dict) -> dict:
        plan = row["plan"]
        return {"id": row["id"], "description": row["description"], "main_file_name": row["main_file_name"],
                "created_at": row["created_at"].isoformat(),
                "labels": [{"key": k, "value": v} for k, label in plan.get("blueprint_labels", {}).items()
                           for v in label["values"]],
                "inputs": plan["inputs"], "nodes": len(plan["nodes"])}

    def get(self, blueprint_id: str) -> dict:
        return self._view(self.records.get_blueprint(self.project_id, blueprint_id))

    def plan(self, blueprint_id: str) -> dict:
        return self.records.get_blueprint(self.project_id, blueprint_id)["plan"]

    def list(self) -> list[dict]:
        return [self._view(row) for row in self.records.list_blueprints(self.project_id)]

    def delete(self, blueprint_id: str) -> None:
        self.records.delete_blueprint(self.project_id, blueprint_id)
