"""The tables Stoker keeps its state in.

SQLAlchemy Core tables, no ORM: importing ``sqlalchemy.orm`` and mapping the
classes cost every command ~0.15 s.  Each table has a record class: its
attributes are the table's columns in statements (``Stack.id == x``), and
the store hands out its rows as instances (plain attributes, detached).
Any change here needs a new migration in ``migrations/versions/``; the test
suite compares the migrated schema with this metadata.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from sqlalchemy import (JSON, Boolean, Column, DateTime, ForeignKey, Index, Integer, LargeBinary, MetaData, String, Table,
                        Text, false, text, true)
from sqlalchemy.types import TypeDecorator


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


def iso_time(value: datetime | None) -> str | None:
    """A stored time as Cloudify's API shows it (``2026-11-28T14:03:16.123Z``)."""
    return value.replace(tzinfo=None).isoformat(timespec="milliseconds") + "Z" if value else None


def naive_utc(value: datetime | None) -> datetime | None:
    """As a time is stored: naive UTC."""
    if value is None or value.tzinfo is None:
        return value
    return value.astimezone(timezone.utc).replace(tzinfo=None)


class UTCDateTime(TypeDecorator[datetime]):
    """Stored as naive UTC (same on SQLite and PostgreSQL), read back as aware UTC."""

    impl = DateTime
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Any) -> datetime | None:
        return naive_utc(value)

    def process_result_value(self, value: datetime | None, dialect: Any) -> datetime | None:
        return value.replace(tzinfo=timezone.utc) if value is not None else None


# Named constraints, so later SQLite batch migrations can find them again.
NAMING = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


metadata = MetaData(naming_convention=NAMING)


class _Columns(type):
    """A record class's missing attributes are its table's columns: ``Stack.id == x``."""

    def __getattr__(cls, name: str) -> Any:
        try:
            return cls.__dict__["__table__"].c[name]
        except KeyError:
            raise AttributeError(f"{cls.__name__} has no column {name!r}") from None


class Record(metaclass=_Columns):
    """One row of a table, detached: plain attributes named as the columns."""

    __table__: Table

    def __init__(self, **values: Any):
        self.__dict__.update(values)

    @classmethod
    def from_row(cls, row: Any) -> Any:
        """A record from a Core result row."""
        record = cls.__new__(cls)
        record.__dict__.update(row._mapping)
        return record

    @classmethod
    def from_rows(cls, result: Any) -> list:
        """Records from every row of a Core result: the column names are read once and
        the rows fetched at once (a third cheaper than ``from_row`` each, at 1,000 rows)."""
        keys = list(result.keys())
        records = []
        for values in result.all():
            record = cls.__new__(cls)
            record.__dict__.update(zip(keys, values))
            records.append(record)
        return records

    def __repr__(self) -> str:
        key = self.__dict__.get("id", self.__dict__.get("pk"))
        return f"<{type(self).__name__} {key}>"


class RawTemplate(Record):
    """A template as submitted (after loading), kept so a stack can be re-read or rolled back."""

    __table__ = Table(
        "raw_template", metadata,
        Column("id", Integer, primary_key=True, autoincrement=True),
        Column("content", JSON, nullable=False),
        Column("files", JSON, default=dict, nullable=False),
        Column("created_at", UTCDateTime, default=utcnow, nullable=False),
    )


class Stack(Record):
    """One stack (top-level or nested); soft-deleted so its events stay readable."""

    __table__ = Table(
        "stack", metadata,
        Column("id", String(36), primary_key=True),
        Column("name", String(255), nullable=False),
        Column("project_id", String(255), nullable=False),
        Column("parent_id", ForeignKey("stack.id"), index=True),
        Column("owner_resource", String(255)),
        Column("action", String(32), nullable=False),
        Column("status", String(32), nullable=False),
        Column("status_reason", Text, default="", nullable=False),
        Column("template_id", ForeignKey("raw_template.id"), nullable=False),
        Column("previous_template_id", ForeignKey("raw_template.id")),
        Column("environment", JSON, default=dict, nullable=False),
        Column("files", JSON, default=dict, nullable=False),
        Column("parameters", JSON, default=dict, nullable=False),
        Column("tags", JSON, default=list, nullable=False),
        Column("timeout_mins", Integer),
        Column("disable_rollback", Boolean, default=True, nullable=False),
        Column("created_at", UTCDateTime, default=utcnow, nullable=False),
        # When the last UPDATE started (None until then), as `stack show` prints it.
        Column("updated_at", UTCDateTime),
        Column("deleted_at", UTCDateTime),
        Column("current_traversal", String(36)),
        Column("lock_owner", String(255)),
        Column("lock_action", String(32)),
        Column("lock_time", UTCDateTime),
        # Set by `stack cancel` from any process; the action's watcher stops on it.
        Column("cancel_requested", Boolean, default=False, server_default=false(), nullable=False),
        # False when the cancel asked not to roll back (Heat's cancel_without_rollback).
        Column("cancel_rollback", Boolean, default=True, server_default=true(), nullable=False),
        # Names are unique among live stacks only: a deleted name may be reused.
        # PostgreSQL's WHERE is added by ``partial_indexes_for`` (see there why).
        Index("ix_stack_project_id_name_live", "project_id", "name", unique=True,
              sqlite_where=text("deleted_at IS NULL"), info={"where": "deleted_at IS NULL"}),
    )

    def inputs(self) -> dict:
        """What an update replaces (its template, parameters, environment, files): what its
        rollback goes back to."""
        return {"template_id": self.template_id, "parameters": self.parameters,
                "environment": self.environment, "files": self.files}


class EngineProcess(Record):
    """A server process acting on stacks, beating while it lives (Heat's engine service record):
    a stack lock whose holder's process stopped beating is taken over at once."""

    __table__ = Table(
        "engine_process", metadata,
        Column("id", String(255), primary_key=True),  # host:pid, the start of its engine ids
        Column("started_at", UTCDateTime, default=utcnow, nullable=False),
        Column("heartbeat_at", UTCDateTime, default=utcnow, nullable=False),
    )


class Resource(Record):
    """One resource of a stack. Old and new rows coexist while a resource is replaced."""

    __table__ = Table(
        "resource", metadata,
        Column("id", Integer, primary_key=True, autoincrement=True),
        Column("stack_id", ForeignKey("stack.id", ondelete="CASCADE"), index=True, nullable=False),
        Column("name", String(255), nullable=False),
        Column("type", String(255), nullable=False),
        # JSON columns default in the database: a bulk insert of 10,000 rows then
        # serialises only the values it gives.
        Column("action", String(32), default="INIT", nullable=False),
        Column("status", String(32), default="COMPLETE", nullable=False),
        Column("status_reason", Text, default="", nullable=False),
        Column("physical_resource_id", String(255)),
        Column("properties_data", JSON, server_default=text("'{}'"), nullable=False),
        Column("attributes_data", JSON, server_default=text("'{}'"), nullable=False),
        Column("rsrc_metadata", JSON, server_default=text("'{}'"), nullable=False),
        Column("data", JSON, server_default=text("'{}'"), nullable=False),
        Column("replaced_by", Integer),
        Column("replaces", Integer),
        Column("needed_by", JSON, server_default=text("'[]'"), nullable=False),
        Column("requires", JSON, server_default=text("'[]'"), nullable=False),
        Column("created_at", UTCDateTime, default=utcnow, nullable=False),
        Column("updated_at", UTCDateTime, default=utcnow, nullable=False),
        Column("engine_id", String(255)),
        # Bumped on every write; a writer that read an older value lost a race.
        Column("atomic_key", Integer, default=0, nullable=False),
        Index("ix_resource_stack_id_name", "stack_id", "name"),
    )


class Event(Record):
    """One state change of a stack or resource; ``id`` gives the order."""

    __table__ = Table(
        "event", metadata,
        Column("id", Integer, primary_key=True, autoincrement=True),
        Column("uuid", String(36), unique=True, nullable=False),
        Column("stack_id", ForeignKey("stack.id", ondelete="CASCADE"), index=True, nullable=False),
        Column("resource_name", String(255)),
        Column("physical_resource_id", String(255)),
        Column("resource_type", String(255)),
        Column("action", String(32), nullable=False),
        Column("status", String(32), nullable=False),
        Column("reason", Text, default="", nullable=False),
        Column("properties", JSON),
        Column("created_at", UTCDateTime, default=utcnow, nullable=False),
    )


# -- blueprints and deployments (the blueprint DSL) --------------------------------------------------
# Surrogate integer keys; the ids users see (``web_x7k2pq``) are unique per project or deployment.
# JSON values that may hold a hidden input or a secret are sealed (``stoker.secretbox.seal``).


class Blueprint(Record):
    """An uploaded blueprint: its parsed plan and where it came from."""

    __table__ = Table(
        "blueprint", metadata,
        Column("pk", Integer, primary_key=True, autoincrement=True),
        Column("id", String(255), nullable=False),
        Column("project_id", String(255), nullable=False),
        Column("description", Text),
        Column("main_file_name", String(255), nullable=False),
        #: the folder the blueprint was uploaded from (read when no archive is kept: older rows)
        Column("source_dir", Text),
        #: the blueprint's files as uploaded, a tar.gz (stoker/blueprint/archives.py); scripts run from it
        Column("archive", LargeBinary),
        #: sha256 of ``archive``, hex: where its files are unpacked, found without reading the archive
        Column("archive_sha256", String(64)),
        Column("plan", JSON, nullable=False),
        #: the PNG image ``cfy blueprints set-icon`` gave it (read on its own, by ``blueprint_icon``)
        Column("icon", LargeBinary),
        #: private, tenant or global (seen from every tenant): Cloudify's visibility, which only widens
        Column("visibility", String(16), server_default="tenant", nullable=False),
        Column("created_by", String(255), server_default="admin", nullable=False),
        Column("created_at", UTCDateTime, default=utcnow, nullable=False),
        Index("ix_blueprint_project_id_id", "project_id", "id", unique=True),
    )


class Deployment(Record):
    """A blueprint with inputs applied; owned by a project like a stack."""

    __table__ = Table(
        "deployment", metadata,
        Column("pk", Integer, primary_key=True, autoincrement=True),
        Column("id", String(255), nullable=False),
        Column("project_id", String(255), nullable=False),
        Column("blueprint_pk", ForeignKey("blueprint.pk"), index=True, nullable=False),
        Column("display_name", String(255), nullable=False),
        Column("inputs", JSON, nullable=False),
        #: the deployment plan less its nodes and instances: outputs, capabilities, groups, policies...
        Column("plan", JSON, nullable=False),
        Column("runtime_only_evaluation", Boolean, default=False, nullable=False),
        #: never wider than its blueprint's
        Column("visibility", String(16), server_default="tenant", nullable=False),
        Column("created_by", String(255), default="admin", nullable=False),
        Column("created_at", UTCDateTime, default=utcnow, nullable=False),
        Column("updated_at", UTCDateTime),
        Index("ix_deployment_project_id_id", "project_id", "id", unique=True),
    )


class Node(Record):
    """One node template of a deployment, as the functions and workflows read it."""

    __table__ = Table(
        "node", metadata,
        Column("pk", Integer, primary_key=True, autoincrement=True),
        Column("deployment_pk", ForeignKey("deployment.pk", ondelete="CASCADE"), nullable=False),
        Column("id", String(255), nullable=False),
        Column("type", String(255), nullable=False),
        #: the node's plan: type_hierarchy, properties, operations, relationships, capabilities
        Column("definition", JSON, nullable=False),
        Column("number_of_instances", Integer, nullable=False),
        Column("host_id", String(255)),
        Index("ix_node_deployment_pk_id", "deployment_pk", "id", unique=True),
    )


class NodeInstance(Record):
    """One instance of a node: its state and runtime properties (``version`` guards concurrent writes)."""

    __table__ = Table(
        "node_instance", metadata,
        Column("pk", Integer, primary_key=True, autoincrement=True),
        Column("deployment_pk", ForeignKey("deployment.pk", ondelete="CASCADE"), nullable=False),
        Column("id", String(255), nullable=False),
        Column("node_id", String(255), nullable=False),
        Column("index", Integer, nullable=False),
        Column("state", String(32), default="uninitialized", nullable=False),
        Column("runtime_properties", JSON, server_default=text("'{}'"), nullable=False),
        Column("version", Integer, default=1, nullable=False),
        Column("host_id", String(255)),
        Column("scaling_groups", JSON, server_default=text("'[]'"), nullable=False),
        Column("relationships", JSON, server_default=text("'[]'"), nullable=False),
        #: Cloudify's: the last check_status / check_drift results (``workflows/health.py``) and two flags read
        #: from them, kept with them (``health.flags``) for the deployments' and nodes' counts
        Column("system_properties", JSON, server_default=text("'{}'"), nullable=False),
        Column("has_configuration_drift", Boolean, server_default=false(), nullable=False),
        Column("is_status_check_ok", Boolean, server_default=false(), nullable=False),
        Index("ix_node_instance_deployment_pk_id", "deployment_pk", "id", unique=True),
        Index("ix_node_instance_deployment_pk_node_id", "deployment_pk", "node_id"),
    )


class DeploymentLabel(Record):
    """One ``key: value`` label of a deployment (a key may have several values)."""

    __table__ = Table(
        "deployment_label", metadata,
        Column("pk", Integer, primary_key=True, autoincrement=True),
        Column("deployment_pk", ForeignKey("deployment.pk", ondelete="CASCADE"), nullable=False),
        Column("key", String(255), nullable=False),
        Column("value", Text, nullable=False),
        Column("created_at", UTCDateTime, default=utcnow, nullable=False),
        Index("ix_deployment_label_deployment_pk_key_value", "deployment_pk", "key", "value", unique=True),
    )


class Secret(Record):
    """A named secret of a project; ``value`` is always encrypted (``stoker.secretbox``)."""

    __table__ = Table(
        "secret", metadata,
        Column("pk", Integer, primary_key=True, autoincrement=True),
        Column("project_id", String(255), nullable=False),
        Column("key", String(255), nullable=False),
        Column("value", Text, nullable=False),
        Column("hidden", Boolean, default=False, nullable=False),
        Column("visibility", String(16), server_default="tenant", nullable=False),
        Column("created_by", String(255), server_default="admin", nullable=False),
        Column("created_at", UTCDateTime, default=utcnow, nullable=False),
        Column("updated_at", UTCDateTime, default=utcnow, nullable=False),
        #: the secrets provider whose store holds the value (``cfy secrets create --provider``), and its options
        #: (encrypted JSON: a Vault path, another manager's secret name)
        Column("provider_name", String(255)),
        Column("provider_options", Text),
        #: the JSON Schema of a typed secret (``cfy secrets create --schema``): its value is kept as JSON text
        Column("schema", JSON),
        Index("ix_secret_project_id_key", "project_id", "key", unique=True),
    )


# -- executions of workflows on deployments -----------------------------------------------------------


#: statuses of an execution that has not ended
ACTIVE_EXECUTION = ("pending", "started", "cancelling", "force_cancelling")


class Execution(Record):
    """One run of a workflow on a deployment: Cloudify's statuses, its parameters and error.

    ``owner`` is the engine id (host:pid:uuid) of the process running it: a
    dead owner means the execution was interrupted.  ``resume_data`` keeps
    what rebuilds the same graph on resume.  A dry run (``is_dry_run``) walks
    the same graph but runs no operation and changes no instance state.
    """

    __table__ = Table(
        "execution", metadata,
        Column("pk", Integer, primary_key=True, autoincrement=True),
        Column("id", String(36), nullable=False),
        Column("project_id", String(255), nullable=False),
        Column("deployment_pk", ForeignKey("deployment.pk", ondelete="CASCADE"), index=True, nullable=False),
        Column("workflow_id", String(255), nullable=False),
        Column("status", String(32), default="pending", nullable=False),
        Column("parameters", JSON, default=dict, nullable=False),
        Column("error", Text, default="", nullable=False),
        Column("is_dry_run", Boolean, default=False, server_default=false(), nullable=False),
        Column("owner", String(255)),
        Column("heartbeat_at", UTCDateTime),
        #: None, "graceful" or "force": asked by ``stoker execution cancel``
        Column("cancel_request", String(16)),
        Column("resume_data", JSON),
        Column("created_at", UTCDateTime, default=utcnow, nullable=False),
        Column("started_at", UTCDateTime),
        Column("ended_at", UTCDateTime),
        #: the user who asked for it (Cloudify's ``created_by``)
        Column("created_by", String(255), nullable=False, default="admin", server_default="admin"),
        Index("ix_execution_project_id_id", "project_id", "id", unique=True),
    )


class ExecutionEvent(Record):
    """An event (``cloudify_event``) or a log line (``cloudify_log``) of an execution."""

    __table__ = Table(
        "execution_event", metadata,
        Column("pk", Integer, primary_key=True, autoincrement=True),
        Column("execution_pk", ForeignKey("execution.pk", ondelete="CASCADE"), index=True, nullable=False),
        Column("timestamp", UTCDateTime, default=utcnow, nullable=False),
        Column("type", String(16), nullable=False),
        Column("event_type", String(64)),
        Column("level", String(16)),
        Column("node_id", String(255)),
        Column("node_instance_id", String(255)),
        Column("operation", String(255)),
        Column("message", Text, default="", nullable=False),
        Column("context", JSON),
    )


# -- stack actions spread over workers (stoker/dispatch/) ----------------------------------------------


class DispatchTraversal(Record):
    """One stack action spread over workers (``stoker/dispatch/``): what every worker decides from.

    The worker that sees no node left open after its own node's end moves
    ``status`` on and ends the action (``finished`` is no longer kept: one
    counter row written by every worker queued them all behind its lock).  ``stopping`` holds why the action
    stops early (a failure, a timeout, a cancel) while resources still run.
    """

    __table__ = Table(
        "dispatch_traversal", metadata,
        Column("id", String(36), primary_key=True),
        # the stack acted on; None for an execution's traversal (``execution_pk``)
        Column("stack_id", ForeignKey("stack.id", ondelete="CASCADE"), index=True),
        Column("action", String(32), nullable=False),
        Column("status", String(32), default="IN_PROGRESS", nullable=False),
        Column("total", Integer, nullable=False),
        Column("stopping", Text),
        # resources still IN_PROGRESS are stopped too (a timeout or a cancel), not left to finish
        Column("interrupt", Boolean, default=False, nullable=False),
        Column("deadline", UTCDateTime),
        Column("disable_rollback", Boolean, default=True, nullable=False),
        Column("created_at", UTCDateTime, default=utcnow, nullable=False),
        # what the action was given beyond the stored stack: an update's inputs before it (what its
        # rollback returns to), an adopt's adopted resources
        Column("given", JSON),
        # a workflow execution's steps: its nodes are the indexes of the steps' sorted keys
        Column("execution_pk", ForeignKey("execution.pk", ondelete="CASCADE")),
    )


class DispatchNode(Record):
    """One resource of a traversal: how many of its requirements are still to finish."""

    __table__ = Table(
        "dispatch_node", metadata,
        Column("traversal_id", ForeignKey("dispatch_traversal.id", ondelete="CASCADE"), primary_key=True),
        Column("resource_id", Integer, primary_key=True),
        Column("waiting", Integer, nullable=False),
        Column("dependents", JSON, nullable=False),
        # PENDING (not started), RUNNING (a worker took it), DONE
        Column("state", String(16), default="PENDING", nullable=False),
        # which task may act next: bumped at every park, so a task of an older step is stale
        Column("step", Integer, default=0, nullable=False),
        # the nodes not done yet, found without walking those done (the end of a traversal is their absence)
        # (PostgreSQL's WHERE is added by ``partial_indexes_for``)
        Index("ix_dispatch_node_open", "traversal_id", sqlite_where=text("state <> 'DONE'"),
              info={"where": "state <> 'DONE'"}),
    )


def partial_indexes_for(dialect: str) -> None:
    """Give the partial indexes their WHERE in ``dialect`` too (any dialect but SQLite).

    Declaring ``postgresql_where`` with the models would import SQLAlchemy's
    whole PostgreSQL dialect (~50 ms) into every command on SQLite; a
    PostgreSQL engine has loaded it anyway when this runs.
    """
    if dialect == "sqlite":
        return
    for table in metadata.tables.values():
        for index in table.indexes:
            where = index.info.get("where")
            if where is not None:
                index.dialect_kwargs[f"{dialect}_where"] = text(where)

