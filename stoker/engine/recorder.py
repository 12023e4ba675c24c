"""Persist every state change, fast: group commit from one writer thread.

A change is queued; the writer commits everything queued so far in one
transaction, in the order it was queued.  While one commit runs the next
batch fills up, so 10,000 resources changing state at once cost a few dozen
transactions, not 10,000.  Only what must be on disk before the caller goes
on awaits ``write()`` (a resource's start, before it acts outside; a
stack's own state, before it is reported): everything queued earlier goes
out in the same or an earlier transaction, so awaiting one change makes all
earlier ones durable too.  A failed commit that nobody awaited is raised to
the next one who does, so no end is reported over lost changes.  Each
committed batch of events is published to the engine's progress listeners.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from typing import Any

#: seconds a change nobody waits for may wait for company before it is committed
FLUSH_DELAY = 0.05


class Recorder:
    def __init__(self, engine: Any, root_stack_id: str):
        self.engine = engine  # its store is opened on first write
        #: the top stack of the tree whose changes this writer carries
        self.root_stack_id = root_stack_id
        self._resources: dict[int, dict] = {}
        self._stacks: dict[str, dict] = {}
        self._events: list[dict] = []
        self._waiters: list[asyncio.Future] = []
        self._flushing: asyncio.Task | None = None
        self._timer: asyncio.TimerHandle | None = None
        #: a failed commit no waiter heard of yet
        self._failure: BaseException | None = None
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="stoker-writer")

    def queue(self, resource_id: int, fields: dict, event: dict | None = None) -> None:
        """Queue a change without waiting for it (it goes out with the next batch)."""
        self._resources.setdefault(resource_id, {}).update(fields)
        if event is not None:
            self._events.append(event)
        self._soon()

    async def write(self, resource_id: int, fields: dict, event: dict | None = None) -> None:
        """Queue a change and wait until it is committed."""
        self.queue(resource_id, fields, event)
        await self._committed()

    async def write_stack(self, stack_id: str, fields: dict, event: dict) -> None:
        """Queue a stack's own state change (after every change queued before it)."""
        self._stacks.setdefault(stack_id, {}).update(fields)
        self._events.append(event)
        self._kick()
        await self._committed()

    async def _committed(self) -> None:
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        self._kick()
        await waiter
        if self._failure is not None:
            failure, self._failure = self._failure, None
            raise failure

    async def flush(self) -> None:
        """Wait until everything queued so far is committed (not for later writers)."""
        if self._flushing is not None or self._pending() or self._failure:
            await self._committed()

    async def call(self, fn, *args: Any) -> Any:
        """Run a store call on the writer thread, so the event loop keeps working meanwhile."""
        return await asyncio.get_running_loop().run_in_executor(self._thread, fn, *args)

    def close(self) -> None:
        self._thread.shutdown(wait=True)

    def _pending(self) -> bool:
        return bool(self._resources or self._stacks or self._events)

    def _soon(self) -> None:
        """Commit what nobody waits for a moment later, with whatever else comes meanwhile.

        Committing at once would keep the writer thread busy with tiny batches
        while the event loop runs a chain of resources, and the two would take
        the GIL from each other at every step.
        """
        if self._flushing is None and self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(FLUSH_DELAY, self._kick)

    def _kick(self) -> None:
        """Commit now: someone waits."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._flushing is None:
            self._flushing = asyncio.get_running_loop().create_task(self._flush_loop())

    async def _flush_loop(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            while True:
                resources, self._resources = self._resources, {}
                stacks, self._stacks = self._stacks, {}
                events, self._events = self._events, []
                waiters, self._waiters = self._waiters, []
                try:
                    await loop.run_in_executor(self._thread, self._commit, resources, stacks, events)
                except Exception as exc:  # the database failed: every waiter must hear of it
                    heard = False
                    for waiter in waiters:
                        if not waiter.done():
                            waiter.set_exception(exc)
                            heard = True
                    if not heard:
                        self._failure = exc
                else:
                    for waiter in waiters:
                        if not waiter.done():
                            waiter.set_result(None)
                    self.engine.progress.publish(self.root_stack_id, events)
                if not self._waiters:
                    break  # what came meanwhile, nobody waits for: it goes a moment later
        finally:
            self._flushing = None
            if self._pending():
                self._soon()

    def _commit(self, resources: dict[int, dict], stacks: dict[str, dict], events: list[dict]) -> None:
        self.engine.store.write_batch(list(resources.items()), events, list(stacks.items()))


def resource_fields(resource: Any) -> dict:
    """The columns of a resource row that changed: its state always, the JSON ones when dirty."""
    fields = {
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
    if "data" in dirty:
        fields["data"] = dict(resource._data)
    if "rsrc_metadata" in dirty:
        fields["rsrc_metadata"] = resource._metadata if isinstance(resource._metadata, dict) else {}
    return fields
