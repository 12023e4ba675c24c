"""The engine's only way to read and write state.

Every method is its own short transaction and returns detached records
(``stoker.store.models``) or ids, so callers never hold a connection.  All
of it is SQLAlchemy Core; the ``*_bulk`` methods are executemany statements,
as the engine persists every state change of stacks with thousands of
resources.
"""

from __future__ import annotations

import socket
import uuid
from contextlib import contextmanager
from datetime import timedelta
from functools import lru_cache
from typing import Any, Iterable, Iterator, Sequence

from sqlalchemy import Connection, Engine, Table, bindparam, case, delete, func, insert, or_, select, text, update
from sqlalchemy.exc import IntegrityError

from stoker.errors import Conflict, NotFound, StaleWrite
from stoker.store import queries
from stoker.store.bulk import execute_many, insert_of
from stoker.store.edits import DataEdits
from stoker.store.locks import ENGINE_TIMEOUT, HANDED_BACK, LOCK_TIMEOUT, owner_is_dead, process_of
from stoker.store.models import EngineProcess, Event, RawTemplate, Record, Resource, Stack, utcnow
from stoker.store.sealed import opened_resource, opened_stack

DEFAULT_PROJECT = "default"

STACKS: Table = Stack.__table__  # type: ignore[assignment]
RESOURCES: Table = Resource.__table__  # type: ignore[assignment]
EVENTS: Table = Event.__table__  # type: ignore[assignment]
TEMPLATES: Table = RawTemplate.__table__  # type: ignore[assignment]
PROCESSES: Table = EngineProcess.__table__  # type: ignore[assignment]

#: seconds since the epoch by the database server's clock, per dialect
CLOCK = {"postgresql": text("SELECT extract(epoch FROM clock_timestamp())"),
         "sqlite": text("SELECT (julianday('now') - 2440587.5) * 86400.0")}
COLUMNS = {model: frozenset(model.__table__.columns.keys()) for model in (Stack, Resource, Event)}
# the most frequent reads, built once (building a statement costs more than SQLite running it)
STACK_BY_ID = select(STACKS).where(STACKS.c.project_id == bindparam("project"), STACKS.c.id == bindparam("key"))
LIVE_STACK_BY_NAME = select(STACKS).where(STACKS.c.project_id == bindparam("project"),
                                          STACKS.c.name == bindparam("key"), STACKS.c.deleted_at.is_(None))
STACK_BY_ID_ONLY = select(STACKS).where(STACKS.c.id == bindparam("key"))
#: a stack's lock columns once its lock is given up (and any cancel request with it)
LOCK_RELEASED = {"lock_owner": None, "lock_action": None, "lock_time": None, "cancel_requested": False,
                 "cancel_rollback": True}
RESOURCES_OF_STACK = select(RESOURCES).where(RESOURCES.c.stack_id == bindparam("stack")).order_by(RESOURCES.c.id)
# (an ``in_`` of a literal list, built per call, also leaves a cycle of its parameter for the collector)
STORED_DATA = select(RESOURCES.c.id, RESOURCES.c.data).where(RESOURCES.c.id.in_(bindparam("ids", expanding=True))) \
    .order_by(RESOURCES.c.id).with_for_update()
RESOURCES_DELETED = delete(RESOURCES).where(RESOURCES.c.id.in_(bindparam("ids", expanding=True)))


class Store:
    """Repository over one database; safe to share between threads."""

    def __init__(self, engine: Engine, lock_timeout: float = LOCK_TIMEOUT):
        self.engine = engine
        self.lock_timeout = lock_timeout
        self._writer = engine.execution_options(stoker_write=True)
        #: (stack id, owner) of the locks a ``write_batch`` released with the stack's end, for
        #: ``release_lock`` to find given up already instead of writing again
        self._released_with_end: set[tuple[str, str]] = set()

    def close(self) -> None:
        self.engine.dispose()

    @contextmanager
    def _read(self) -> Iterator[Connection]:
        with self.engine.connect() as conn:
            yield conn

    @contextmanager
    def _write(self) -> Iterator[Connection]:
        with self._writer.begin() as conn:
            yield conn

    def clock(self) -> float:
        """Now, in seconds since the epoch, by the database's clock: the one clock all workers
        share (their hosts' clocks may be skewed), for the moments they store for each other."""
        with self._read() as conn:
            return float(conn.execute(CLOCK[self.engine.dialect.name]).scalar_one())

    # -- stacks -------------------------------------------------------------

    def create_stack(
        self, name: str, template_id: int, project_id: str = DEFAULT_PROJECT, **fields: Any
    ) -> Stack:
        """Insert a stack (``CREATE IN_PROGRESS`` unless told otherwise); Conflict if the name is taken."""
        return self.create_stack_with_template(name, template_id, project_id, **fields)

    def create_stack_with_template(self, name: str, template: int | tuple[dict, dict],
                                   project_id: str = DEFAULT_PROJECT, resources: list[dict] = (),
                                   **fields: Any) -> Stack:
        """``create_stack``, in one transaction with its template (``template``: the id of one
        stored, or (content, files) to store), given ``lock_owner`` its lock, and the rows of
        its ``resources`` (as ``add_resources_bulk``; each gets its ``id``): a one-resource
        create costs four transactions fewer."""
        _check_fields(Stack, fields)
        fields.setdefault("id", str(uuid.uuid4()))
        fields.setdefault("action", "CREATE")
        fields.setdefault("status", "IN_PROGRESS")
        if fields.get("lock_owner") is not None:
            fields.setdefault("lock_time", utcnow())
        try:
            with self._write() as conn:
                template_id = template if isinstance(template, int) else _insert_template(conn, *template)
                row = {"name": name, "template_id": template_id, "project_id": project_id, **fields}
                conn.execute(insert_of(STACKS, tuple(sorted(row))), row)
                stack = Stack.from_row(conn.execute(STACK_BY_ID_ONLY, {"key": fields["id"]}).one())
                if resources:
                    _insert_resources(conn, resources)
        except IntegrityError:
            if self._live_stack_named(name, project_id):
                raise Conflict(f"Stack {name} already exists") from None
            raise
        return opened_stack(stack)

    def _live_stack_named(self, name: str, project_id: str) -> bool:
        with self._read() as conn:
            return conn.scalar(
                select(Stack.id).where(Stack.project_id == project_id, Stack.name == name, Stack.deleted_at.is_(None))
            ) is not None

    def get_stack(self, id_or_name: str, project_id: str = DEFAULT_PROJECT, show_deleted: bool = False) -> Stack:
        """A stack by id, else by name among live stacks."""
        params = {"project": project_id, "key": id_or_name}
        with self._read() as conn:
            row = conn.execute(STACK_BY_ID, params).first()
            if row is not None and (show_deleted or row.deleted_at is None):
                return opened_stack(Stack.from_row(row))
            row = conn.execute(LIVE_STACK_BY_NAME, params).first()
        if row is None:
            raise NotFound(f"Stack {id_or_name} not found")
        return opened_stack(Stack.from_row(row))

    def list_stacks(
        self,
        project_id: str = DEFAULT_PROJECT,
        filters: dict[str, Any] | None = None,
        sort_keys: Sequence[str] = ("created_at",),
        sort_dir: str = "desc",
        limit: int | None = None,
        marker: str | None = None,
        tags: Sequence[str] = (),
        tag_mode: str = "all",
        show_nested: bool = False,
        show_deleted: bool = False,
    ) -> list[Stack]:
        """Stacks of a project, filtered, sorted and paged after the ``marker`` stack id.

        ``filters`` maps a column to a value or a list of values; a status
        filter may be ``COMPLETE`` or ``CREATE_COMPLETE``. ``tag_mode`` is
        ``all``, ``any``, ``not`` (lacks some) or ``not-any`` (lacks every one).
        """
        query = select(STACKS).where(Stack.project_id == project_id)
        if not show_deleted:
            query = query.where(Stack.deleted_at.is_(None))
        if not show_nested:
            query = query.where(Stack.parent_id.is_(None))
        for key, value in (filters or {}).items():
            query = query.where(queries.filter_clause(key, value))
        if tags:
            query = query.where(queries.tags_clause(tags, tag_mode))
        keys = queries.sort_columns(sort_keys)
        descending = queries.is_descending(sort_dir)
        with self._read() as conn:
            if marker is not None:
                after = conn.execute(select(*keys).where(Stack.id == marker)).one_or_none()
                if after is None:
                    raise NotFound(f"Stack {marker} not found")
                query = query.where(queries.after(keys, tuple(after), descending))
            query = query.order_by(*(k.desc() if descending else k.asc() for k in keys))
            return [opened_stack(stack) for stack in Stack.from_rows(conn.execute(query.limit(limit)))]

    def update_stack(self, stack_id: str, **fields: Any) -> None:
        _check_fields(Stack, fields)
        with self._write() as conn:
            done = _update_stack(conn, stack_id, fields)
        if not done:
            raise NotFound(f"Stack {stack_id} not found")

    def soft_delete_stack(self, stack_id: str) -> None:
        """Hide the stack (its name becomes free again) but keep it and its events."""
        self.update_stack(stack_id, deleted_at=utcnow())

    def children(self, stack_id: str) -> list[Stack]:
        """Live nested stacks whose parent is ``stack_id``."""
        query = select(STACKS).where(Stack.parent_id == stack_id, Stack.deleted_at.is_(None))
        with self._read() as conn:
            rows = conn.execute(query.order_by(Stack.created_at, Stack.id))
            return [opened_stack(stack) for stack in Stack.from_rows(rows)]

    # -- templates ----------------------------------------------------------

    def store_template(self, content: dict, files: dict | None = None) -> int:
        with self._write() as conn:
            return _insert_template(conn, content, files)

    def get_template(self, template_id: int) -> RawTemplate:
        with self._read() as conn:
            row = conn.execute(select(TEMPLATES).where(TEMPLATES.c.id == template_id)).first()
        if row is None:
            raise NotFound(f"Template {template_id} not found")
        return RawTemplate.from_row(row)

    # -- resources ----------------------------------------------------------

    def add_resource(self, stack_id: str, **fields: Any) -> int:
        return self.add_resources_bulk([{"stack_id": stack_id, **fields}])[0]

    def update_resource(self, resource_id: int, expected_atomic_key: int | None = None, **fields: Any) -> int:
        """Write fields, bump and return ``atomic_key``.

        With ``expected_atomic_key``, the write only happens if nobody wrote
        since that value was read; otherwise StaleWrite.
        """
        _check_fields(Resource, fields)
        fields.setdefault("updated_at", utcnow())
        stmt = (
            update(RESOURCES)
            .where(RESOURCES.c.id == resource_id)
            .values(**fields, atomic_key=RESOURCES.c.atomic_key + 1)
            .returning(RESOURCES.c.atomic_key)
        )
        if expected_atomic_key is not None:
            stmt = stmt.where(RESOURCES.c.atomic_key == expected_atomic_key)
        with self._write() as conn:
            key = conn.execute(stmt).scalar()
            if key is not None:
                return key
            current = conn.scalar(select(Resource.atomic_key).where(Resource.id == resource_id))
        if current is None:
            raise NotFound(f"Resource {resource_id} not found")
        raise StaleWrite(
            f"Resource {resource_id} was changed by someone else "
            f"(atomic_key {current}, expected {expected_atomic_key})"
        )

    def get_resources(self, stack_id: str, names: Iterable[str] | None = None) -> list[Resource]:
        """The stack's resource rows (``names``: only the rows of those names), in id order."""
        if names is None:
            query, params = RESOURCES_OF_STACK, {"stack": stack_id}
        else:
            query = select(RESOURCES).where(Resource.stack_id == stack_id, Resource.name.in_(sorted(names)))
            query, params = query.order_by(Resource.id), {}
        with self._read() as conn:
            rows = conn.execute(query, params)
            return [opened_resource(resource) for resource in Resource.from_rows(rows)]

    def has_live_resource(self, project_id: str, type_name: str, physical_id: str) -> bool:
        """Is a resource of ``type_name`` with ``physical_id`` part of a live stack of the project
        (a simulated cloud's network, say, that another stack refers to)?"""
        query = (select(RESOURCES.c.id).join(STACKS, STACKS.c.id == RESOURCES.c.stack_id)
                 .where(STACKS.c.project_id == project_id, STACKS.c.deleted_at.is_(None),
                        RESOURCES.c.type == type_name, RESOURCES.c.physical_resource_id == physical_id,
                        RESOURCES.c.replaced_by.is_(None), RESOURCES.c.action != "DELETE")
                 .limit(1))
        with self._read() as conn:
            return conn.execute(query).first() is not None

    def live_resources(self, project_id: str, type_name: str) -> list[Resource]:
        """The resources of ``type_name`` made by the project's live stacks, oldest first (what the
        cloud API lists of a simulated cloud: its networks, its subnets)."""
        query = (select(RESOURCES).join(STACKS, STACKS.c.id == RESOURCES.c.stack_id)
                 .where(STACKS.c.project_id == project_id, STACKS.c.deleted_at.is_(None),
                        RESOURCES.c.type == type_name, RESOURCES.c.physical_resource_id.is_not(None),
                        RESOURCES.c.replaced_by.is_(None), RESOURCES.c.action != "DELETE")
                 .order_by(RESOURCES.c.id))
        with self._read() as conn:
            return [opened_resource(resource) for resource in Resource.from_rows(conn.execute(query))]

    def get_resource(self, resource_id: int) -> Resource:
        with self._read() as conn:
            row = conn.execute(select(RESOURCES).where(Resource.id == resource_id)).first()
        if row is None:
            raise NotFound(f"Resource {resource_id} not found")
        return opened_resource(Resource.from_row(row))

    def delete_resource(self, resource_id: int) -> None:
        with self._write() as conn:
            done = conn.execute(delete(RESOURCES).where(RESOURCES.c.id == resource_id)).rowcount
        if not done:
            raise NotFound(f"Resource {resource_id} not found")

    def delete_resources_bulk(self, resource_ids: Iterable[int]) -> None:
        """Remove many resource rows in one transaction (ids already gone are fine)."""
        ids = list(resource_ids)
        with self._write() as conn:
            for start in range(0, len(ids), 500):
                conn.execute(RESOURCES_DELETED, {"ids": ids[start:start + 500]})

    def add_resources_bulk(self, rows: Iterable[dict[str, Any]]) -> list[int]:
        """Insert many resources in one transaction; returns their ids in input order."""
        rows = list(rows)
        with self._write() as conn:
            _insert_resources(conn, rows)
        return [row["id"] for row in rows]

    def write_batch(self, changes: Iterable[tuple[int, dict[str, Any]]], events: Iterable[dict[str, Any]],
                    stacks: Iterable[tuple[str, dict[str, Any]]] = (), release: tuple[str, str] | None = None) -> None:
        """Resource and stack changes and their events in one transaction (the engine's group commit);
        each resource's ``atomic_key`` bumped, unchecked: the batching writer owns those resources.
        ``release``: (stack id, owner) of a lock given up in the same transaction (an action's end)."""
        with self._write() as conn:
            self._update_resources(conn, changes)
            for stack_id, fields in stacks:
                _check_fields(Stack, fields)
                _update_stack(conn, stack_id, fields)
            self._insert_events(conn, events)
            released = release is not None and _update_stack(conn, release[0], LOCK_RELEASED, release[1])
        if released:
            self._released_with_end.add(release)  # type: ignore[arg-type]

    def write_changes(self, conn: Any, changes: Iterable[tuple[int, dict[str, Any]]],
                      events: Iterable[dict[str, Any]]) -> None:
        """Resource changes and their events inside the caller's transaction (a worker's node end)."""
        self._update_resources(conn, changes)
        self._insert_events(conn, events)

    def _update_resources(self, conn: Connection, changes: Iterable[tuple[int, dict[str, Any]]]) -> None:
        now = utcnow()
        params = [{"v_updated_at": now} | {f"v_{k}": v for k, v in fields.items()} | {"v_id": resource_id}
                  for resource_id, fields in _data_edited(conn, list(changes))]
        for group in _by_keys(params):
            columns = tuple(name[2:] for name in group[0] if name != "v_id")
            _check_fields(Resource, dict.fromkeys(columns))
            execute_many(conn, _resource_update(columns), group, _resource_column)

    # -- events -------------------------------------------------------------

    def add_event(self, stack_id: str, **fields: Any) -> str:
        """Record one event; returns its uuid (what users page events by)."""
        event = {"stack_id": stack_id, "uuid": str(uuid.uuid4()), **fields}
        self.add_events_bulk([event])
        return event["uuid"]

    def add_events_bulk(self, rows: Iterable[dict[str, Any]]) -> None:
        with self._write() as conn:
            self._insert_events(conn, rows)

    def _insert_events(self, conn: Connection, rows: Iterable[dict[str, Any]]) -> None:
        rows = [row if "uuid" in row else {"uuid": str(uuid.uuid4())} | row for row in rows]
        for group in _by_keys(rows):
            _check_fields(Event, group[0])
            execute_many(conn, insert_of(EVENTS, tuple(group[0])), group, EVENTS.c.get)

    def list_events(
        self,
        stack_id: str,
        resource_name: str | None = None,
        sort_dir: str = "asc",
        limit: int | None = None,
        marker: str | None = None,
    ) -> list[Event]:
        """Events in the order they happened (or reversed), after the ``marker`` event uuid."""
        descending = queries.is_descending(sort_dir)
        query = select(EVENTS).where(Event.stack_id == stack_id)
        if resource_name is not None:
            query = query.where(Event.resource_name == resource_name)
        with self._read() as conn:
            if marker is not None:
                after = conn.scalar(select(Event.id).where(Event.uuid == marker))
                if after is None:
                    raise NotFound(f"Event {marker} not found")
                query = query.where(Event.id < after if descending else Event.id > after)
            query = query.order_by(Event.id.desc() if descending else Event.id.asc()).limit(limit)
            return Event.from_rows(conn.execute(query))

    # -- the stack lock -----------------------------------------------------

    def acquire_lock(self, stack_id: str, owner: str, action: str) -> None:
        """Take the stack's lock for ``owner`` (an engine id), or raise Conflict.

        A single conditional UPDATE decides, so two processes racing for a
        free lock cannot both win. A lock may be taken over when its holder's
        heartbeat is older than ``lock_timeout`` or its process is gone (``owner_gone``).
        """
        dead_owner = None
        for _ in range(5):
            free = or_(
                Stack.lock_owner.is_(None),
                Stack.lock_owner == owner,
                Stack.lock_time < utcnow() - timedelta(seconds=self.lock_timeout),
            )
            if dead_owner is not None:
                free = or_(free, Stack.lock_owner == dead_owner)
            stmt = update(STACKS).where(STACKS.c.id == stack_id, free)
            with self._write() as conn:
                if conn.execute(stmt.values(lock_owner=owner, lock_action=action, lock_time=utcnow(),
                                                    cancel_requested=False)).rowcount:
                    return
            with self._read() as conn:
                holder = conn.execute(
                    select(Stack.name, Stack.lock_owner, Stack.lock_action).where(Stack.id == stack_id)
                ).one_or_none()
            if holder is None:
                raise NotFound(f"Stack {stack_id} not found")
            if holder.lock_owner is not None and not self.owner_gone(holder.lock_owner):
                break
            dead_owner = holder.lock_owner
        raise Conflict(f"Stack {holder.name} already has an action ({holder.lock_action}) in progress")

    def heartbeat_lock(self, stack_id: str, owner: str) -> bool:
        """Show the holder is alive; False if the lock is no longer ours."""
        return self._set_lock(stack_id, owner, lock_time=utcnow())

    def release_lock(self, stack_id: str, owner: str) -> bool:
        """Give the lock up (and any cancel request with it); False if it was not ours.  One the
        action's end gave up already (``write_batch``'s ``release``) costs no write."""
        if (stack_id, owner) in self._released_with_end:
            self._released_with_end.discard((stack_id, owner))
            return True
        return self._set_lock(stack_id, owner, **LOCK_RELEASED)

    def hand_over_lock(self, stack_id: str, owner: str, successor: str, action: str) -> None:
        """The lock passes from ``owner`` to ``successor`` (the next step of the same stack action) in
        one conditional update, or raise Conflict.  A hand-over made again (an end run again after
        its worker was lost) finds the lock the successor's already, or given up by its own end."""
        held = or_(Stack.lock_owner.in_([owner, successor]), Stack.lock_owner.is_(None))
        handed = update(STACKS).where(STACKS.c.id == stack_id, held).values(
            lock_owner=successor, lock_action=action, lock_time=utcnow(),
            # a cancel asked of the successor is its own; one of the owner's is not
            cancel_requested=case((Stack.lock_owner == successor, Stack.cancel_requested), else_=False),
            cancel_rollback=case((Stack.lock_owner == successor, Stack.cancel_rollback), else_=True))
        with self._write() as conn:
            if conn.execute(handed).rowcount:
                return
        raise Conflict(f"Stack {stack_id} already has another action in progress")

    def hand_back_lock(self, stack_id: str, owner: str) -> bool:
        """Leave the stack's action, still in progress, for the next server to resume
        (``locks.HANDED_BACK``); False if the lock was not ours."""
        return self._set_lock(stack_id, owner, lock_owner=HANDED_BACK, lock_time=utcnow())

    def take_over(self, stack_id: str, previous: str, owner: str) -> bool:
        """Take the lock of a gone ``previous`` holder (or a hand-back) for ``owner``; False if
        another took it first."""
        return self._set_lock(stack_id, previous, lock_owner=owner, lock_time=utcnow(),
                              cancel_requested=False)

    def abandoned_stacks(self, handed_back: bool = True) -> list[Stack]:
        """Top-level stacks, any project, whose action's holder is gone (``owner_gone``):
        died, or (with ``handed_back``) stopped and handed it back.

        Each still has the holder judged gone: one taken over by another engine
        between the two reads is left out, since its record would carry the new,
        live holder, and ``take_over`` from that one would run the action twice.
        """
        with self._read() as conn:
            holders = conn.execute(select(Stack.id, Stack.lock_owner).where(
                Stack.lock_owner.is_not(None), Stack.parent_id.is_(None), Stack.deleted_at.is_(None))).all()
        gone = {row.id: row.lock_owner for row in holders
                if (handed_back or row.lock_owner != HANDED_BACK) and self.owner_gone(row.lock_owner)}
        if not gone:
            return []
        with self._read() as conn:
            rows = conn.execute(select(STACKS).where(Stack.id.in_(gone)).order_by(Stack.created_at))
            return [record for record in Stack.from_rows(rows) if record.lock_owner == gone[record.id]]

    # -- server processes (Heat's engine service records) --------------------

    def register_process(self, process: str) -> None:
        """``process`` (``host:pid``) starts acting on stacks: its beat is fresh (a pid reused
        after an older process of the same key died takes its row over).  Rows silent for a day
        go: any lock of theirs has long aged past ``lock_timeout``."""
        with self._write() as conn:
            conn.execute(delete(PROCESSES).where(or_(PROCESSES.c.id == process,
                                                     PROCESSES.c.heartbeat_at < utcnow() - timedelta(days=1))))
            conn.execute(insert(PROCESSES).values(id=process, started_at=utcnow(), heartbeat_at=utcnow()))

    def beat_process(self, process: str) -> None:
        with self._write() as conn:
            if not conn.execute(update(PROCESSES).where(PROCESSES.c.id == process)
                                .values(heartbeat_at=utcnow())).rowcount:
                conn.execute(insert(PROCESSES).values(id=process, started_at=utcnow(), heartbeat_at=utcnow()))

    def unregister_process(self, process: str) -> None:
        with self._write() as conn:
            conn.execute(delete(PROCESSES).where(PROCESSES.c.id == process))

    def owner_gone(self, owner: str) -> bool:
        """Is the lock holder ``owner`` gone: handed back, its process dead on this host, or its
        server process (another host's) silent for ``ENGINE_TIMEOUT``?  On this host the
        process table decides, as a slow beat there says nothing; owners that never
        registered (a CLI run, a traversal of the workers) only age with the lock."""
        if owner_is_dead(owner):
            return True
        process = process_of(owner)
        if process is None or process[0] == socket.gethostname():
            return False
        with self._read() as conn:
            beat = conn.scalar(select(PROCESSES.c.heartbeat_at).where(PROCESSES.c.id == f"{process[0]}:{process[1]}"))
        return beat is not None and beat < utcnow() - timedelta(seconds=ENGINE_TIMEOUT)

    def request_cancel(self, stack_id: str, rollback: bool = True) -> bool:
        """Ask whoever runs the stack's action to stop; False if no action holds the lock."""
        stmt = update(STACKS).where(STACKS.c.id == stack_id, STACKS.c.lock_owner.is_not(None)).values(
            cancel_requested=True, cancel_rollback=rollback)
        with self._write() as conn:
            return bool(conn.execute(stmt).rowcount)

    def cancel_requested(self, stack_id: str) -> tuple[bool, bool]:
        """(is a cancel requested?, should the cancelled action roll back?)"""
        with self._read() as conn:
            row = conn.execute(select(STACKS.c.cancel_requested, STACKS.c.cancel_rollback)
                                  .where(STACKS.c.id == stack_id)).first()
        return (bool(row[0]), bool(row[1])) if row else (False, True)

    def _set_lock(self, stack_id: str, owner: str, **values: Any) -> bool:
        with self._write() as conn:
            return bool(_update_stack(conn, stack_id, values, owner))


def _insert_template(conn: Connection, content: dict, files: dict | None) -> int:
    row = {"content": content, "files": files or {}}
    return conn.execute(insert_of(TEMPLATES, ("content", "files")), row).inserted_primary_key[0]


def _check_fields(model: type[Record], fields: dict[str, Any]) -> None:
    unknown = fields.keys() - COLUMNS[model]
    if unknown:
        raise TypeError(f"{model.__name__} has no field(s) {', '.join(sorted(unknown))}")


@lru_cache(maxsize=256)
def _resource_update(columns: tuple[str, ...]) -> Any:
    """The UPDATE of these resource columns by id, bumping ``atomic_key`` (built once per set of columns)."""
    return (update(RESOURCES)
            .where(RESOURCES.c.id == bindparam("v_id"))
            .values({c: bindparam(f"v_{c}", type_=RESOURCES.c[c].type) for c in columns})
            .values(atomic_key=RESOURCES.c.atomic_key + 1))


def _update_stack(conn: Connection, stack_id: str, fields: dict[str, Any], owner: str | None = None) -> int:
    """Write ``fields`` of a stack (only while ``owner`` holds its lock, if given); rows changed."""
    params = {f"v_{k}": v for k, v in fields.items()} | {"w_id": stack_id}
    if owner is not None:
        params["w_owner"] = owner
    return conn.execute(_stack_update(tuple(fields), owner is not None), params).rowcount


@lru_cache(maxsize=256)
def _stack_update(columns: tuple[str, ...], owned: bool) -> Any:
    """The UPDATE of these stack columns by id (and lock owner), built once per shape."""
    where = [STACKS.c.id == bindparam("w_id")]
    if owned:
        where.append(STACKS.c.lock_owner == bindparam("w_owner"))
    return update(STACKS).where(*where).values({c: bindparam(f"v_{c}", type_=STACKS.c[c].type) for c in columns})


def _resource_column(name: str) -> Any:
    """The resource column a parameter of ``_update_resources`` writes (``v_<column>``)."""
    return RESOURCES.c.get(name[2:]) if name.startswith("v_") else None


def _by_keys(rows: list[dict[str, Any]]) -> Iterable[list[dict[str, Any]]]:
    """Split rows into groups with the same keys: one executemany needs one shape."""
    groups: dict[frozenset, list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(frozenset(row), []).append(row)
    return groups.values()


def _insert_resources(conn: Connection, rows: list[dict[str, Any]]) -> None:
    """Insert resource rows, giving each its ``id``."""
    now = utcnow()
    stored = [{"created_at": now, "updated_at": now} | row for row in rows]
    for row, stored_row, new_id in zip(rows, stored, _reserve_ids(conn, RESOURCES, len(rows))):
        row["id"] = stored_row["id"] = new_id
    for group in _by_keys(stored):
        _check_fields(Resource, group[0])
        execute_many(conn, insert_of(RESOURCES, tuple(group[0])), group, RESOURCES.c.get)


def _reserve_ids(conn: Connection, table: Table, count: int) -> list[int]:
    """Ids for rows about to be inserted, so bulk inserts need no RETURNING.

    RETURNING in input order makes SQLAlchemy insert one row at a time on
    SQLite, and makes psycopg parse one huge statement per 1000 rows.
    """
    if conn.dialect.name == "postgresql":
        sequence = func.pg_get_serial_sequence(table.name, "id")
        query = select(func.nextval(sequence)).select_from(func.generate_series(1, count))
        return list(conn.scalars(query))
    # SQLite: this transaction began with BEGIN IMMEDIATE, so no one else inserts meanwhile.
    last = conn.scalar(_largest_id(table))
    return list(range(last + 1, last + 1 + count))


@lru_cache(maxsize=16)
def _largest_id(table: Table) -> Any:
    """The largest id of ``table`` (0 when empty), built once per table."""
    return select(func.coalesce(func.max(table.c.id), 0))


def _data_edited(conn: Connection, changes: list[tuple[int, dict[str, Any]]]) -> list[tuple[int, dict[str, Any]]]:
    """``changes`` with their data edits (``edits.DataEdits``) made on the data as stored, read
    under the rows' locks (in one order: two writers never wait on each other in a cycle)."""
    edited = sorted(resource_id for resource_id, fields in changes if isinstance(fields.get("data"), DataEdits))
    if not edited:
        return changes
    stored = dict(conn.execute(STORED_DATA, {"ids": edited}).all())
    return [(resource_id, fields | {"data": fields["data"].applied(stored.get(resource_id))}
             if isinstance(fields.get("data"), DataEdits) else fields) for resource_id, fields in changes]
