"""Reading and writing executions, their events, and the node instance changes they make.

Core statements, rows as plain dicts, like ``blueprint_records``.  Starting
an execution checks for another active one on the same deployment in the
same write transaction (SQLite: BEGIN IMMEDIATE; PostgreSQL: the deployment
row locked), so two processes cannot both start one.  What must happen between
executions (a plugins update rewriting the deployment's plan) is written under
the same lock (``between_executions``), and an execution planned on a deployment
row changed since is not started (``PlanChanged``: plan it again).
"""

from __future__ import annotations

import uuid
from functools import lru_cache
from contextlib import contextmanager
from typing import Any, Callable, Iterable, Iterator

from sqlalchemy import Connection, Table, bindparam, delete, func, insert, select, update

from stoker.errors import Conflict, NotFound
from stoker.store.blueprint_records import WORKER_COMMANDS, BlueprintRecords
from stoker.store.bulk import execute_many, insert_of
from stoker.store.group_tables import group_of, in_group
from stoker.store.instance_health import flags
from stoker.store.models import ACTIVE_EXECUTION, Deployment, Execution, ExecutionEvent, Node, NodeInstance, utcnow

EXECUTIONS: Table = Execution.__table__  # type: ignore[assignment]
EVENTS: Table = ExecutionEvent.__table__  # type: ignore[assignment]
INSTANCES: Table = NodeInstance.__table__  # type: ignore[assignment]
DEPLOYMENTS: Table = Deployment.__table__  # type: ignore[assignment]
NODES: Table = Node.__table__  # type: ignore[assignment]

ACTIVE = ACTIVE_EXECUTION


class PlanChanged(Conflict):
    """The deployment changed (its ``updated_at``: a plugins update) between its reading and the execution's
    start: the execution is planned again on it as it is now."""


class DeploymentBusy(Conflict):
    """The deployment runs an execution (``running``: its row), and this one may not run beside it."""

    def __init__(self, message: str, running: dict):
        super().__init__(message)
        self.running = running


class ExecutionRecords(BlueprintRecords):
    """The executions half of the store, beside (and reading) the deployments."""

    def _query(self, light: bool = False) -> Any:
        """Executions with their deployment's id (and their execution group's); ``light``: without
        ``resume_data`` (the instance states an execution started from: megabytes for 100,000 instances), for
        readers that only show or follow it."""
        columns = [c for c in EXECUTIONS.c if c.name != "resume_data"] if light else [EXECUTIONS]
        return select(*columns, DEPLOYMENTS.c.id.label("deployment_id"), group_of(EXECUTIONS.c.pk)).join(
            DEPLOYMENTS, DEPLOYMENTS.c.pk == EXECUTIONS.c.deployment_pk)

    # -- executions -----------------------------------------------------------------------------
    def start_execution(self, project_id: str, deployment_pk: int, workflow_id: str, parameters: dict,
                        owner: str, is_gone: Callable[[dict], bool], concurrent: bool = False,
                        queue: bool = False, planned_on: dict | None = None, dry_run: bool = False,
                        created_by: str = "admin") -> dict:
        """A new execution owned by ``owner``, status started, asked by user ``created_by``; while another is active, Conflict, or
        with ``queue`` a ``queued`` one (no owner), which the active one's end starts (``take_queued``).
        A dry run (``dry_run``) is an execution like any other here: it blocks and is blocked as one.

        ``is_gone(row)`` says whether an active execution's process has died:
        such an execution is marked interrupted here and does not block.  ``planned_on``: the deployment
        row the execution was planned on; ``PlanChanged`` if it changed since.
        """
        execution_id = str(uuid.uuid4())
        now = utcnow()
        with self._write() as conn:
            updated_at = self.lock_deployment(conn, deployment_pk)
            if planned_on is not None and updated_at != planned_on["updated_at"]:
                raise PlanChanged(f"Deployment {planned_on['id']} changed while its execution was planned")
            busy = None if concurrent else self._running(conn, deployment_pk, is_gone)
            if busy is not None and not queue:
                raise DeploymentBusy(f"Deployment {busy['deployment_id']} is running execution {busy['id']} "
                                     f"({busy['workflow_id']}, {busy['status']}); wait for it to end or cancel it "
                                     f"(stoker execution cancel {busy['id']}), start with --queue to run it next, "
                                     "or with --force to run both at once", busy)
            started = {"status": "started", "owner": owner, "heartbeat_at": now, "started_at": now}
            conn.execute(insert(EXECUTIONS).values(
                id=execution_id, project_id=project_id, deployment_pk=deployment_pk, workflow_id=workflow_id,
                parameters=parameters, error="", is_dry_run=dry_run, created_at=now, created_by=created_by,
                **({"status": "queued"} if busy else started)))
        return self.get_execution(project_id, execution_id)

    @contextmanager
    def between_executions(self, deployment_pks: Iterable[int], is_gone: Callable[[dict], bool]) -> Iterator[Connection]:
        """A write transaction in which the deployments run no execution and none starts (their rows locked
        as ``start_execution`` locks them, in one order); Conflict naming the first one running one."""
        with self._write() as conn:
            for pk in sorted(deployment_pks):
                self.lock_deployment(conn, pk)
                busy = self._running(conn, pk, is_gone)
                if busy is not None:
                    raise Conflict(f"Deployment {busy['deployment_id']} is running execution {busy['id']} "
                                   f"({busy['workflow_id']}, {busy['status']})")
            yield conn

    @staticmethod
    def lock_deployment(conn: Connection, deployment_pk: int) -> Any:
        """The deployment's ``updated_at``, its row locked until the transaction ends (PostgreSQL: ``FOR
        UPDATE``; SQLite's writers begin IMMEDIATE, one at a time)."""
        query = select(DEPLOYMENTS.c.updated_at).where(DEPLOYMENTS.c.pk == deployment_pk)
        return conn.execute(query.with_for_update() if conn.dialect.name == "postgresql" else query).scalar()

    def _running(self, conn: Connection, deployment_pk: int, is_gone: Callable[[dict], bool]) -> dict | None:
        """The deployment's active execution, if any (one whose process died is marked interrupted); the
        caller holds the deployment's lock (``_lock``)."""
        for row in self._rows(conn.execute(self._query().where(
                EXECUTIONS.c.deployment_pk == deployment_pk, EXECUTIONS.c.status.in_(ACTIVE)))):
            if not is_gone(row):
                return row
            self._interrupt(conn, row)
        return None

    def take_queued(self, deployment_pk: int, owner: str, is_gone: Callable[[dict], bool]) -> dict | None:
        """The deployment's oldest queued execution (not an execution group's: its group starts it), now
        started and owned by ``owner``, if the deployment runs nothing else; None otherwise."""
        with self._write() as conn:
            self.lock_deployment(conn, deployment_pk)
            if self._running(conn, deployment_pk, is_gone) is not None:
                return None
            pk = conn.execute(select(EXECUTIONS.c.pk).where(EXECUTIONS.c.deployment_pk == deployment_pk,
                                                            EXECUTIONS.c.status == "queued",
                                                            ~in_group(EXECUTIONS.c.pk))
                              .order_by(EXECUTIONS.c.pk).limit(1)).scalar()
            if pk is None:
                return None
            now = utcnow()
            conn.execute(update(EXECUTIONS).where(EXECUTIONS.c.pk == pk).values(
                status="started", owner=owner, heartbeat_at=now, started_at=now))
            return self._rows(conn.execute(self._query().where(EXECUTIONS.c.pk == pk)))[0]

    def cancel_queued(self, pk: int) -> bool:
        """End a queued execution before it ran; False if it is no longer queued."""
        with self._write() as conn:
            return bool(conn.execute(update(EXECUTIONS).where(EXECUTIONS.c.pk == pk, EXECUTIONS.c.status == "queued")
                                     .values(status="cancelled", ended_at=utcnow())).rowcount)

    @staticmethod
    def _interrupt(conn: Connection, row: dict) -> None:
        """Mark the execution ``row`` failed as interrupted, unless it changed since it was read and
        judged gone: an owner that beat again meanwhile is alive, and goes on."""
        conn.execute(update(EXECUTIONS).where(EXECUTIONS.c.pk == row["pk"], EXECUTIONS.c.status.in_(ACTIVE),
                                              EXECUTIONS.c.owner.is_not_distinct_from(row["owner"]),
                                              EXECUTIONS.c.heartbeat_at.is_not_distinct_from(row["heartbeat_at"]))
                     .values(status="failed", owner=None, ended_at=utcnow(), cancel_request=None,
                             error=interrupted_message(row)))

    def mark_interrupted(self, row: dict) -> None:
        with self._write() as conn:
            self._interrupt(conn, row)

    def claim_execution(self, project_id: str, execution_id: str, owner: str) -> dict:
        """Take an ended (failed or cancelled) execution over to resume it; Conflict if it is active.  The
        deployment's lock is held meanwhile, as for a start: a plugins update is either refused by it or
        committed before the resumed execution reads the deployment."""
        row = self.get_execution(project_id, execution_id)
        with self._write() as conn:
            self.lock_deployment(conn, row["deployment_pk"])
            done = conn.execute(update(EXECUTIONS).where(EXECUTIONS.c.pk == row["pk"],
                                                         EXECUTIONS.c.status.in_(("failed", "cancelled")))
                                .values(status="started", owner=owner, heartbeat_at=utcnow(), error="",
                                        cancel_request=None, ended_at=None)).rowcount
        if not done:
            raise Conflict(f"Execution {execution_id} is {row['status']}: only a failed or cancelled "
                           "execution can be resumed")
        return self.get_execution(project_id, execution_id)

    def get_execution(self, project_id: str, execution_id: str, light: bool = False) -> dict:
        with self._read() as conn:
            rows = self._rows(conn.execute(self._query(light).where(EXECUTIONS.c.project_id == project_id,
                                                                    EXECUTIONS.c.id == execution_id)))
        if not rows:
            raise NotFound(f"Execution {execution_id} not found")
        return rows[0]

    def list_executions(self, project_id: str, deployment_pk: int | None = None, light: bool = False) -> list[dict]:
        query = self._query(light).where(EXECUTIONS.c.project_id == project_id)
        if deployment_pk is not None:
            query = query.where(EXECUTIONS.c.deployment_pk == deployment_pk)
        with self._read() as conn:
            return self._rows(conn.execute(query.order_by(EXECUTIONS.c.pk)))

    def update_execution(self, pk: int, by_owner: str | None = None, **fields: Any) -> bool:
        """Change an execution; with ``by_owner``, only while that process still owns it."""
        where = [EXECUTIONS.c.pk == pk]
        if by_owner is not None:
            where.append(EXECUTIONS.c.owner == by_owner)
        with self._write() as conn:
            return bool(conn.execute(update(EXECUTIONS).where(*where).values(**fields)).rowcount)

    def add_commands(self, pk: int, record: dict) -> None:
        """Keep the record of the scripts one more process runs for the execution (a worker's:
        ``recorded_commands`` reads them all), unless it is kept already."""
        def added(data: dict) -> dict | None:
            kept = list(data.get(WORKER_COMMANDS) or [])
            return None if record in kept else {**data, WORKER_COMMANDS: [*kept, record]}
        self._edit_resume_data(pk, added)

    def kept_value(self, pk: int, key: str, value: Any) -> Any:
        """The execution's ``resume_data[key]``: the one kept before, else ``value``, kept now (what one step
        remembers across the tasks that run it on the workers)."""
        return self._edit_resume_data(pk, lambda data: None if key in data else {**data, key: value})[key]

    def forget_value(self, pk: int, key: str) -> None:
        """Drop ``resume_data[key]`` (``kept_value``'s)."""
        self._edit_resume_data(pk, lambda data: {k: v for k, v in data.items() if k != key} if key in data else None)

    def _edit_resume_data(self, pk: int, edit: Callable[[dict], dict | None]) -> dict:
        """``resume_data`` changed by ``edit`` (None: left as it is); what it holds then.  The row is locked
        (``FOR UPDATE``; SQLite's writers begin IMMEDIATE) so that workers editing it at once keep each
        other's edits."""
        with self._write() as conn:
            data = conn.execute(select(EXECUTIONS.c.resume_data).where(EXECUTIONS.c.pk == pk)
                                .with_for_update()).scalar() or {}
            changed = edit(data)
            if changed is None:
                return data
            conn.execute(update(EXECUTIONS).where(EXECUTIONS.c.pk == pk).values(resume_data=changed))
            return changed

    def heartbeat(self, pk: int, owner: str) -> str | None:
        """Show the owner is alive; the cancel request waiting for it, if any."""
        with self._write() as conn:
            conn.execute(update(EXECUTIONS).where(EXECUTIONS.c.pk == pk, EXECUTIONS.c.owner == owner)
                         .values(heartbeat_at=utcnow()))
            return conn.execute(select(EXECUTIONS.c.cancel_request).where(EXECUTIONS.c.pk == pk)).scalar()

    def request_cancel(self, pk: int, force: bool) -> bool:
        with self._write() as conn:
            return bool(conn.execute(
                update(EXECUTIONS).where(EXECUTIONS.c.pk == pk, EXECUTIONS.c.status.in_(ACTIVE))
                .values(cancel_request="force" if force else "graceful",
                        status="force_cancelling" if force else "cancelling")).rowcount)

    # -- what an execution writes as it runs ------------------------------------------------------
    def write_batch(self, execution_pk: int, deployment_pk: int, changes: dict[str, dict], events: list[dict],
                    edits: dict[str, list[tuple[str, Callable[[dict], None]]]] | None = None) -> None:
        """Node instance changes (``state``, ``runtime_properties``, ``system_properties``), edits of their
        stored properties (``(column, edit)`` each) and events, in one transaction.

        An edit is a read-modify-write made atomic: the instances' rows are
        locked (``FOR UPDATE``; SQLite's writers begin IMMEDIATE) before their
        properties are read, so two workers editing one instance at once
        keep both edits.  Written ``system_properties`` carry the flags read from them.
        """
        with self._write() as conn:
            changes = {**changes, **self._edited(conn, deployment_pk, changes, edits or {})}
            groups: dict[tuple, list[dict]] = {}
            for instance_id, fields in changes.items():
                if "system_properties" in fields:
                    fields = {**fields, **flags(fields["system_properties"])}
                groups.setdefault(tuple(sorted(fields)), []).append(
                    {"b_pk": deployment_pk, "b_id": instance_id, **{f"b_{k}": v for k, v in fields.items()}})
            for keys, params in groups.items():
                execute_many(conn, _instance_update(keys), params, _instance_column)
            if events:
                rows = [{"execution_pk": execution_pk, **_event_columns(e)} for e in events]
                execute_many(conn, insert_of(EVENTS, tuple(rows[0])), rows, EVENTS.c.get)

    @staticmethod
    def _edited(conn: Connection, deployment_pk: int, changes: dict[str, dict],
                edits: dict[str, list[tuple[str, Callable[[dict], None]]]]) -> dict[str, dict]:
        """The changes of the edited instances, their properties read under their rows' locks (in one
        order: two writers never wait on each other in a cycle) and edited."""
        if not edits:
            return {}
        columns = sorted({column for pairs in edits.values() for column, _edit in pairs})
        stored = {row[0]: dict(zip(columns, row[1:])) for row in conn.execute(
            select(INSTANCES.c.id, *(INSTANCES.c[c] for c in columns))
            .where(INSTANCES.c.deployment_pk == deployment_pk, INSTANCES.c.id.in_(edits))
            .order_by(INSTANCES.c.id).with_for_update())}
        edited = {}
        for instance_id, pairs in edits.items():
            if instance_id not in stored:
                continue  # removed meanwhile (a scale in)
            fields = dict(changes.get(instance_id, {}))
            for column, edit in pairs:
                fields[column] = dict(fields[column] if column in fields else stored[instance_id][column] or {})
                edit(fields[column])
            edited[instance_id] = fields
        return edited

    def events(self, execution_pk: int, include_logs: bool = False, since: int = 0,
               limit: int | None = None, columns: tuple[str, ...] = ()) -> list[dict]:
        """The execution's events in order, from the ``since``-th on (at most ``limit``: a follower's page);
        only ``columns`` when given."""
        query = (select(*(EVENTS.c[name] for name in columns)) if columns else select(EVENTS)).where(
            EVENTS.c.execution_pk == execution_pk)
        if not include_logs:
            query = query.where(EVENTS.c.type == "cloudify_event")
        with self._read() as conn:
            return self._rows(conn.execute(query.order_by(EVENTS.c.pk).offset(since).limit(limit)))

    def count_events(self, execution_pk: int, include_logs: bool = False) -> int:
        query = select(func.count()).select_from(EVENTS).where(EVENTS.c.execution_pk == execution_pk)
        if not include_logs:
            query = query.where(EVENTS.c.type == "cloudify_event")
        with self._read() as conn:
            return conn.execute(query).scalar()

    def delete_events(self, execution_pk: int, include_logs: bool, since: Any = None, until: Any = None,
                      keep: tuple[str, ...] = ()) -> int:
        """Delete the execution's events (and logs) stamped in ``[since, until]`` but those of the ``keep``
        event types; how many went."""
        query = delete(EVENTS).where(EVENTS.c.execution_pk == execution_pk)
        if not include_logs:
            query = query.where(EVENTS.c.type == "cloudify_event")
        if since is not None:
            query = query.where(EVENTS.c.timestamp >= since)
        if until is not None:
            query = query.where(EVENTS.c.timestamp <= until)
        if keep:
            query = query.where(EVENTS.c.event_type.is_(None) | EVENTS.c.event_type.not_in(keep))
        with self._write() as conn:
            return conn.execute(query).rowcount

    def has_event(self, execution_pk: int, event_type: str) -> bool:
        """Whether the execution has an event of ``event_type`` (its end, say) already."""
        with self._read() as conn:
            return conn.execute(select(EVENTS.c.pk).where(EVENTS.c.execution_pk == execution_pk,
                                                          EVENTS.c.event_type == event_type).limit(1)).first() is not None

    def finished_tasks(self, execution_pk: int) -> set[str]:
        """Keys of the steps whose operation succeeded in this execution (resume skips them)."""
        with self._read() as conn:
            rows = conn.execute(select(EVENTS.c.context).where(EVENTS.c.execution_pk == execution_pk,
                                                               EVENTS.c.event_type == "task_succeeded"))
            return {row[0]["task"] for row in rows if isinstance(row[0], dict) and "task" in row[0]}


@lru_cache(maxsize=16)
def _instance_update(columns: tuple[str, ...]) -> Any:
    """The UPDATE of these node instance columns by deployment and id, bumping ``version`` (built once per
    set of columns, so ``execute_many`` compiles it once)."""
    return (update(INSTANCES)
            .where(INSTANCES.c.deployment_pk == bindparam("b_pk"), INSTANCES.c.id == bindparam("b_id"))
            .values({c: bindparam(f"b_{c}", type_=INSTANCES.c[c].type) for c in columns})
            .values(version=INSTANCES.c.version + 1))


def _instance_column(name: str) -> Any:
    """The node instance column a parameter of ``_instance_update`` writes (``b_<column>``)."""
    return INSTANCES.c.get(name[2:]) if name.startswith("b_") else None


def _event_columns(event: dict) -> dict:
    return {k: event.get(k) for k in ("timestamp", "type", "event_type", "level", "node_id", "node_instance_id",
                                      "operation", "message", "context")}


def interrupted_message(row: dict) -> str:
    owner = row.get("owner") or "?"
    pid = owner.split(":")[1] if owner.count(":") >= 2 else owner
    return (f"Execution interrupted: the process running it (pid {pid}) stopped before it ended; "
            f"`stoker execution resume {row['id']}` continues it")


class DeploymentRowChanges:
    """What a deployment update changes in a deployment's rows (``modify``), in a transaction of its own (a
    scale's changes go through its deployment modification, ``workflows.modifications``)."""

    def __init__(self, records: ExecutionRecords):
        self._write = records._write

    def apply(self, deployment_pk: int, **changes: Any) -> None:
        with self._write() as conn:
            modify(conn, deployment_pk, **changes)


def modify(conn: Connection, deployment_pk: int, added: list[dict], removed: list[str], relinked: dict[str, list],
           counts: dict[str, int], nodes: dict[str, dict] | None = None, removed_nodes: Iterable[str] = (),
           deployment: dict | None = None, restored: dict[str, dict] | None = None) -> None:
    """Instances added or removed, relationships rewired, node counts (a scale), instances put back as they
    were (``restored``: instance id -> columns; a modification's rollback); a deployment update also
    writes its nodes (``nodes``: node id -> the columns of its row, made when missing), removes nodes and
    changes the deployment's row (blueprint, plan, inputs)."""
    if deployment:
        conn.execute(update(DEPLOYMENTS).where(DEPLOYMENTS.c.pk == deployment_pk)
                     .values(**deployment, updated_at=utcnow()))
    for node_id, columns in (nodes or {}).items():
        where = (NODES.c.deployment_pk == deployment_pk, NODES.c.id == node_id)
        if not conn.execute(update(NODES).where(*where).values(**columns)).rowcount:
            conn.execute(insert(NODES).values({**columns, "deployment_pk": deployment_pk, "id": node_id}))
    if removed_nodes:
        conn.execute(NODES.delete().where(NODES.c.deployment_pk == deployment_pk,
                                          NODES.c.id.in_(list(removed_nodes))))
    if added:
        conn.execute(insert(INSTANCES), [{"deployment_pk": deployment_pk, "version": 1, **row} for row in added])
    if removed:
        conn.execute(INSTANCES.delete().where(INSTANCES.c.deployment_pk == deployment_pk,
                                              INSTANCES.c.id.in_(removed)))
    for instance_id, relationships in relinked.items():
        conn.execute(update(INSTANCES).where(INSTANCES.c.deployment_pk == deployment_pk, INSTANCES.c.id == instance_id)
                     .values(relationships=relationships, version=INSTANCES.c.version + 1))
    for instance_id, columns in (restored or {}).items():
        conn.execute(update(INSTANCES).where(INSTANCES.c.deployment_pk == deployment_pk, INSTANCES.c.id == instance_id)
                     .values(**columns, version=INSTANCES.c.version + 1))
    for node_id, count in counts.items():
        conn.execute(update(NODES).where(NODES.c.deployment_pk == deployment_pk, NODES.c.id == node_id)
                     .values(number_of_instances=count))
