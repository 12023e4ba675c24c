"""Software configs and deployments, per project, in the API's own tables.

The API routes use them, and so do the resource types that make them
(``OS::Heat::SoftwareConfig`` and ``OS::Heat::SoftwareDeployment``), as in Heat.
"""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import delete, select, update
from sqlalchemy.engine import Engine as SAEngine

from stoker.store.api_tables import SOFTWARE_CONFIGS, SOFTWARE_DEPLOYMENTS, iso, utcnow
from stoker.errors import NotFound

DEPLOY_INPUTS = {
    "deploy_server_id": "ID of the server being deployed to",
    "deploy_action": "Name of the current action being deployed",
    "deploy_stack_id": "ID of the stack this deployment belongs to",
    "deploy_resource_name": "Name of this deployment resource in the stack",
    "deploy_signal_transport": "How the server should signal to heat with the deployment output values.",
}


class SoftwareStore:
    def __init__(self, engine: SAEngine):
        self.engine = engine
        self._writer = engine.execution_options(stoker_write=True)

    def for_project(self, project: str) -> "ProjectSoftware":
        return ProjectSoftware(self, project)

    # -- configs --------------------------------------------------------------------------
    def create_config(self, project: str, name: str | None, group: str, config: Any,
                      inputs: list, outputs: list, options: Any, config_id: str | None = None) -> dict:
        config_id = config_id or str(uuid.uuid4())
        with self._writer.begin() as conn:
            conn.execute(SOFTWARE_CONFIGS.insert().values(
                id=config_id, project_id=project, name=name, group=group, config=config, inputs=inputs,
                outputs=outputs, options=options, created_at=utcnow()))
        return self.get_config(project, config_id)

    def _row(self, table: Any, kind: str, project: str, row_id: str) -> Any:
        """The project's row ``row_id`` of ``table``; NotFound names the ``kind``."""
        query = select(table).where(table.c.id == row_id, table.c.project_id == project)
        with self.engine.connect() as conn:
            row = conn.execute(query).one_or_none()
        if row is None:
            raise NotFound(f"The {kind} ({row_id}) could not be found.")
        return row

    def get_config(self, project: str, config_id: str) -> dict:
        return _config(self._row(SOFTWARE_CONFIGS, "Software Config", project, config_id))

    def list_configs(self, project: str, limit: int | None = None, marker: str | None = None) -> list[dict]:
        table = SOFTWARE_CONFIGS
        query = select(table).where(table.c.project_id == project)
        with self.engine.connect() as conn:
            if marker:
                after = conn.execute(select(table.c.created_at, table.c.id).where(
                    table.c.id == marker, table.c.project_id == project)).one_or_none()
                if after is None:
                    raise NotFound(f"The Software Config ({marker}) could not be found.")
                query = query.where((table.c.created_at > after.created_at)
                                    | ((table.c.created_at == after.created_at) & (table.c.id > after.id)))
            rows = conn.execute(query.order_by(table.c.created_at, table.c.id).limit(limit)).all()
        return [{"id": r.id, "name": r.name, "group": r.group, "creation_time": iso(r.created_at)} for r in rows]

    def delete_config(self, project: str, config_id: str) -> None:
        self.get_config(project, config_id)
        self.forget_config(project, config_id)

    def forget_config(self, project: str, config_id: str) -> None:
        """Delete a config row if there is one (a resource deleting what it made)."""
        self._forget(SOFTWARE_CONFIGS, project, config_id)

    # -- deployments -------------------------------------------------------------------------
    def create_deployment(self, project: str, fields: dict) -> dict:
        self.get_config(project, fields["config_id"])
        deployment_id = fields.get("id") or str(uuid.uuid4())
        with self._writer.begin() as conn:
            conn.execute(SOFTWARE_DEPLOYMENTS.insert().values(
                id=deployment_id, project_id=project, config_id=fields["config_id"],
                server_id=fields["server_id"], action=fields.get("action") or "INIT",
                status=fields.get("status") or "COMPLETE", status_reason=fields.get("status_reason") or "",
                input_values=fields.get("input_values") or {}, output_values=fields.get("output_values"),
                stack_user_project_id=fields.get("stack_user_project_id"), created_at=utcnow()))
        return self.get_deployment(project, deployment_id)

    def _deployment_row(self, project: str, deployment_id: str) -> Any:
        return self._row(SOFTWARE_DEPLOYMENTS, "Software Deployment", project, deployment_id)

    def get_deployment(self, project: str, deployment_id: str) -> dict:
        return _deployment(self._deployment_row(project, deployment_id))

    def list_deployments(self, project: str, server_id: str | None = None) -> list[dict]:
        table = SOFTWARE_DEPLOYMENTS
        query = select(table).where(table.c.project_id == project)
        if server_id is not None:
            query = query.where(table.c.server_id == server_id)
        with self.engine.connect() as conn:
            rows = conn.execute(query.order_by(table.c.created_at, table.c.id)).all()
        return [_deployment(r) for r in rows]

    def update_deployment(self, project: str, deployment_id: str, fields: dict) -> dict:
        self._deployment_row(project, deployment_id)
        if fields.get("config_id"):
            self.get_config(project, fields["config_id"])
        values = {k: v for k, v in fields.items()
                  if k in ("config_id", "action", "status", "status_reason", "input_values", "output_values")
                  and v is not None}
        values["updated_at"] = utcnow()
        with self._writer.begin() as conn:
            conn.execute(update(SOFTWARE_DEPLOYMENTS).where(SOFTWARE_DEPLOYMENTS.c.id == deployment_id,
                                                            SOFTWARE_DEPLOYMENTS.c.project_id == project)
                         .values(**values))
        return self.get_deployment(project, deployment_id)

    def delete_deployment(self, project: str, deployment_id: str) -> None:
        self._deployment_row(project, deployment_id)
        self.forget_deployment(project, deployment_id)

    def forget_deployment(self, project: str, deployment_id: str) -> None:
        """Delete a deployment row if there is one (a resource deleting what it made)."""
        self._forget(SOFTWARE_DEPLOYMENTS, project, deployment_id)

    def _forget(self, table: Any, project: str, row_id: str) -> None:
        with self._writer.begin() as conn:
            conn.execute(delete(table).where(table.c.id == row_id, table.c.project_id == project))

    def metadata(self, project: str, server_id: str) -> list[dict]:
        """What a server's agent reads: each deployment's config, inputs filled in."""
        out = []
        for deployment in self.list_deployments(project, server_id):
            try:
                config = self.get_config(project, deployment["config_id"])
            except NotFound:
                continue
            values = deployment.get("input_values") or {}
            inputs = []
            for entry in config.get("inputs") or []:
                entry = dict(entry)
                if entry.get("name") in values:
                    entry["value"] = values[entry["name"]]
                inputs.append(entry)
            declared = {i.get("name") for i in inputs}
            for name, description in DEPLOY_INPUTS.items():
                if name in values and name not in declared:
                    inputs.append({"name": name, "type": "String", "value": values[name],
                                   "description": description})
            config.update(inputs=inputs, creation_time=deployment["creation_time"],
                          updated_time=deployment["updated_time"])
            out.append(config)
        return sorted(out, key=lambda c: (c.get("group") or "", c.get("creation_time") or ""))


class ProjectSoftware:
    """One project's software store: what a resource type uses (it knows its project)."""

    def __init__(self, store: SoftwareStore, project: str):
        self.store, self.project = store, project

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.store, name)
        return lambda *args, **kwargs: method(self.project, *args, **kwargs)


def outcome(output_values: dict, outputs: list | None = None) -> tuple[str, str]:
    """``(status, reason)`` of a deployment given what its agent reported, as Heat decides:
    a non-zero ``deploy_status_code`` or a set ``error_output`` output fails it."""
    failures = [f"{o['name']} : {output_values[o['name']]}" for o in outputs or []
                if o.get("error_output") and output_values.get(o["name"]) is not None]
    code = output_values.get("deploy_status_code")
    if code is not None and str(code) != "0":
        failures.insert(0, f"deploy_status_code : Deployment exited with non-zero status code: {code}")
    if failures:
        return "FAILED", ", ".join(failures)
    return "COMPLETE", "Outputs received"


def _config(row: Any) -> dict:
    return {"id": row.id, "name": row.name, "group": row.group, "config": row.config,
            "inputs": row.inputs or [], "outputs": row.outputs or [], "options": row.options,
            "creation_time": iso(row.created_at)}


def _deployment(row: Any) -> dict:
    return {"id": row.id, "config_id": row.config_id, "server_id": row.server_id, "action": row.action,
            "status": row.status, "status_reason": row.status_reason, "input_values": row.input_values or {},
            "output_values": row.output_values, "creation_time": iso(row.created_at),
            "updated_time": iso(row.updated_at)}
