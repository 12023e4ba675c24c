"""Persist every state change of a stack, fast: group commit (``GroupCommit``) from one writer thread.

Only what must be on disk before the caller goes on awaits ``write()``: a
resource's start, before it acts outside Stoker (a crash then never hides a
physical resource), and a stack's own state, before it is reported.  Every
other change is queued and rides along with the next batch, so a
1,000-resource chain costs a handful of transactions, not 2,000.  Each
committed batch of events is published to the engine's progress listeners.
"""

from __future__ import annotations

from typing import Any

from stoker.engine.group_commit import GroupCommit
from stoker.store.edits import merge_into

#: rows at most in a batch (or a bulk insert) committed on the event loop's thread (``GroupCommit._small``)
SMALL_BATCH = 8


class Recorder(GroupCommit):
    def __init__(self, engine: Any, root_stack_id: str):
        super().__init__("stoker-writer")
        self.engine = engine  # its store is opened on first write
        #: the top stack of the tree whose changes this writer carries
        self.root_stack_id = root_stack_id
        self._resources: dict[int, dict] = {}
        self._stacks: dict[str, dict] = {}
        self._events: list[dict] = []
        #: (stack id, owner) of the lock the next batch gives up with the stack's end
        self._release: tuple[str, str] | None = None

    def queue(self, resource_id: int, fields: dict, event: dict | None = None) -> None:
        """Queue a change without waiting for it (it goes out with the next batch)."""
        merge_into(self._resources.setdefault(resource_id, {}), fields)
        if event is not None:
            self._events.append(event)
        self._soon()

    async def write(self, resource_id: int, fields: dict, event: dict | None = None) -> None:
        """Queue a change and wait until it is committed."""
        self.queue(resource_id, fields, event)
        await self._committed()

    def queue_stack(self, stack_id: str, fields: dict, event: dict) -> None:
        """Queue a stack's own state change without waiting for it (after every change queued before it)."""
        self._stacks.setdefault(stack_id, {}).update(fields)
        self._events.append(event)
        self._soon()

    async def write_stack(self, stack_id: str, fields: dict, event: dict, release: str | None = None) -> None:
        """Queue a stack's own state change and wait until it is committed; ``release``: the owner
        whose lock on the stack goes in the same transaction (the action's last write)."""
        self.queue_stack(stack_id, fields, event)
        if release is not None:
            self._release = (stack_id, release)
        await self._committed()

    def _pending(self) -> bool:
        return bool(self._resources or self._stacks or self._events)

    def _take(self) -> tuple:
        batch = (self._resources, self._stacks, self._events, self._release)
        self._resources, self._stacks, self._events, self._release = {}, {}, [], None
        return batch

    def _small(self, batch: tuple) -> bool:
        return sum(len(part) for part in batch[:3]) <= SMALL_BATCH

    def _commit(self, batch: tuple) -> None:
        resources, stacks, events, release = batch
        extra = {"release": release} if release is not None else {}
        self.engine.store.write_batch(list(resources.items()), events, list(stacks.items()), **extra)

    def _after_commit(self, batch: tuple) -> None:
        self.engine.progress.publish(self.root_stack_id, batch[2])


def resource_fields(resource: Any) -> dict:
    """The columns of a resource row that changed: its state always, the JSON ones when dirty."""
    fields = {
        "type": resource.type(),  # an update may rename it (another alias of the same implementation)
        "action": resource.action,
        "status": resource.status,
        "status_reason": resource.status_reason,
        "physical_resource_id": None if resource.resource_id is None else str(resource.resource_id),
        "replaces": resource.replaces,
        "replaced_by": resource.replaced_by,
    }
    dirty, resource.dirty = resource.dirty, set()
    if "properties_data" in dirty:
        fields["properties_data"] = resource.properties_data or {}
    if "data" in dirty:  # its keys changed, not the whole map (``stoker.store.edits``)
        fields["data"] = resource.data_edits()
    if "rsrc_metadata" in dirty:
        fields["rsrc_metadata"] = resource._metadata if isinstance(resource._metadata, dict) else {}
    return fields
