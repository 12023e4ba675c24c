"""Stack snapshots, as Heat takes them: a SNAPSHOT action over the stack's resources (each
plug-in's ``handle_snapshot`` keeps what it needs in its data), then the stack's exported
data (template, files, environment and parameters, every resource's state and data) kept
under the snapshot, encrypted (it holds hidden parameters and plug-ins' secret data in
clear, as Heat's export gives them).  A restore is an update back to that definition (the stack's action
RESTORE), after which each resource whose plug-in has ``handle_restore(data)`` gets its
snapshot entry back.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from stoker.engine.exported import export
from stoker.errors import Conflict, ValidationFailed
from stoker.secretbox import seal, unseal
from stoker.store.api_tables import iso
from stoker.store.snapshots import SnapshotStore
from stoker.template.environment import Environment
from stoker.template.template import Template


#: the longest snapshot name (its column's width)
NAME_LIMIT = 255
#: how often a caller waiting for the workers reads the state again
WAIT_INTERVAL = 0.2
#: the key of a restore's traversal data naming its snapshot
SNAPSHOT_KEY = "restoring_snapshot"


def view(row: dict) -> dict:
    """A snapshot as Heat's API shows it."""
    return {"id": row["id"], "name": row["name"], "action": row["action"], "status": row["status"],
            "status_reason": row["status_reason"], "data": unseal(row["data"]), "creation_time": iso(row["created_at"])}


class Snapshots:
    """The snapshots of the stacks of one engine's project."""

    def __init__(self, engine: Any):
        self.engine = engine
        self.rows = SnapshotStore(engine.store.engine, engine.project_id)

    def create(self, name_or_id: str, name: str | None = None) -> dict:
        """Take a snapshot, to its end (here, or waiting for the workers): the snapshot stored and the stack's
        action ended (a worker stores the data before it gives the stack back: an update asked at once would
        find the stack still taken)."""
        row = self.start(name_or_id, name)
        self.take(row["stack_id"], row["id"])
        while (taken := self.show(row["stack_id"], row["id"]))["status"] == "IN_PROGRESS" \
                or self.engine.get_record(row["stack_id"]).status == "IN_PROGRESS":
            time.sleep(WAIT_INTERVAL)
        return taken

    def start(self, name_or_id: str, name: str | None = None) -> dict:
        """The snapshot's row, IN_PROGRESS; ``take`` makes it.  A stack in an action is refused."""
        if name is not None and len(name) > NAME_LIMIT:
            raise ValidationFailed.single(("name",), "name-too-long",
                                          f"a snapshot's name holds at most {NAME_LIMIT} characters")
        record = self.engine.get_record(name_or_id)
        if record.status == "IN_PROGRESS":
            raise Conflict(f"Stack {record.name} already has an action ({record.action}) in progress.")
        return self.rows.add(record.id, name)

    def take(self, stack_id: str, snapshot_id: str) -> None:
        """The SNAPSHOT action through the dispatcher: here to its end, its data stored then; with
        workers, started (the worker that ends it stores the data: ``after_traversal``)."""
        engine = self.engine
        try:
            engine.dispatch.simple(engine, engine.get_record(stack_id), "SNAPSHOT")
        except Exception as exc:  # noqa: BLE001 - the snapshot row says why, whatever it was
            self.rows.set(snapshot_id, status="FAILED", status_reason=str(exc))
            raise
        if engine.dispatch.runs_here:
            record = engine.get_record(stack_id)
            _store_taken(engine, record, record.status, record.status_reason)

    def list(self, name_or_id: str) -> list[dict]:
        return [view(row) for row in self.rows.of_stack(self.engine.get_record(name_or_id).id)]

    def show(self, name_or_id: str, snapshot_id: str) -> dict:
        return view(self.rows.get(self.engine.get_record(name_or_id).id, snapshot_id))

    def delete(self, name_or_id: str, snapshot_id: str) -> None:
        row = self.rows.get(self.engine.get_record(name_or_id).id, snapshot_id)
        if row["action"] == "CREATE" and row["status"] == "IN_PROGRESS":
            raise Conflict("Deleting in-progress snapshot is not supported.")
        self.rows.remove(row["id"])

    def forget(self, stack_id: str) -> None:
        """Every snapshot of the stack (it is being deleted)."""
        for row in self.rows.of_stack(stack_id):
            self.rows.remove(row["id"])

    def restorable(self, name_or_id: str, snapshot_id: str) -> dict:
        """The snapshot's row, if it is complete (Heat restores no other)."""
        row = self.rows.get(self.engine.get_record(name_or_id).id, snapshot_id)
        if row["status"] != "COMPLETE":
            raise Conflict("Restoring incomplete snapshot is not supported.")
        return row

    def restore(self, name_or_id: str, snapshot_id: str, wait: bool = True) -> dict:
        """Update the stack back to the snapshot's definition through the dispatcher (the stack's
        action RESTORE): here to its end, or on the workers (``wait``: until they have ended it)."""
        engine = self.engine
        record = engine.get_record(name_or_id)
        data = unseal(self.restorable(record.id, snapshot_id)["data"])
        template = Template(data["template"], data.get("files") or {})
        environment = Environment.from_dict(data.get("environment") or {})
        engine.dispatch.update(engine, record, lambda: engine.prepare_update(
            record, template, environment, {}, disable_rollback=record.disable_rollback),
            not record.disable_rollback, "RESTORE", {SNAPSHOT_KEY: snapshot_id})
        if engine.dispatch.runs_here and (done := engine.get_record(record.id)).action == "RESTORE" \
                and done.status == "COMPLETE":
            _give_back(engine, done, snapshot_id)
        while wait and engine.get_record(record.id).status == "IN_PROGRESS":
            time.sleep(WAIT_INTERVAL)
        return engine.show_stack(record.id)


def after_traversal(engine: Any, record: Any, action: str, given: dict | None, stopping: str | None) -> None:
    """At the end of a SNAPSHOT or RESTORE the workers ran, before the stack shows it ended (on
    the worker that ends it; ``stopping``: why it failed, None when it did not)."""
    if action == "SNAPSHOT":
        _store_taken(engine, record, "FAILED" if stopping else "COMPLETE",
                     stopping or "Stack SNAPSHOT completed successfully")
    elif given and given.get(SNAPSHOT_KEY) and stopping is None:
        _give_back(engine, record, given[SNAPSHOT_KEY])


def _store_taken(engine: Any, record: Any, status: str, reason: str) -> None:
    """The stack's snapshots still IN_PROGRESS get its data and the SNAPSHOT's outcome."""
    rows = SnapshotStore(engine.store.engine, record.project_id)
    taking = [row for row in rows.of_stack(record.id) if row["status"] == "IN_PROGRESS"]
    data = seal(export(engine, record)) if taking else None
    for row in taking:
        rows.set(row["id"], data=data, status=status, status_reason=reason)


def _give_back(engine: Any, record: Any, snapshot_id: str) -> None:
    """After a restore, each resource whose plug-in has ``handle_restore(data)`` gets its
    snapshot entry back."""
    row = SnapshotStore(engine.store.engine, record.project_id).get(record.id, snapshot_id)
    kept = unseal(row["data"]).get("resources") or {}
    stack = engine.runtime(record)

    async def give() -> None:
        for name, resource in stack.resources.items():
            hook = getattr(resource, "handle_restore", None)
            if callable(hook) and kept.get(name):
                hook(kept[name])
                await stack.persist(resource, event=False, durable=True)

    asyncio.run(give())
