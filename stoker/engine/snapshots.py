"""Stack snapshots, as Heat takes them: a SNAPSHOT action over the stack's resources (each
plug-in's ``handle_snapshot`` keeps what it needs in its data), then the stack's exported
data (template, files, environment and parameters, every resource's state and data) kept
under the snapshot, encrypted (it holds hidden parameters and plug-ins' secret data in
clear, as Heat's export gives them).  A restore is an update back to that definition (the stack's action
RESTORE), after which each resource whose plug-in has ``handle_restore(data)`` gets its
snapshot entry back.
"""

from __future__ import annotations

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
        """Take a snapshot here, to its end."""
        row = self.start(name_or_id, name)
        self.take(row["stack_id"], row["id"])
        return self.show(row["stack_id"], row["id"])

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
        engine = self.engine
        record = engine.get_record(stack_id)
        try:
            with engine.locked(record, "SNAPSHOT"):
                engine.run(engine.run_simple(engine.runtime(record), "SNAPSHOT"))
        except Exception as exc:  # noqa: BLE001 - the snapshot row says why, whatever it was
            self.rows.set(snapshot_id, status="FAILED", status_reason=str(exc))
            raise
        record = engine.get_record(stack_id)
        data = export(engine, record)
        self.rows.set(snapshot_id, data=seal(data), status=record.status, status_reason=record.status_reason)

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

    def restore(self, name_or_id: str, snapshot_id: str) -> dict:
        """Update the stack back to the snapshot's definition, here, to its end."""
        engine = self.engine
        record = engine.get_record(name_or_id)
        data = unseal(self.restorable(record.id, snapshot_id)["data"])
        template = Template(data["template"], data.get("files") or {})
        environment = Environment.from_dict(data.get("environment") or {})
        with engine.locked(record, "RESTORE"):
            stack, old = engine.prepare_update(record, template, environment, {},
                                               disable_rollback=record.disable_rollback)
            engine.run(self._restore(stack, old, data.get("resources") or {}))
        return engine.show_stack(record.id)

    async def _restore(self, stack: Any, old: Any, kept: dict) -> None:
        await self.engine.run_update(stack, old, rollback=not stack.record.disable_rollback, action="RESTORE")
        if self.engine.get_record(stack.id).status != "COMPLETE":
            return
        for name, resource in stack.resources.items():
            hook = getattr(resource, "handle_restore", None)
            if callable(hook) and kept.get(name):
                hook(kept[name])
                await stack.persist(resource, event=False, durable=True)
