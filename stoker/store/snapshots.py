"""Stack snapshots: what a stack was (template, environment, files, every resource's data)
at one moment, kept until deleted, to restore the stack to (Heat's ``snapshot`` table).

Declared on the models' metadata, so a new database gets the table with the
rest; migration 0012 adds it to older ones.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timezone
from typing import Any

from sqlalchemy import JSON, Column, DateTime, String, Table, Text, delete, select, update
from sqlalchemy.engine import Engine as SAEngine

from stoker.errors import NotFound
from stoker.store.models import metadata

SNAPSHOTS = Table(
    "stack_snapshot", metadata,
    Column("id", String(36), primary_key=True),
    Column("stack_id", String(36), nullable=False, index=True),
    Column("project_id", String(255), nullable=False),
    Column("name", String(255)),
    Column("action", String(32), nullable=False),
    Column("status", String(32), nullable=False),
    Column("status_reason", Text, nullable=False, default=""),
    Column("data", JSON),
    Column("created_at", DateTime, nullable=False),
)


class SnapshotStore:
    """The snapshots of one project's stacks."""

    def __init__(self, engine: SAEngine, project_id: str):
        self.engine, self.project_id = engine, project_id
        self._writer = engine.execution_options(stoker_write=True)

    def add(self, stack_id: str, name: str | None) -> dict:
        row = {"id": str(uuid.uuid4()), "stack_id": stack_id, "project_id": self.project_id, "name": name,
               "action": "CREATE", "status": "IN_PROGRESS", "status_reason": "", "data": None,
               "created_at": datetime.now(timezone.utc).replace(tzinfo=None)}
        with self._writer.begin() as conn:
            conn.execute(SNAPSHOTS.insert().values(**row))
        return row

    def set(self, snapshot_id: str, **fields: Any) -> None:
        with self._writer.begin() as conn:
            conn.execute(update(SNAPSHOTS).where(SNAPSHOTS.c.id == snapshot_id).values(**fields))

    def get(self, stack_id: str, snapshot_id: str) -> dict:
        query = select(SNAPSHOTS).where(SNAPSHOTS.c.id == snapshot_id, SNAPSHOTS.c.stack_id == stack_id,
                                        SNAPSHOTS.c.project_id == self.project_id)
        with self.engine.connect() as conn:
            row = conn.execute(query).mappings().one_or_none()
        if row is None:
            raise NotFound(f"The Snapshot ({snapshot_id}) could not be found.")
        return dict(row)

    def of_stack(self, stack_id: str) -> list[dict]:
        query = (select(SNAPSHOTS).where(SNAPSHOTS.c.stack_id == stack_id,
                                         SNAPSHOTS.c.project_id == self.project_id)
                 .order_by(SNAPSHOTS.c.created_at, SNAPSHOTS.c.id))
        with self.engine.connect() as conn:
            return [dict(row) for row in conn.execute(query).mappings()]

    def remove(self, snapshot_id: str) -> None:
        with self._writer.begin() as conn:
            conn.execute(delete(SNAPSHOTS).where(SNAPSHOTS.c.id == snapshot_id))
