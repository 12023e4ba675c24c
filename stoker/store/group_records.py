"""Reading and writing deployment groups and execution groups (tables: ``group_tables``).

An execution group's executions are ordinary executions, stored ``queued`` (no owner) with the group;
``take_next`` starts as many of them as the group's concurrency leaves room for, in one write
transaction under their deployments' locks (as ``ExecutionRecords.take_queued``), so two processes
ending two of its executions at once never start more than the group allows.
"""

from __future__ import annotations

import uuid
from typing import Any, Callable, Iterable

from sqlalchemy import Connection, delete, func, insert, select, update
from sqlalchemy.exc import IntegrityError

from stoker.errors import NotFound
from stoker.store.execution_records import ACTIVE, DEPLOYMENTS, EXECUTIONS, ExecutionRecords
from stoker.store.group_tables import (DEPLOYMENT_GROUP_MEMBERS, DEPLOYMENT_GROUPS, EXECUTION_GROUP_MEMBERS,
                                       EXECUTION_GROUPS)
from stoker.store.models import utcnow

DGROUPS, DMEMBERS = DEPLOYMENT_GROUPS, DEPLOYMENT_GROUP_MEMBERS
XGROUPS, XMEMBERS = EXECUTION_GROUPS, EXECUTION_GROUP_MEMBERS


def not_found(kind: str, group_id: str) -> NotFound:
    """Cloudify's storage manager's words for a missing row."""
    return NotFound(f"Requested `{kind}` with ID `{group_id}` was not found")


class GroupRecords(ExecutionRecords):
    """The groups half of the store, beside (and reading) the deployments and executions."""

    # -- deployment groups ------------------------------------------------------------------------
    def _one(self, table: Any, kind: str, project_id: str, group_id: str, attach: Callable) -> dict:
        """The row of group ``group_id`` of ``table``, with what ``attach`` adds (``not_found`` as ``kind``)."""
        with self._read() as conn:
            rows = self._rows(conn.execute(select(table).where(table.c.project_id == project_id,
                                                               table.c.id == group_id)))
            if not rows:
                raise not_found(kind, group_id)
            return attach(conn, rows)[0]

    def _all(self, table: Any, project_id: str, attach: Callable) -> list[dict]:
        with self._read() as conn:
            return attach(conn, self._rows(conn.execute(select(table).where(table.c.project_id == project_id)
                                                        .order_by(table.c.pk))))

    def deployment_group(self, project_id: str, group_id: str) -> dict:
        """The group's row with ``deployment_ids`` (by id) and ``deployment_pks``."""
        return self._one(DGROUPS, "DeploymentGroup", project_id, group_id, self._with_members)

    def deployment_groups(self, project_id: str) -> list[dict]:
        return self._all(DGROUPS, project_id, self._with_members)

    def _with_members(self, conn: Connection, rows: list[dict]) -> list[dict]:
        members: dict[int, list[tuple[int, str]]] = {row["pk"]: [] for row in rows}
        if rows:
            for group_pk, pk, deployment_id in conn.execute(
                    select(DMEMBERS.c.group_pk, DEPLOYMENTS.c.pk, DEPLOYMENTS.c.id)
                    .join(DEPLOYMENTS, DEPLOYMENTS.c.pk == DMEMBERS.c.deployment_pk)
                    .where(DMEMBERS.c.group_pk.in_(members)).order_by(DEPLOYMENTS.c.id)):
                members[group_pk].append((pk, deployment_id))
        return [{**row, "deployment_pks": [pk for pk, _ in members[row["pk"]]],
                 "deployment_ids": [d for _, d in members[row["pk"]]]} for row in rows]

    def put_deployment_group(self, project_id: str, group_id: str, created_by: str, **fields: Any) -> dict:
        """Create the group (empty) or change the fields given; the group as stored."""
        try:
            with self._write() as conn:
                done = conn.execute(update(DGROUPS).where(DGROUPS.c.project_id == project_id,
                                                          DGROUPS.c.id == group_id).values(**fields)).rowcount \
                    if fields else conn.execute(select(func.count()).select_from(DGROUPS).where(
                        DGROUPS.c.project_id == project_id, DGROUPS.c.id == group_id)).scalar()
                if not done:
                    conn.execute(insert(DGROUPS).values(
                        **{"default_inputs": {}, "labels": [], "creation_counter": 0, **fields},
                        id=group_id, project_id=project_id, created_by=created_by, created_at=utcnow()))
        except IntegrityError:  # made meanwhile by another request: change it as this one asked
            return self.put_deployment_group(project_id, group_id, created_by, **fields)
        return self.deployment_group(project_id, group_id)

    def set_members(self, group_pk: int, add: Iterable[int] = (), remove: Iterable[int] = (),
                    replace: bool = False) -> None:
        """Add and remove deployments (``replace``: the group holds ``add`` only), in one transaction."""
        with self._write() as conn:
            if replace:
                conn.execute(delete(DMEMBERS).where(DMEMBERS.c.group_pk == group_pk))
            removed = set(remove)
            if removed:
                conn.execute(delete(DMEMBERS).where(DMEMBERS.c.group_pk == group_pk,
                                                    DMEMBERS.c.deployment_pk.in_(removed)))
            _join(conn, group_pk, [pk for pk in add if pk not in removed])

    def count_created(self, group_pk: int) -> int:
        """The group's ``creation_counter`` before this deployment it makes (and counts)."""
        with self._write() as conn:
            count = conn.execute(select(DGROUPS.c.creation_counter).where(DGROUPS.c.pk == group_pk)).scalar()
            conn.execute(update(DGROUPS).where(DGROUPS.c.pk == group_pk).values(creation_counter=count + 1))
        return count

    def check_idle(self, deployment_pks: Iterable[int], is_gone: Callable[[dict], bool]) -> None:
        """Conflict, naming the first of the deployments that runs an execution, if one does."""
        with self.between_executions(deployment_pks, is_gone):
            return

    def delete_deployment_group(self, group_pk: int) -> None:
        with self._write() as conn:
            conn.execute(delete(DMEMBERS).where(DMEMBERS.c.group_pk == group_pk))
            for target in (XGROUPS.c.success_group_pk, XGROUPS.c.failed_group_pk):
                conn.execute(update(XGROUPS).where(target == group_pk).values({target: None}))
            conn.execute(delete(DGROUPS).where(DGROUPS.c.pk == group_pk))

    # -- execution groups -------------------------------------------------------------------------
    def add_execution_group(self, project_id: str, fields: dict, executions: list[tuple[int, dict]],
                            group_id: str | None = None) -> str:
        """Store the group and its executions (``(deployment pk, parameters)`` each), all ``queued``; its id
        (``group_id``, when its starter chose it)."""
        group_id, now = group_id or str(uuid.uuid4()), utcnow()
        with self._write() as conn:
            group_pk = conn.execute(insert(XGROUPS).values(id=group_id, project_id=project_id, created_at=now,
                                                           **fields)).inserted_primary_key[0]
            for deployment_pk, parameters in executions:
                pk = conn.execute(insert(EXECUTIONS).values(
                    id=str(uuid.uuid4()), project_id=project_id, deployment_pk=deployment_pk,
                    workflow_id=fields["workflow_id"], parameters=parameters, error="", created_at=now,
                    created_by=fields["created_by"], status="queued")).inserted_primary_key[0]
                conn.execute(insert(XMEMBERS).values(group_pk=group_pk, execution_pk=pk))
        return group_id

    def execution_group(self, project_id: str, group_id: str) -> dict:
        """The group's row with ``executions``: (pk, id, status, deployment_pk, owner...) of each, in order."""
        return self._one(XGROUPS, "ExecutionGroup", project_id, group_id, self._with_executions)

    def execution_groups(self, project_id: str) -> list[dict]:
        return self._all(XGROUPS, project_id, self._with_executions)

    def _with_executions(self, conn: Connection, rows: list[dict]) -> list[dict]:
        found: dict[int, list[dict]] = {row["pk"]: [] for row in rows}
        if rows:
            query = (select(XMEMBERS.c.group_pk, EXECUTIONS.c.pk, EXECUTIONS.c.id, EXECUTIONS.c.status,
                            EXECUTIONS.c.deployment_pk, EXECUTIONS.c.owner, EXECUTIONS.c.heartbeat_at)
                     .join(EXECUTIONS, EXECUTIONS.c.pk == XMEMBERS.c.execution_pk)
                     .where(XMEMBERS.c.group_pk.in_(found)).order_by(EXECUTIONS.c.pk))
            for member in self._rows(conn.execute(query)):
                found[member.pop("group_pk")].append(member)
        targets = {pk for row in rows for pk in (row["success_group_pk"], row["failed_group_pk"]) if pk is not None}
        names = dict(conn.execute(select(DGROUPS.c.pk, DGROUPS.c.id).where(DGROUPS.c.pk.in_(targets))).all()) \
            if targets else {}
        return [{**row, "executions": found[row["pk"]], "success_group_id": names.get(row["success_group_pk"]),
                 "failed_group_id": names.get(row["failed_group_pk"])} for row in rows]

    def requeue(self, pks: list[int]) -> None:
        """Failed and cancelled executions of a group waiting again (a group's resume)."""
        if pks:
            with self._write() as conn:
                conn.execute(update(EXECUTIONS).where(EXECUTIONS.c.pk.in_(pks),
                                                      EXECUTIONS.c.status.in_(("failed", "cancelled")))
                             .values(status="queued", owner=None, ended_at=None, error="", cancel_request=None))

    def set_targets(self, group_pk: int, success_pk: int | None, failed_pk: int | None) -> None:
        """Name the group's target deployment groups (None: keep it); the deployments whose execution in
        the group already succeeded (failed) join the success (failure) group at once."""
        with self._write() as conn:
            for target, pk, status in ((XGROUPS.c.success_group_pk, success_pk, "terminated"),
                                       (XGROUPS.c.failed_group_pk, failed_pk, "failed")):
                if pk is None:
                    continue
                conn.execute(update(XGROUPS).where(XGROUPS.c.pk == group_pk).values({target: pk}))
                ended = select(EXECUTIONS.c.deployment_pk).join(XMEMBERS, XMEMBERS.c.execution_pk == EXECUTIONS.c.pk) \
                    .where(XMEMBERS.c.group_pk == group_pk, EXECUTIONS.c.status == status)
                _join(conn, pk, conn.execute(ended).scalars())

    def file_by_outcome(self, execution_pk: int) -> None:
        """The ended execution's deployment joins the target group its group names for how it ended
        (succeeded: the success group; failed: the failure group; cancelled: neither), as Cloudify's."""
        with self._read() as conn:
            found = conn.execute(select(EXECUTIONS.c.status, EXECUTIONS.c.deployment_pk, XGROUPS.c.success_group_pk,
                                        XGROUPS.c.failed_group_pk)
                                 .join(XMEMBERS, XMEMBERS.c.execution_pk == EXECUTIONS.c.pk)
                                 .join(XGROUPS, XGROUPS.c.pk == XMEMBERS.c.group_pk)
                                 .where(EXECUTIONS.c.pk == execution_pk)).all()
        targets = [(success if status == "terminated" else failed, deployment_pk)
                   for status, deployment_pk, success, failed in found if status in ("terminated", "failed")]
        if any(pk is not None for pk, _ in targets):
            with self._write() as conn:
                for pk, deployment_pk in targets:
                    if pk is not None:
                        _join(conn, pk, [deployment_pk])

    def set_concurrency(self, group_pk: int, concurrency: int) -> None:
        with self._write() as conn:
            conn.execute(update(XGROUPS).where(XGROUPS.c.pk == group_pk).values(concurrency=concurrency))

    def groups_to_wake(self, execution_pk: int, deployment_pk: int) -> list[int]:
        """The execution groups an ended execution may let start one more: its own, and those holding a
        queued execution of its deployment (which waited for the deployment to be free)."""
        waiting = (select(XMEMBERS.c.group_pk).join(EXECUTIONS, EXECUTIONS.c.pk == XMEMBERS.c.execution_pk)
                   .where(EXECUTIONS.c.deployment_pk == deployment_pk, EXECUTIONS.c.status == "queued"))
        own = select(XMEMBERS.c.group_pk).where(XMEMBERS.c.execution_pk == execution_pk)
        with self._read() as conn:
            return sorted(set(conn.execute(own).scalars()) | set(conn.execute(waiting).scalars()))

    def take_next(self, group_pk: int, owner: str, is_gone: Callable[[dict], bool]) -> list[dict]:
        """The group's oldest queued executions, now started and owned by ``owner``: as many as its
        concurrency leaves room for beside those running, each only once its deployment runs nothing else
        (unless the group was started with ``force``)."""
        with self._write() as conn:
            # the group's row locked (PostgreSQL; SQLite's writers go one at a time): two ends of its
            # executions at once never both see the same free room
            group = conn.execute(select(XGROUPS.c.concurrency, XGROUPS.c.force)
                                 .where(XGROUPS.c.pk == group_pk).with_for_update()).first()
            if group is None:
                return []
            members = self._rows(conn.execute(self._query().join(XMEMBERS, XMEMBERS.c.execution_pk == EXECUTIONS.c.pk)
                                              .where(XMEMBERS.c.group_pk == group_pk,
                                                     EXECUTIONS.c.status.in_((*ACTIVE, "queued")))
                                              .order_by(EXECUTIONS.c.pk)))
            running = 0
            for row in members:
                if row["status"] in ACTIVE:
                    if is_gone(row):
                        self._interrupt(conn, row)
                    else:
                        running += 1
            taken, now = [], utcnow()
            if running < group.concurrency:
                for pk in sorted({row["deployment_pk"] for row in members if row["status"] == "queued"}):
                    self.lock_deployment(conn, pk)  # in one order, as ``between_executions``: no two writers wait in a cycle
            for row in members:
                if row["status"] != "queued" or running + len(taken) >= group.concurrency:
                    continue
                if not group.force and self._running(conn, row["deployment_pk"], is_gone) is not None:
                    continue  # its deployment's execution's end wakes the group again
                if conn.execute(update(EXECUTIONS).where(EXECUTIONS.c.pk == row["pk"], EXECUTIONS.c.status == "queued")
                                .values(status="started", owner=owner, heartbeat_at=now, started_at=now)).rowcount:
                    taken.append(row["pk"])  # (not cancelled since it was read)
            return self._rows(conn.execute(self._query().where(EXECUTIONS.c.pk.in_(taken))
                                           .order_by(EXECUTIONS.c.pk))) if taken else []


def _join(conn: Connection, group_pk: int, deployment_pks: Iterable[int]) -> None:
    """The deployments join the deployment group (those it holds already stay as they are)."""
    held = set(conn.execute(select(DMEMBERS.c.deployment_pk).where(DMEMBERS.c.group_pk == group_pk)).scalars())
    new = [pk for pk in dict.fromkeys(deployment_pks) if pk not in held]
    if new:
        conn.execute(insert(DMEMBERS), [{"group_pk": group_pk, "deployment_pk": pk} for pk in new])
