"""Group commit for an execution: node instance changes and events, many per transaction.

An operation that sets a state or a runtime property waits until it is on
disk (a crash then loses nothing a script was told was stored); events and
logs ride along with the next batch.  One writer thread, so the event loop
never blocks on the database and 1,000 instances changing state at once cost
a few transactions, not thousands.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from typing import Callable

#: ``commit(instance_changes, events)``: ``{instance id: fields}`` and event rows, in one transaction
Commit = Callable[[dict, list], None]


class BatchWriter:
    def __init__(self, commit: Commit):
        self._commit = commit
        self._changes: dict[str, dict] = {}
        self._events: list[dict] = []
        self._waiters: list[asyncio.Future] = []
        self._task: asyncio.Task | None = None
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="stoker-execution-writer")

    def event(self, row: dict) -> None:
        self._events.append(row)
        self._kick()

    def queue(self, instance_id: str, fields: dict, event: dict | None = None) -> None:
        """A change to go out with the next batch (batches commit in order)."""
        self._changes.setdefault(instance_id, {}).update(fields)
        if event is not None:
            self._events.append(event)
        self._kick()

    async def write(self, instance_id: str, fields: dict, event: dict | None = None) -> None:
        """A change, committed when this returns."""
        self.queue(instance_id, fields, event)
        await self.flush()

    async def flush(self) -> None:
        """Wait until everything queued so far is committed."""
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        self._kick()
        await waiter

    async def call(self, fn, *args):
        """Run a store call on the writer thread, after what is queued."""
        await self.flush()
        return await asyncio.get_running_loop().run_in_executor(self._thread, fn, *args)

    def close(self) -> None:
        self._thread.shutdown(wait=True)

    def _kick(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._loop())

    async def _loop(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            while self._changes or self._events or self._waiters:
                changes, self._changes = self._changes, {}
                events, self._events = self._events, []
                waiters, self._waiters = self._waiters, []
                try:
                    await loop.run_in_executor(self._thread, self._commit, changes, events)
                except Exception as exc:  # the database failed: every waiter hears of it
                    for waiter in waiters:
                        if not waiter.done():
                            waiter.set_exception(exc)
                    continue
                for waiter in waiters:
                    if not waiter.done():
                        waiter.set_result(None)
        finally:
            self._task = None
