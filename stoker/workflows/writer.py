"""Group commit for an execution: node instance changes and events, many per transaction.

An operation that sets a runtime property waits until it is on disk (a
crash then loses nothing a script was told was stored), and so does an
operation's state before it acts; events, logs and later states ride along
with the next batch.  One writer thread (``GroupCommit``), so the event loop
never blocks on the database.

A runtime property goes out as an edit (set this path), applied to the
instance's properties as stored, under the row's lock: operations on other
workers setting other properties of the same instance (relationship
operations of several sources on one target) keep each other's writes.
"""

from __future__ import annotations

from typing import Callable

from stoker.engine.group_commit import GroupCommit

#: changes a stored dict in place (``runtime_properties`` as stored, under the row's lock)
Edit = Callable[[dict], None]
#: ``commit(instance_changes, events, edits)``: ``{instance id: fields}``, event rows and
#: ``{instance id: [(column, Edit)]}``, in one transaction
Commit = Callable[[dict, list, dict], None]


class BatchWriter(GroupCommit):
    def __init__(self, commit: Commit):
        super().__init__("stoker-execution-writer")
        self._write_batch = commit
        self._changes: dict[str, dict] = {}
        self._events: list[dict] = []
        self._edits: dict[str, list[tuple[str, Edit]]] = {}

    def event(self, row: dict) -> None:
        self._events.append(row)
        self._soon()

    def queue(self, instance_id: str, fields: dict, event: dict | None = None) -> None:
        """A change to go out with the next batch (batches commit in order)."""
        self._changes.setdefault(instance_id, {}).update(fields)
        if event is not None:
            self._events.append(event)
        self._soon()

    async def write(self, instance_id: str, fields: dict, event: dict | None = None) -> None:
        """A change, committed when this returns."""
        self.queue(instance_id, fields, event)
        await self._committed()

    async def edit_runtime_properties(self, instance_id: str, edit: Edit) -> None:
        """An edit of the instance's stored runtime properties, committed when this returns."""
        self.edit(instance_id, "runtime_properties", edit)
        await self._committed()

    def edit(self, instance_id: str, column: str, edit: Edit) -> None:
        """An edit of the instance's stored ``column`` (runtime or system properties), to go out with the
        next batch."""
        self._edits.setdefault(instance_id, []).append((column, edit))
        self._soon()

    def _pending(self) -> bool:
        return bool(self._changes or self._events or self._edits)

    def _take(self) -> tuple:
        batch = (self._changes, self._events, self._edits)
        self._changes, self._events, self._edits = {}, [], {}
        return batch

    def _commit(self, batch: tuple) -> None:
        self._write_batch(*batch)
