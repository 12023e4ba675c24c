"""Deployment updates (``cfy deployments update``): one row per update, as Cloudify's manager lists them.

The row keeps what the update was asked and computed (blueprints, inputs, steps, the new plan); what it did
is its ``update`` execution's: the row's state is read from that execution (``updating`` while it runs,
``successful`` once it ended well, ``failed`` otherwise), or, a plugins update's, stored.  The changes
themselves are written by the execution (``DeploymentRowChanges``) before it runs and once it ended.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import JSON, Boolean, Column, Connection, String, Table, select

from stoker.store.models import UTCDateTime, metadata, utcnow
from stoker.store.records import Records

DEPLOYMENT_UPDATES = Table(
    "deployment_update", metadata,
    Column("id", String(320), primary_key=True),  # <deployment id>-<uuid>, as Cloudify names them
    Column("project_id", String(255), nullable=False, index=True),
    Column("deployment_id", String(255), nullable=False),
    Column("old_blueprint_id", String(255), nullable=False),
    Column("new_blueprint_id", String(255), nullable=False),
    #: sealed when the blueprint has hidden inputs (``secretbox``), as the deployment's own
    Column("old_inputs", JSON, nullable=False),
    Column("new_inputs", JSON, nullable=False),
    Column("steps", JSON, nullable=False),
    Column("modified_entity_ids", JSON, nullable=False),
    Column("deployment_plan", JSON, nullable=False),
    #: what the update was asked (skip_install, skip_reinstall, ...), as its execution's parameters
    Column("parameters", JSON, nullable=False),
    Column("runtime_only_evaluation", Boolean, nullable=False, default=False),
    Column("execution_id", String(36), nullable=False),
    #: the state when no execution of the deployment has ``execution_id`` (a plugins update's, which runs
    #: no operation: its rows are written at once)
    Column("state", String(32), nullable=False),
    Column("created_by", String(255), nullable=False),
    Column("created_at", UTCDateTime, nullable=False, default=utcnow),
)


def add(conn: Connection, row: dict) -> None:
    conn.execute(DEPLOYMENT_UPDATES.insert().values(**row))


class DeploymentUpdateRecords(Records):
    """The rows, over one store."""

    def add(self, row: dict) -> None:
        with self._write() as conn:
            add(conn, row)

    def list(self, project_ids: list[str], **equal: Any) -> list[dict]:
        c = DEPLOYMENT_UPDATES.c
        query = select(DEPLOYMENT_UPDATES).where(c.project_id.in_(project_ids),
                                                 *[c[k] == v for k, v in equal.items()])
        with self._read() as conn:
            return self._rows(conn.execute(query.order_by(c.created_at, c.id)))
