"""Deployment modifications (``cfy deployments modifications``): one row per change of a deployment's
instances, as Cloudify's manager keeps them.

A row is ``started`` with the instance rows it adds (and the relationships it rewires) in one transaction,
which also refuses a second started modification of the deployment (its row locked as an execution's start
locks it); ``finish`` and ``rollback`` end it with their own changes of the rows, once (a conditional update
on ``status``).  The changes are ``execution_records.modify``'s, the ones a scale made before rows were kept.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

from sqlalchemy import JSON, Column, Connection, ForeignKey, Index, Integer, String, Table, insert, select, update

from stoker.errors import StokerError
from stoker.store.execution_records import INSTANCES, ExecutionRecords, modify
from stoker.store.models import Deployment, UTCDateTime, metadata, utcnow
from stoker.store.records import Records

STARTED, FINISHED, ROLLEDBACK = "started", "finished", "rolledback"

MODIFICATIONS = Table(
    "deployment_modification", metadata,
    Column("pk", Integer, primary_key=True, autoincrement=True),
    Column("id", String(36), nullable=False),
    Column("project_id", String(255), nullable=False),
    Column("deployment_pk", ForeignKey("deployment.pk", ondelete="CASCADE"), nullable=False, index=True),
    Column("status", String(16), nullable=False),
    #: what was asked: ``{node or group: {"instances": N, ...}}``
    Column("modified_nodes", JSON, nullable=False),
    #: Cloudify's ``added_and_related``, ``removed_and_related``, ``before_modification`` (``before_rollback``)
    Column("node_instances", JSON, nullable=False),
    Column("context", JSON, nullable=False),
    #: Stoker's own: the rows' changes at its finish and at its rollback (not shown)
    Column("changes", JSON, nullable=False),
    Column("created_at", UTCDateTime, nullable=False, default=utcnow),
    Column("ended_at", UTCDateTime),
    #: the user who asked for it: a scale's starter, or the caller of ``POST /deployment-modifications``
    Column("created_by", String(255), nullable=False, default="admin", server_default="admin"),
    Index("ix_deployment_modification_project_id_id", "project_id", "id", unique=True),
)

DEPLOYMENTS: Table = Deployment.__table__  # type: ignore[assignment]


class ModificationRefused(StokerError):
    """Cloudify refuses it with ``error_code`` (400)."""

    def __init__(self, message: str, error_code: str):
        super().__init__(message)
        self.error_code = error_code


class DeploymentModificationRecords(Records):
    """The rows of every project, each read with its deployment's id."""

    @staticmethod
    def _select(light: bool) -> Any:
        """``light``: without ``node_instances`` (every instance of the deployment, twice: costly to read)."""
        columns = [c for c in MODIFICATIONS.c if not (light and c.name == "node_instances")]
        return select(*columns, DEPLOYMENTS.c.id.label("deployment_id")).join(
            DEPLOYMENTS, DEPLOYMENTS.c.pk == MODIFICATIONS.c.deployment_pk)

    def start(self, deployment_pk: int,
              make: Callable[[Callable[[Iterable[str] | None], list[dict]]], tuple[dict, dict]]) -> None:
        """Store the started modification ``make(read)`` gives (its row, and ``modify``'s arguments of what it
        changes now; ``read(ids)``: the deployment's instance rows as they are, in the same transaction), and
        make its changes; refused while the deployment has a started one."""
        with self._write() as conn:
            ExecutionRecords.lock_deployment(conn, deployment_pk)
            started = conn.execute(select(MODIFICATIONS.c.id).where(
                MODIFICATIONS.c.deployment_pk == deployment_pk, MODIFICATIONS.c.status == STARTED)).scalars().all()
            if started:
                raise ModificationRefused(
                    "Cannot start deployment modification while there are existing started deployment "
                    f"modifications. Currently started deployment modifications: {started}",
                    "existing_started_deployment_modification_error")
            row, changes = make(lambda ids: instances(conn, deployment_pk, ids))
            conn.execute(insert(MODIFICATIONS).values(**row, deployment_pk=deployment_pk, status=STARTED))
            modify(conn, deployment_pk, **changes)

    def instances(self, deployment_pk: int, instance_ids: Iterable[str] | None) -> list[dict]:
        with self._read() as conn:
            return instances(conn, deployment_pk, instance_ids)

    def end(self, found: dict, status: str, changes: dict, node_instances: dict | None = None) -> None:
        """End the started modification ``found`` (a row read) as ``status``, making ``changes``; refused
        when it ended meanwhile."""
        verb = "finish" if status == FINISHED else "rollback"
        values = {"status": status, "ended_at": utcnow()}
        if node_instances is not None:
            values["node_instances"] = node_instances
        with self._write() as conn:
            ExecutionRecords.lock_deployment(conn, found["deployment_pk"])
            ended = conn.execute(update(MODIFICATIONS).where(MODIFICATIONS.c.pk == found["pk"],
                                                             MODIFICATIONS.c.status == STARTED).values(**values))
            if not ended.rowcount:
                now = conn.execute(select(MODIFICATIONS.c.status).where(MODIFICATIONS.c.pk == found["pk"])).scalar()
                raise already_ended(verb, found["id"], now)
            modify(conn, found["deployment_pk"], **changes)

    def list(self, project_ids: list[str], light: bool = False, **equal: Any) -> list[dict]:
        """Oldest first; ``equal``: columns of the row (``id``) or ``deployment_id``; ``light``: see ``_select``."""
        c = MODIFICATIONS.c
        where = [DEPLOYMENTS.c.id == v if k == "deployment_id" else c[k] == v for k, v in equal.items()]
        with self._read() as conn:
            return self._rows(conn.execute(self._select(light).where(c.project_id.in_(project_ids), *where)
                                           .order_by(c.created_at, c.pk)))


def instances(conn: Connection, deployment_pk: int, instance_ids: Iterable[str] | None) -> list[dict]:
    """The deployment's instance rows of ``instance_ids`` (None: all of them), in creation order."""
    where = [INSTANCES.c.deployment_pk == deployment_pk]
    if instance_ids is not None:
        ids = sorted(set(instance_ids))
        if not ids:
            return []
        where.append(INSTANCES.c.id.in_(ids))
    return Records._rows(conn.execute(select(INSTANCES).where(*where).order_by(INSTANCES.c.pk)))


def already_ended(verb: str, modification_id: str, status: str) -> ModificationRefused:
    return ModificationRefused(f"Cannot {verb} deployment modification: {modification_id}. It is already "
                               f"in {status} status.",
                               "deployment_modification_already_ended_error")
