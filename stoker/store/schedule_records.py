"""Execution schedules (``cfy deployments schedule``): a workflow a deployment runs at the times a rule gives.

A row keeps the rule as given and ``next_occurrence``, the next time it is due.  Whoever fires a due
schedule first moves ``next_occurrence`` on with a conditional update (``claim``): of several servers
looking at the same moment, one runs it.  A deployment's schedules go with it (ON DELETE CASCADE).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Iterable

from sqlalchemy import (JSON, Boolean, Column, ForeignKey, Index, Integer, String, Table, delete, insert, select,
                        update)
from sqlalchemy.exc import IntegrityError

from stoker.errors import Conflict, NotFound
from stoker.store.models import Deployment, Execution, UTCDateTime, metadata, utcnow
from stoker.store.records import Records

SCHEDULES = Table(
    "execution_schedule", metadata,
    Column("pk", Integer, primary_key=True, autoincrement=True),
    Column("id", String(255), nullable=False),
    Column("project_id", String(255), nullable=False),
    Column("deployment_pk", ForeignKey("deployment.pk", ondelete="CASCADE"), nullable=False),
    Column("workflow_id", String(255), nullable=False),
    Column("parameters", JSON),
    #: Cloudify's: allow_custom_parameters, force, is_dry_run, wait_after_fail
    Column("execution_arguments", JSON, nullable=False),
    Column("since", UTCDateTime),
    Column("until", UTCDateTime),
    #: ``{"rrule": ...}`` or ``{"recurrence": ..., "count": ..., "weekdays": [...]}`` (``schedule_rules``)
    Column("rule", JSON, nullable=False),
    #: minutes a due run may be late and still run (a server down at the time skips it past that)
    Column("slip", Integer, nullable=False, default=0),
    Column("stop_on_fail", Boolean, nullable=False, default=False),
    Column("enabled", Boolean, nullable=False, default=True),
    Column("next_occurrence", UTCDateTime, index=True),
    #: the next runs, as computed when the schedule was written or last fired (``schedule_rules.plan``)
    Column("upcoming", JSON, nullable=False, default=list),
    Column("latest_execution_id", String(36)),
    Column("created_by", String(255), nullable=False),
    Column("created_at", UTCDateTime, nullable=False, default=utcnow),
    Index("ix_execution_schedule_deployment_id", "deployment_pk", "id", unique=True),
)


DEPLOYMENTS: Table = Deployment.__table__  # type: ignore[assignment]
EXECUTIONS: Table = Execution.__table__  # type: ignore[assignment]


class ScheduleRecords(Records):
    """The schedules of every project, over the stack store's connections.  A row read carries its
    deployment's id and the status of the execution it started last (``latest_execution_status``)."""

    @staticmethod
    def _select() -> Any:
        latest = EXECUTIONS.c.id == SCHEDULES.c.latest_execution_id
        return (select(SCHEDULES, DEPLOYMENTS.c.id.label("deployment_id"),
                       EXECUTIONS.c.status.label("latest_execution_status"))
                .join(DEPLOYMENTS, DEPLOYMENTS.c.pk == SCHEDULES.c.deployment_pk)
                .outerjoin(EXECUTIONS, latest & (EXECUTIONS.c.deployment_pk == SCHEDULES.c.deployment_pk)))

    def add(self, row: dict) -> dict:
        try:
            with self._write() as conn:
                conn.execute(insert(SCHEDULES).values(**row))
        except IntegrityError:
            raise Conflict(f"Execution schedule {row['id']} already exists on this deployment") from None
        return self.get(row["deployment_pk"], row["id"])

    def get(self, deployment_pk: int, schedule_id: str) -> dict:
        with self._read() as conn:
            found = self._rows(conn.execute(self._select().where(SCHEDULES.c.deployment_pk == deployment_pk,
                                                                 SCHEDULES.c.id == schedule_id)))
        if not found:
            raise NotFound(f"Requested `ExecutionSchedule` with ID `{schedule_id}` was not found")
        return found[0]

    def list(self, project_ids: Iterable[str], deployment_pk: int | None = None) -> list[dict]:
        query = self._select().where(SCHEDULES.c.project_id.in_(list(project_ids)))
        if deployment_pk is not None:
            query = query.where(SCHEDULES.c.deployment_pk == deployment_pk)
        with self._read() as conn:
            return self._rows(conn.execute(query.order_by(SCHEDULES.c.pk)))

    def change(self, pk: int, **fields: Any) -> None:
        with self._write() as conn:
            conn.execute(update(SCHEDULES).where(SCHEDULES.c.pk == pk).values(**fields))

    def delete(self, pk: int) -> None:
        with self._write() as conn:
            conn.execute(delete(SCHEDULES).where(SCHEDULES.c.pk == pk))

    def due(self, now: datetime, limit: int) -> list[dict]:
        """The enabled schedules of every project whose next run is at ``now`` or before, the most overdue
        first, ``limit`` at most."""
        with self._read() as conn:
            return self._rows(conn.execute(self._select().where(
                SCHEDULES.c.enabled.is_(True), SCHEDULES.c.next_occurrence <= now)
                .order_by(SCHEDULES.c.next_occurrence).limit(limit)))

    def claim(self, row: dict, **fields: Any) -> bool:
        """Move a due schedule on (``fields``: its next occurrence...) unless another server did first."""
        with self._write() as conn:
            moved = conn.execute(update(SCHEDULES).where(
                SCHEDULES.c.pk == row["pk"], SCHEDULES.c.next_occurrence == row["next_occurrence"]).values(**fields))
        return moved.rowcount == 1
