"""Group commit for an execution: node instance changes and events, many per transaction.

An operation that sets a runtime property waits until it is on disk (a
crash then loses nothing a script was told was stored), and so does an
operation's state before it acts; events, logs and later states ride along
with the next batch.  One writer thread (``GroupCommit``), so the event loop
never blocks on the database.
"""

from __future__ import annotations

from typing import Callable

from stoker.engine.group_commit import GroupCommit

#: ``commit(instance_changes, events)``: ``{instance id: fields}`` and event rows, in one transaction
Commit = Callable[[dict, list], None]


class BatchWriter(GroupCommit):
    def __init__(self, commit: Commit):
        super().__init__("stoker-execution-writer")
        self._write_batch = commit
        self._changes: dict[str, dict] = {}
        self._events: list[dict] = []

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

    def _pending(self) -> bool:
        return bool(self._changes or self._events)

    def _take(self) -> tuple:
        batch = (self._changes, self._events)
        self._changes, self._events = {}, []
        return batch

    def _commit(self, batch: tuple) -> None:
        self._write_batch(*batch)
