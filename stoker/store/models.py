"""The tables Stoker keeps its state in.

Models are flat (foreign keys, no relationships): the repository hands out
detached rows and all writes go through it, so lazy loading never happens.
Any change here needs a new migration in ``migrations/versions/``; the test
suite compares the migrated schema with this metadata.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from sqlalchemy import false, true, JSON, Boolean, DateTime, ForeignKey, Index, Integer, MetaData, String, Text, text
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeDecorator


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


class UTCDateTime(TypeDecorator[datetime]):
    """Stored as naive UTC (same on SQLite and PostgreSQL), read back as aware UTC."""

    impl = DateTime
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Any) -> datetime | None:
        if value is None or value.tzinfo is None:
            return value
        return value.astimezone(timezone.utc).replace(tzinfo=None)

    def process_result_value(self, value: datetime | None, dialect: Any) -> datetime | None:
        return value.replace(tzinfo=timezone.utc) if value is not None else None


# Named constraints, so later SQLite batch migrations can find them again.
NAMING = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


class RawTemplate(Base):
    """A template as submitted (after loading), kept so a stack can be re-read or rolled back."""

    __tablename__ = "raw_template"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    content: Mapped[dict] = mapped_column(JSON)
    files: Mapped[dict] = mapped_column(JSON, default=dict)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class Stack(Base):
    """One stack (top-level or nested); soft-deleted so its events stay readable."""

    __tablename__ = "stack"
    __table_args__ = (
        # Names are unique among live stacks only: a deleted name may be reused.
        # PostgreSQL's WHERE is added by ``partial_indexes_for`` (see there why).
        Index("ix_stack_project_id_name_live", "project_id", "name", unique=True,
              sqlite_where=text("deleted_at IS NULL"), info={"where": "deleted_at IS NULL"}),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    name: Mapped[str] = mapped_column(String(255))
    project_id: Mapped[str] = mapped_column(String(255))
    parent_id: Mapped[str | None] = mapped_column(ForeignKey("stack.id"), index=True)
    owner_resource: Mapped[str | None] = mapped_column(String(255))
    action: Mapped[str] = mapped_column(String(32))
    status: Mapped[str] = mapped_column(String(32))
    status_reason: Mapped[str] = mapped_column(Text, default="")
    template_id: Mapped[int] = mapped_column(ForeignKey("raw_template.id"))
    previous_template_id: Mapped[int | None] = mapped_column(ForeignKey("raw_template.id"))
    environment: Mapped[dict] = mapped_column(JSON, default=dict)
    files: Mapped[dict] = mapped_column(JSON, default=dict)
    parameters: Mapped[dict] = mapped_column(JSON, default=dict)
    tags: Mapped[list] = mapped_column(JSON, default=list)
    timeout_mins: Mapped[int | None] = mapped_column(Integer)
    disable_rollback: Mapped[bool] = mapped_column(Boolean, default=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    # When the last UPDATE started (None until then), as `stack show` prints it.
    updated_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    deleted_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    current_traversal: Mapped[str | None] = mapped_column(String(36))
    lock_owner: Mapped[str | None] = mapped_column(String(255))
    lock_action: Mapped[str | None] = mapped_column(String(32))
    lock_time: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # Set by `stack cancel` from any process; the action's watcher stops on it.
    cancel_requested: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    # False when the cancel asked not to roll back (Heat's cancel_without_rollback).
    cancel_rollback: Mapped[bool] = mapped_column(Boolean, default=True, server_default=true())


class Resource(Base):
    """One resource of a stack. Old and new rows coexist while a resource is replaced."""

    __tablename__ = "resource"
    __table_args__ = (Index("ix_resource_stack_id_name", "stack_id", "name"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    stack_id: Mapped[str] = mapped_column(ForeignKey("stack.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(255))
    type: Mapped[str] = mapped_column(String(255))
    # JSON columns default in the database: a bulk insert of 10,000 rows then
    # serialises only the values it gives.
    action: Mapped[str] = mapped_column(String(32), default="INIT")
    status: Mapped[str] = mapped_column(String(32), default="COMPLETE")
    status_reason: Mapped[str] = mapped_column(Text, default="")
    physical_resource_id: Mapped[str | None] = mapped_column(String(255))
    properties_data: Mapped[dict] = mapped_column(JSON, server_default=text("'{}'"))
    attributes_data: Mapped[dict] = mapped_column(JSON, server_default=text("'{}'"))
    rsrc_metadata: Mapped[dict] = mapped_column(JSON, server_default=text("'{}'"))
    data: Mapped[dict] = mapped_column(JSON, server_default=text("'{}'"))
    replaced_by: Mapped[int | None] = mapped_column(Integer)
    replaces: Mapped[int | None] = mapped_column(Integer)
    needed_by: Mapped[list] = mapped_column(JSON, server_default=text("'[]'"))
    requires: Mapped[list] = mapped_column(JSON, server_default=text("'[]'"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    engine_id: Mapped[str | None] = mapped_column(String(255))
    # Bumped on every write; a writer that read an older value lost a race.
    atomic_key: Mapped[int] = mapped_column(Integer, default=0)


class Event(Base):
    """One state change of a stack or resource; ``id`` gives the order."""

    __tablename__ = "event"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    uuid: Mapped[str] = mapped_column(String(36), unique=True)
    stack_id: Mapped[str] = mapped_column(ForeignKey("stack.id", ondelete="CASCADE"), index=True)
    resource_name: Mapped[str | None] = mapped_column(String(255))
    physical_resource_id: Mapped[str | None] = mapped_column(String(255))
    resource_type: Mapped[str | None] = mapped_column(String(255))
    action: Mapped[str] = mapped_column(String(32))
    status: Mapped[str] = mapped_column(String(32))
    reason: Mapped[str] = mapped_column(Text, default="")
    properties: Mapped[dict | None] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


# -- blueprints and deployments (the blueprint DSL) --------------------------------------------------
# Surrogate integer keys; the ids users see (``web_x7k2pq``) are unique per project or deployment.
# JSON values that may hold a hidden input or a secret are sealed (``stoker.secretbox.seal``).


class Blueprint(Base):
    """An uploaded blueprint: its parsed plan and where it came from."""

    __tablename__ = "blueprint"
    __table_args__ = (Index("ix_blueprint_project_id_id", "project_id", "id", unique=True),)

    pk: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    id: Mapped[str] = mapped_column(String(255))
    project_id: Mapped[str] = mapped_column(String(255))
    description: Mapped[str | None] = mapped_column(Text)
    main_file_name: Mapped[str] = mapped_column(String(255))
    #: the folder the blueprint was uploaded from (scripts are read from it)
    source_dir: Mapped[str | None] = mapped_column(Text)
    plan: Mapped[dict] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class Deployment(Base):
    """A blueprint with inputs applied; owned by a project like a stack."""

    __tablename__ = "deployment"
    __table_args__ = (Index("ix_deployment_project_id_id", "project_id", "id", unique=True),)

    pk: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    id: Mapped[str] = mapped_column(String(255))
    project_id: Mapped[str] = mapped_column(String(255))
    blueprint_pk: Mapped[int] = mapped_column(ForeignKey("blueprint.pk"), index=True)
    display_name: Mapped[str] = mapped_column(String(255))
    inputs: Mapped[dict] = mapped_column(JSON)
    #: the deployment plan less its nodes and instances: outputs, capabilities, groups, policies...
    plan: Mapped[dict] = mapped_column(JSON)
    runtime_only_evaluation: Mapped[bool] = mapped_column(Boolean, default=False)
    created_by: Mapped[str] = mapped_column(String(255), default="admin")
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class Node(Base):
    """One node template of a deployment, as the functions and workflows read it."""

    __tablename__ = "node"
    __table_args__ = (Index("ix_node_deployment_pk_id", "deployment_pk", "id", unique=True),)

    pk: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    deployment_pk: Mapped[int] = mapped_column(ForeignKey("deployment.pk", ondelete="CASCADE"))
    id: Mapped[str] = mapped_column(String(255))
    type: Mapped[str] = mapped_column(String(255))
    #: the node's plan: type_hierarchy, properties, operations, relationships, capabilities
    definition: Mapped[dict] = mapped_column(JSON)
    number_of_instances: Mapped[int] = mapped_column(Integer)
    host_id: Mapped[str | None] = mapped_column(String(255))


class NodeInstance(Base):
    """One instance of a node: its state and runtime properties (``version`` guards concurrent writes)."""

    __tablename__ = "node_instance"
    __table_args__ = (Index("ix_node_instance_deployment_pk_id", "deployment_pk", "id", unique=True),
                      Index("ix_node_instance_deployment_pk_node_id", "deployment_pk", "node_id"))

    pk: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    deployment_pk: Mapped[int] = mapped_column(ForeignKey("deployment.pk", ondelete="CASCADE"))
    id: Mapped[str] = mapped_column(String(255))
    node_id: Mapped[str] = mapped_column(String(255))
    index: Mapped[int] = mapped_column(Integer)
    state: Mapped[str] = mapped_column(String(32), default="uninitialized")
    runtime_properties: Mapped[dict] = mapped_column(JSON, server_default=text("'{}'"))
    version: Mapped[int] = mapped_column(Integer, default=1)
    host_id: Mapped[str | None] = mapped_column(String(255))
    scaling_groups: Mapped[list] = mapped_column(JSON, server_default=text("'[]'"))
    relationships: Mapped[list] = mapped_column(JSON, server_default=text("'[]'"))


class DeploymentLabel(Base):
    """One ``key: value`` label of a deployment (a key may have several values)."""

    __tablename__ = "deployment_label"
    __table_args__ = (Index("ix_deployment_label_deployment_pk_key_value", "deployment_pk", "key", "value",
                            unique=True),)

    pk: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    deployment_pk: Mapped[int] = mapped_column(ForeignKey("deployment.pk", ondelete="CASCADE"))
    key: Mapped[str] = mapped_column(String(255))
    value: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class Secret(Base):
    """A named secret of a project; ``value`` is always encrypted (``stoker.secretbox``)."""

    __tablename__ = "secret"
    __table_args__ = (Index("ix_secret_project_id_key", "project_id", "key", unique=True),)

    pk: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    project_id: Mapped[str] = mapped_column(String(255))
    key: Mapped[str] = mapped_column(String(255))
    value: Mapped[str] = mapped_column(Text)
    hidden: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


# -- executions of workflows on deployments -----------------------------------------------------------


#: statuses of an execution that has not ended
ACTIVE_EXECUTION = ("pending", "started", "cancelling", "force_cancelling")


class Execution(Base):
    """One run of a workflow on a deployment: Cloudify's statuses, its parameters and error.

    ``owner`` is the engine id (host:pid:uuid) of the process running it: a
    dead owner means the execution was interrupted.  ``resume_data`` keeps
    what rebuilds the same graph on resume.
    """

    __tablename__ = "execution"
    __table_args__ = (Index("ix_execution_project_id_id", "project_id", "id", unique=True),)

    pk: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    id: Mapped[str] = mapped_column(String(36))
    project_id: Mapped[str] = mapped_column(String(255))
    deployment_pk: Mapped[int] = mapped_column(ForeignKey("deployment.pk", ondelete="CASCADE"), index=True)
    workflow_id: Mapped[str] = mapped_column(String(255))
    status: Mapped[str] = mapped_column(String(32), default="pending")
    parameters: Mapped[dict] = mapped_column(JSON, default=dict)
    error: Mapped[str] = mapped_column(Text, default="")
    owner: Mapped[str | None] = mapped_column(String(255))
    heartbeat_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    #: None, "graceful" or "force": asked by ``stoker execution cancel``
    cancel_request: Mapped[str | None] = mapped_column(String(16))
    resume_data: Mapped[dict | None] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    ended_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class ExecutionEvent(Base):
    """An event (``cloudify_event``) or a log line (``cloudify_log``) of an execution."""

    __tablename__ = "execution_event"

    pk: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    execution_pk: Mapped[int] = mapped_column(ForeignKey("execution.pk", ondelete="CASCADE"), index=True)
    timestamp: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    type: Mapped[str] = mapped_column(String(16))
    event_type: Mapped[str | None] = mapped_column(String(64))
    level: Mapped[str | None] = mapped_column(String(16))
    node_id: Mapped[str | None] = mapped_column(String(255))
    node_instance_id: Mapped[str | None] = mapped_column(String(255))
    operation: Mapped[str | None] = mapped_column(String(255))
    message: Mapped[str] = mapped_column(Text, default="")
    context: Mapped[dict | None] = mapped_column(JSON)


# -- stack actions spread over workers (stoker/dispatch/) ----------------------------------------------


class DispatchTraversal(Base):
    """One stack action spread over workers (``stoker/dispatch/``): what every worker decides from.

    The worker that sees no node left open after its own node's end moves
    ``status`` on and ends the action (``finished`` is no longer kept: one
    counter row written by every worker queued them all behind its lock).  ``stopping`` holds why the action
    stops early (a failure, a timeout, a cancel) while resources still run.
    """

    __tablename__ = "dispatch_traversal"

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    # the stack acted on; None for an execution's traversal (``execution_pk``)
    stack_id: Mapped[str | None] = mapped_column(ForeignKey("stack.id", ondelete="CASCADE"), index=True)
    action: Mapped[str] = mapped_column(String(32))
    status: Mapped[str] = mapped_column(String(32), default="IN_PROGRESS")
    total: Mapped[int] = mapped_column(Integer)
    finished: Mapped[int] = mapped_column(Integer, default=0)
    stopping: Mapped[str | None] = mapped_column(Text)
    # resources still IN_PROGRESS are stopped too (a timeout or a cancel), not left to finish
    interrupt: Mapped[bool] = mapped_column(Boolean, default=False)
    deadline: Mapped[datetime | None] = mapped_column(UTCDateTime)
    disable_rollback: Mapped[bool] = mapped_column(Boolean, default=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    # what the action was given beyond the stored stack: an update's inputs before it (what its
    # rollback returns to), an adopt's adopted resources
    given: Mapped[dict | None] = mapped_column(JSON)
    # a workflow execution's steps: its nodes are the indexes of the steps' sorted keys
    execution_pk: Mapped[int | None] = mapped_column(ForeignKey("execution.pk", ondelete="CASCADE"))


class DispatchNode(Base):
    """One resource of a traversal: how many of its requirements are still to finish."""

    __tablename__ = "dispatch_node"
    # the nodes not done yet, found without walking those done (the end of a traversal is their absence)
    # (PostgreSQL's WHERE is added by ``partial_indexes_for``)
    __table_args__ = (Index("ix_dispatch_node_open", "traversal_id", sqlite_where=text("state <> 'DONE'"),
                            info={"where": "state <> 'DONE'"}),)

    traversal_id: Mapped[str] = mapped_column(ForeignKey("dispatch_traversal.id", ondelete="CASCADE"),
                                              primary_key=True)
    resource_id: Mapped[int] = mapped_column(Integer, primary_key=True)
    waiting: Mapped[int] = mapped_column(Integer)
    dependents: Mapped[list] = mapped_column(JSON)
    # PENDING (not started), RUNNING (a worker took it), DONE
    state: Mapped[str] = mapped_column(String(16), default="PENDING")
    # which task may act next: bumped at every park, so a task of an older step is stale
    step: Mapped[int] = mapped_column(Integer, default=0)


def partial_indexes_for(dialect: str) -> None:
    """Give the partial indexes their WHERE in ``dialect`` too (any dialect but SQLite).

    Declaring ``postgresql_where`` with the models would import SQLAlchemy's
    whole PostgreSQL dialect (~50 ms) into every command on SQLite; a
    PostgreSQL engine has loaded it anyway when this runs.
    """
    if dialect == "sqlite":
        return
    for table in Base.metadata.tables.values():
        for index in table.indexes:
            where = index.info.get("where")
            if where is not None:
                index.dialect_kwargs[f"{dialect}_where"] = text(where)

