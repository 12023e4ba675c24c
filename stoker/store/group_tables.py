"""The tables of deployment groups and execution groups (Cloudify's ``/deployment-groups`` and
``/execution-groups``), apart from their records so that ``execution_records`` can read the membership
(a queued execution of a group waits for its group, not for its deployment's queue)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import JSON, Boolean, Column, ForeignKey, Index, Integer, String, Table, Text, select

from stoker.store.models import UTCDateTime, metadata, utcnow


def _group(name: str, id_length: int, *columns: Column) -> Table:
    """A tenant's named group: its own ``columns`` between the id and who made it when."""
    return Table(name, metadata,
                 Column("pk", Integer, primary_key=True, autoincrement=True),
                 Column("id", String(id_length), nullable=False),
                 Column("project_id", String(255), nullable=False),
                 *columns,
                 Column("created_by", String(255), nullable=False),
                 Column("created_at", UTCDateTime, nullable=False, default=utcnow),
                 Index(f"ix_{name}_project_id_id", "project_id", "id", unique=True))


DEPLOYMENT_GROUPS = _group(
    "deployment_group", 255,
    Column("description", Text),
    #: the blueprint and inputs of the deployments the group makes (``new_deployments``)
    Column("default_blueprint_id", String(255)),
    Column("default_inputs", JSON, nullable=False, default=dict),
    #: ``[{"key": k, "value": v}]``: given to every deployment the group holds
    Column("labels", JSON, nullable=False, default=list),
    #: how many deployments the group made (``{count}`` of an id template)
    Column("creation_counter", Integer, nullable=False, default=0),
)


def _members(group: str, member: str) -> Table:
    """``<group>_member``: which ``<member>`` rows a group holds (both sides' deletes delete the link)."""
    return Table(f"{group}_member", metadata,
                 Column("group_pk", ForeignKey(f"{group}.pk", ondelete="CASCADE"), primary_key=True),
                 Column(f"{member}_pk", ForeignKey(f"{member}.pk", ondelete="CASCADE"), primary_key=True, index=True))


DEPLOYMENT_GROUP_MEMBERS = _members("deployment_group", "deployment")

EXECUTION_GROUPS = _group(
    "execution_group", 36,
    #: by id: the deployment group may be deleted while its execution groups are listed
    Column("deployment_group_id", String(255)),
    Column("workflow_id", String(255), nullable=False),
    #: at most this many of its executions run at once (0: none starts, the group paused)
    Column("concurrency", Integer, nullable=False, default=5),
    #: start an execution even while its deployment runs another
    Column("force", Boolean, nullable=False, default=False),
    #: what the group's start said of the deployments it skipped (no such workflow), as Cloudify's logs
    Column("logs", JSON, nullable=False, default=list),
    #: the deployment groups its deployments join when their execution succeeds / fails (by pk: a deleted
    #: deployment group clears them)
    Column("success_group_pk", Integer),
    Column("failed_group_pk", Integer),
)

EXECUTION_GROUP_MEMBERS = _members("execution_group", "execution")


def in_group(execution_pk: Any) -> Any:
    """A condition: the execution belongs to an execution group (its group starts it, not its
    deployment's queue)."""
    return select(EXECUTION_GROUP_MEMBERS.c.execution_pk).where(
        EXECUTION_GROUP_MEMBERS.c.execution_pk == execution_pk).exists()


def group_of(execution_pk: Any) -> Any:
    """A column: the id of the execution group the execution belongs to (None: none)."""
    return (select(EXECUTION_GROUPS.c.id).join(EXECUTION_GROUP_MEMBERS,
                                               EXECUTION_GROUP_MEMBERS.c.group_pk == EXECUTION_GROUPS.c.pk)
            .where(EXECUTION_GROUP_MEMBERS.c.execution_pk == execution_pk).scalar_subquery()
            .label("execution_group_id"))
