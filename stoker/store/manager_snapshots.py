"""Cloudify's manager snapshots (``cfy snapshots``): the rows of whole-server backups kept in the database, so
every API host sharing it lists, serves and restores the same ones (made, checked and restored by
``stoker/store/backups.py``, which reads every table: this module imports none of it).

A snapshot is made in the request that asks for it and ends ``created`` or ``failed`` (with the error); an
uploaded one is ``uploaded`` once its zip was checked.  Cloudify answers a create or a restore with the
execution of a system workflow that ``cfy`` then reads back: the row keeps those executions' ids
(``by_execution``; the work is done by then).  A restore marks the row it restores from with its engine id
while it runs (``claim``: ``cfy snapshots status``; a second restore meanwhile is refused).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Column, LargeBinary, String, Table, Text, delete, func, insert, select, update
from sqlalchemy.exc import IntegrityError

from stoker.errors import Conflict, NotFound, StokerError
from stoker.store.locks import owner_is_dead
from stoker.store.models import UTCDateTime, metadata, utcnow

#: Cloudify's snapshot states
CREATING, CREATED, FAILED, UPLOADED = "creating", "created", "failed", "uploaded"
STATES = (CREATING, CREATED, FAILED, UPLOADED)


class SnapshotActionError(StokerError):
    """A snapshot that cannot be acted on now, in Cloudify's words and code."""

    code = "snapshot"
    cloudify_code = "snapshot_action_error"


MANAGER_SNAPSHOTS = Table(
    "manager_snapshot", metadata,
    Column("id", String(255), primary_key=True),
    Column("created_at", UTCDateTime, nullable=False, default=utcnow),
    Column("status", String(16), nullable=False),
    Column("error", Text, nullable=False, default=""),
    Column("created_by", String(255), nullable=False),
    #: the backup, a zip (None while being made, or when its making failed)
    Column("archive", LargeBinary),
    #: the ``create_snapshot`` execution that made it (none for an upload)
    Column("execution_id", String(36)),
    #: the last ``restore_snapshot`` execution that restored it, and when
    Column("restore_execution_id", String(36)),
    Column("restored_at", UTCDateTime),
    #: the engine id of the restore running from it now
    Column("restoring", String(255)),
)

#: what a view shows (the archive is served alone)
_SHOWN = [column for column in MANAGER_SNAPSHOTS.columns if column.name != "archive"]


class ManagerSnapshots:
    """The snapshots of one server (``store``: its ``Store``)."""

    def __init__(self, store: Any):
        self.engine = store.engine
        self._writer = store.engine.execution_options(stoker_write=True)

    def list(self) -> list[dict]:
        with self.engine.connect() as conn:
            return [dict(row) for row in conn.execute(select(*_SHOWN).order_by(MANAGER_SNAPSHOTS.c.created_at,
                                                                               MANAGER_SNAPSHOTS.c.id)).mappings()]

    def get(self, snapshot_id: str) -> dict:
        with self.engine.connect() as conn:
            row = conn.execute(select(*_SHOWN).where(MANAGER_SNAPSHOTS.c.id == snapshot_id)).mappings().first()
        if row is None:
            raise NotFound(f"Requested `Snapshot` with ID `{snapshot_id}` was not found")
        return dict(row)

    def archive(self, snapshot_id: str) -> bytes:
        status = self.get(snapshot_id)["status"]
        if status in (FAILED, CREATING):
            raise SnapshotActionError("Failed snapshot cannot be downloaded" if status == FAILED
                              else f"Snapshot `{snapshot_id}` is still being created")
        with self.engine.connect() as conn:
            return conn.execute(select(MANAGER_SNAPSHOTS.c.archive)
                                .where(MANAGER_SNAPSHOTS.c.id == snapshot_id)).scalar()

    def set_status(self, snapshot_id: str, status: str, error: str) -> dict:
        """Cloudify's status update (``PATCH /snapshots/{id}``); a status that serves the archive needs one."""
        self.get(snapshot_id)
        if status in (CREATED, UPLOADED) and not self._archive_size(snapshot_id):
            raise SnapshotActionError(f"Snapshot `{snapshot_id}` has no archive: it cannot be {status}")
        self.set(snapshot_id, status=status, error=error)
        return self.get(snapshot_id)

    def _archive_size(self, snapshot_id: str) -> int:
        with self.engine.connect() as conn:
            return conn.execute(select(func.length(MANAGER_SNAPSHOTS.c.archive))
                                .where(MANAGER_SNAPSHOTS.c.id == snapshot_id)).scalar() or 0

    def delete(self, snapshot_id: str) -> dict:
        row = self.get(snapshot_id)
        if row["restoring"] and not owner_is_dead(row["restoring"]):
            raise SnapshotActionError(f"Cannot delete snapshot `{snapshot_id}` which has an active `restore_snapshot` "
                              "execution")
        with self._writer.begin() as conn:
            conn.execute(delete(MANAGER_SNAPSHOTS).where(MANAGER_SNAPSHOTS.c.id == snapshot_id))
        return row

    def restoring(self) -> bool:
        """Whether a restore runs now (from any row)."""
        with self.engine.connect() as conn:
            owners = conn.execute(select(MANAGER_SNAPSHOTS.c.restoring)
                                  .where(MANAGER_SNAPSHOTS.c.restoring.is_not(None))).scalars().all()
        return any(not owner_is_dead(owner) for owner in owners)

    def by_execution(self, execution_id: str) -> tuple[str, dict] | None:
        """(workflow, row) of the snapshot whose create or restore execution this is."""
        c = MANAGER_SNAPSHOTS.c
        with self.engine.connect() as conn:
            row = conn.execute(select(*_SHOWN).where((c.execution_id == execution_id)
                                                     | (c.restore_execution_id == execution_id))).mappings().first()
        if row is None:
            return None
        return ("create_snapshot" if row["execution_id"] == execution_id else "restore_snapshot"), dict(row)

    def claim(self, snapshot_id: str, owner: str) -> None:
        """Mark the restore running, unless another one does (its owner alive)."""
        c = MANAGER_SNAPSHOTS.c
        with self._writer.begin() as conn:
            if conn.dialect.name == "postgresql":
                conn.execute(select(c.id).with_for_update())  # every row: one claim at a time
            running = conn.execute(select(c.restoring).where(c.restoring.is_not(None))).scalars().all()
            if any(not owner_is_dead(other) for other in running):
                raise Conflict("A snapshot restore is already running on this server")
            conn.execute(update(MANAGER_SNAPSHOTS).where(c.id == snapshot_id).values(restoring=owner))

    def add(self, snapshot_id: str, user: str, status: str, **values: Any) -> None:
        try:
            with self._writer.begin() as conn:
                conn.execute(insert(MANAGER_SNAPSHOTS).values(id=snapshot_id, status=status, error="",
                                                              created_by=user, created_at=utcnow(), **values))
        except IntegrityError:
            raise Conflict(f"<Snapshot id=`{snapshot_id}`> already exists") from None

    def set(self, snapshot_id: str, **values: Any) -> None:
        with self._writer.begin() as conn:
            conn.execute(update(MANAGER_SNAPSHOTS).where(MANAGER_SNAPSHOTS.c.id == snapshot_id).values(**values))
