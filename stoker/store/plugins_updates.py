"""Plugins updates (``cfy plugins update BLUEPRINT``): what each one moved, kept as Cloudify lists them.

An update moves the plugin versions a blueprint and its deployments run to newer ones of the catalog.  Its
row and the plans it changes are written in one transaction (``apply``): either every deployment of the
blueprint runs the new versions and the update is stored ``successful``, or nothing changed.  That
transaction holds the deployments' execution locks (``ExecutionRecords.between_executions``): it is refused
while one of them runs an execution, and none starts until it ends, so no execution runs on two versions.
"""

from __future__ import annotations

from typing import Any, Iterable

from sqlalchemy import JSON, Boolean, Column, String, Table, select, update

from stoker import secretbox
from stoker.store.deployment_updates import add as add_update
from stoker.store.execution_records import ExecutionRecords, modify
from stoker.store.locks import execution_gone
from stoker.store.models import Blueprint, UTCDateTime, metadata, utcnow

PLUGINS_UPDATES = Table(
    "plugins_update", metadata,
    Column("id", String(36), primary_key=True),
    Column("project_id", String(255), nullable=False, index=True),
    Column("blueprint_id", String(255), nullable=False),
    #: Cloudify's states: ``successful`` (versions moved), ``no_changes_required``
    Column("state", String(32), nullable=False),
    Column("forced", Boolean, nullable=False, default=False),
    Column("created_by", String(255), nullable=False),
    Column("created_at", UTCDateTime, nullable=False, default=utcnow),
    #: the ``update_plugin`` execution cfy waits for (ended when the row is stored)
    Column("execution_id", String(36), nullable=False),
    Column("deployments_to_update", JSON, nullable=False),
    #: package name -> [version before, version after]
    Column("changes", JSON, nullable=False),
)


def with_versions(plan: Any, changes: dict[str, list[str]]) -> Any:
    """``plan`` (a blueprint's or a deployment's, sealed or not) whose ``plugins`` run the new versions, and
    whose lists of plugins to install (``deployment_plugins_to_install``...) say so."""
    sealed = isinstance(plan, dict) and secretbox.MARK in plan
    opened = dict(secretbox.unseal(plan) if sealed else plan)
    opened["plugins"] = {name: _moved(definition, changes)
                         for name, definition in (opened.get("plugins") or {}).items()}
    for key, entries in list(opened.items()):
        if key.endswith("_plugins_to_install") and isinstance(entries, list):
            opened[key] = [_moved(entry, changes) for entry in entries]
    return secretbox.seal(opened) if sealed else opened


def _moved(definition: Any, changes: dict[str, list[str]]) -> Any:
    moved = changes.get(definition.get("package_name")) if isinstance(definition, dict) else None
    return {**definition, "package_version": moved[1]} if moved else definition


class PluginsUpdates:
    """The rows, over one store (``Store``: its connections read and write)."""

    def __init__(self, store: Any):
        self._read = store._read
        self._executions = ExecutionRecords(store)

    def apply(self, row: dict, blueprint_pk: int, plan: dict | None, deployments: Iterable[tuple[int, dict, dict]]
              ) -> dict:
        """Store ``row``; with changes, the blueprint's plan becomes ``plan`` (parsed again on the new versions)
        and each deployment ``(pk, what its update changes, the update's row)`` moves onto it, as a deployment
        update that runs no operation (``Conflict``, nothing changed, while one of them runs an execution)."""
        deployments = list(deployments)
        blueprints = Blueprint.__table__
        with self._executions.between_executions([pk for pk, _, _ in deployments], execution_gone) as conn:
            if row["changes"]:
                conn.execute(update(blueprints).where(blueprints.c.pk == blueprint_pk).values(plan=plan))
                for pk, decided, update_row in deployments:
                    modify(conn, pk, **decided["before"])
                    modify(conn, pk, **decided["after"])
                    add_update(conn, update_row)
            conn.execute(PLUGINS_UPDATES.insert().values(**row))
        return self.get(row["project_id"], row["id"])

    def get(self, project_id: str, update_id: str) -> dict | None:
        found = self.list([project_id], id=update_id)
        return found[0] if found else None

    def by_execution(self, project_id: str, execution_id: str) -> dict | None:
        found = self.list([project_id], execution_id=execution_id)
        return found[0] if found else None

    def list(self, project_ids: list[str], **equal: Any) -> list[dict]:
        c = PLUGINS_UPDATES.c
        query = select(PLUGINS_UPDATES).where(c.project_id.in_(project_ids), *[c[k] == v for k, v in equal.items()])
        with self._read() as conn:
            return [dict(r._mapping) for r in conn.execute(query.order_by(c.created_at, c.id))]
