"""Deleting ended executions (``cfy executions delete``), their events and logs with them.

Only an execution in an end state goes, and none that another row still reads: a deployment update's (the
update's state is its execution's), a schedule's latest (whether the schedule runs again, or ``stop_on_fail``
disables it, is read from it), or one of an execution group that still has an execution to run or running
(the group's state and a resume of it read its members).  The rest of what an execution owns, its events,
logs, dispatch rows and group membership, goes with its row (ON DELETE CASCADE).  The choice and the delete
are one write transaction, so an execution resumed meanwhile is not one of them.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Iterable

from sqlalchemy import Table, delete, select

from stoker.store.deployment_updates import DEPLOYMENT_UPDATES
from stoker.store.group_tables import EXECUTION_GROUP_MEMBERS
from stoker.store.models import Deployment, Execution
from stoker.store.records import Records
from stoker.store.schedule_records import SCHEDULES

EXECUTIONS: Table = Execution.__table__  # type: ignore[assignment]
DEPLOYMENTS: Table = Deployment.__table__  # type: ignore[assignment]
#: Cloudify's end states, in its order (its refusal lists them so)
ENDED = ("terminated", "failed", "cancelled")
#: executions deleted by one statement (a bound list SQLite takes)
CHUNK = 500


def _needed() -> Any:
    """A condition: another row still reads the execution."""
    e = EXECUTIONS.c
    by_update = select(DEPLOYMENT_UPDATES.c.id).where(DEPLOYMENT_UPDATES.c.project_id == e.project_id,
                                                      DEPLOYMENT_UPDATES.c.execution_id == e.id).exists()
    by_schedule = select(SCHEDULES.c.pk).where(SCHEDULES.c.deployment_pk == e.deployment_pk,
                                               SCHEDULES.c.latest_execution_id == e.id).exists()
    mine, mates, others = EXECUTION_GROUP_MEMBERS.alias(), EXECUTION_GROUP_MEMBERS.alias(), EXECUTIONS.alias()
    by_group = (select(mine.c.group_pk).join(mates, mates.c.group_pk == mine.c.group_pk)
                .join(others, others.c.pk == mates.c.execution_pk)
                .where(mine.c.execution_pk == e.pk, others.c.status.not_in(ENDED)).exists())
    return by_update | by_schedule | by_group


class EndedExecutions(Records):
    """Ended executions of the given projects, deleted."""

    def delete(self, project_ids: Iterable[str], statuses: Iterable[str] = ENDED, keep_last: int | None = None,
               created_before: datetime | None = None, **equal: str) -> int:
        """Delete the ended executions (of ``statuses``, created before ``created_before``, whose
        ``deployment_id``/``workflow_id`` are as ``equal`` says) but the newest ``keep_last`` of them and those
        still needed; how many went."""
        e = EXECUTIONS.c
        query = (select(e.pk, _needed().label("needed")).join(DEPLOYMENTS, DEPLOYMENTS.c.pk == e.deployment_pk)
                 .where(e.project_id.in_(list(project_ids)), e.status.in_([s for s in statuses if s in ENDED])))
        if created_before is not None:
            query = query.where(e.created_at < created_before)
        if "deployment_id" in equal:
            query = query.where(DEPLOYMENTS.c.id == equal["deployment_id"])
        if "workflow_id" in equal:
            query = query.where(e.workflow_id == equal["workflow_id"])
        count = 0
        with self._write() as conn:
            found = conn.execute(query.order_by(e.created_at.desc(), e.pk.desc())).all()
            going = [row.pk for row in found[keep_last or 0:] if not row.needed]
            for start in range(0, len(going), CHUNK):
                count += conn.execute(delete(EXECUTIONS).where(e.pk.in_(going[start:start + CHUNK]),
                                                               e.status.in_(ENDED))).rowcount
        return count
