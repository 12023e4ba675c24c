"""Group commit: whatever is queued goes to the database in one transaction, from one writer thread.

A writer that must know its change is on disk awaits it; the writer thread
commits everything queued so far in one transaction, then wakes all the
writers whose changes it carried.  While one commit runs the next batch
fills up, so thousands of changes at once cost a few dozen transactions.
Subclasses say what a batch is: ``_pending``, ``_take`` and ``_commit``.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from typing import Any


class GroupCommit:
    def __init__(self, thread_name: str):
        self._waiters: list[asyncio.Future] = []
        self._task: asyncio.Task | None = None
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix=thread_name)

    def _pending(self) -> bool:
        """Is anything queued?"""
        raise NotImplementedError

    def _take(self) -> Any:
        """The queued batch, leaving the queue empty."""
        raise NotImplementedError

    def _commit(self, batch: Any) -> None:
        """Write one batch in one transaction (on the writer thread)."""
        raise NotImplementedError

    async def flush(self) -> None:
        """Wait until everything queued so far is committed (not for later writers)."""
        if self._task is not None or self._pending():
            await self._committed()

    async def _committed(self) -> None:
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        self._kick()
        await waiter

    async def call(self, fn, *args: Any) -> Any:
        """Run a store call on the writer thread, so the event loop keeps working meanwhile."""
        return await asyncio.get_running_loop().run_in_executor(self._thread, fn, *args)

    def close(self) -> None:
        self._thread.shutdown(wait=True)

    def _kick(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._loop())

    async def _loop(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            while self._pending() or self._waiters:
                batch = self._take()
                waiters, self._waiters = self._waiters, []
                try:
                    await loop.run_in_executor(self._thread, self._commit, batch)
                except Exception as exc:  # the database failed: every waiter must hear of it
                    for waiter in waiters:
                        if not waiter.done():
                            waiter.set_exception(exc)
                    continue
                for waiter in waiters:
                    if not waiter.done():
                        waiter.set_result(None)
        finally:
            self._task = None
