"""Who holds a stack or a workflow execution: one lease, kept the same way for both.

A lease is the right to run the one action a row allows at a time.  Its
holder (an engine id, ``store.locks``) beats while it works; anyone may ask
it to stop (a cancel request), which it hears with its next beat; a server
that stops hands its work back (the next one resumes it), and work whose
holder is gone is taken over.  Stacks keep their lease in the
``lock_*``/``cancel_*`` columns, executions in ``owner``/``heartbeat_at``/
``cancel_request``: each is a ``LeasedRow``, and ``keep`` is the loop both
run beside their work.
"""

from __future__ import annotations

import asyncio
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Awaitable, Callable, Iterator, Protocol

#: how often running work beats (keeps its lease fresh) and listens for a cancel request
WATCH_INTERVAL = 0.5


@dataclass(frozen=True)
class Cancel:
    """A request to stop, as the holder hears it.  ``graceful``: nothing new starts and what runs
    ends as it would; else what runs stops now.  ``rollback``: the action's undo follows (stacks);
    ``hand_back``: the holder's server is stopping (the work is left for the next one)."""

    graceful: bool
    rollback: bool = False
    hand_back: bool = False


#: what a stopping server tells its running work
HAND_BACK = Cancel(graceful=False, hand_back=True)


class LeasedRow(Protocol):
    """The row a lease lives in (a stack's, an execution's)."""

    def beat(self, owner: str) -> Cancel | None:
        """Show ``owner`` is alive; the cancel request waiting for it, if any."""


async def keep(row: LeasedRow, owner: str, work: asyncio.Future, heard: Callable[[Cancel], Awaitable[bool]],
               stopping: threading.Event | None = None) -> None:
    """While ``work`` runs: beat every ``WATCH_INTERVAL``; a cancel request (or the server's stop:
    ``HAND_BACK``) goes to ``heard``, which says whether ``work`` stops now.  Once stopped, the
    lease goes on beating until the work has wound down (a hand-back leaves at once)."""
    loop = asyncio.get_running_loop()
    cancelled = False
    while not work.done():
        await asyncio.sleep(WATCH_INTERVAL)
        if stopping is not None and stopping.is_set():
            if await heard(HAND_BACK):
                work.cancel()
            return
        request = await loop.run_in_executor(None, row.beat, owner)
        if request is not None and not cancelled and await heard(request):
            work.cancel()
            cancelled = True


async def watched(row: LeasedRow, owner: str, work: Awaitable, heard: Callable[[Cancel], Awaitable[bool]],
                  stopping: threading.Event | None = None) -> Any:
    """``work``'s result, its lease kept meanwhile (``keep``)."""
    working = asyncio.ensure_future(work)
    watcher = asyncio.ensure_future(keep(row, owner, working, heard, stopping))
    try:
        return await working
    finally:
        watcher.cancel()
        await asyncio.gather(watcher, return_exceptions=True)


class StackLease:
    """A stack's lease (its ``lock_*`` and ``cancel_*`` columns), through the store."""

    def __init__(self, store: Any, stack_id: str):
        self.store = store
        self.stack_id = stack_id

    def acquire(self, owner: str, action: str) -> None:
        """Take it for ``action`` (Conflict while a live holder has it)."""
        self.store.acquire_lock(self.stack_id, owner, action)

    def beat(self, owner: str) -> Cancel | None:
        self.store.heartbeat_lock(self.stack_id, owner)
        return self.cancel_request()

    def cancel_request(self) -> Cancel | None:
        """The cancel request waiting for the holder: without rollback, graceful (Heat's
        cancel_without_rollback); with, what runs stops now and the action rolls back."""
        requested, rollback = self.store.cancel_requested(self.stack_id)
        return Cancel(graceful=not rollback, rollback=rollback) if requested else None

    def heard(self) -> None:
        """The cancel request is acted on: a later one is another's."""
        self.store.update_stack(self.stack_id, cancel_requested=False)

    def release(self, owner: str) -> bool:
        return self.store.release_lock(self.stack_id, owner)

    def take_over(self, previous: str, owner: str) -> bool:
        """Take it from a gone ``previous`` holder (or a hand-back); False if another took it first."""
        return self.store.take_over(self.stack_id, previous, owner)

    @contextmanager
    def held(self, owner: str, stopping: threading.Event) -> Iterator[None]:
        """Around work that holds the lease: released at the end, or, when the server stops
        meanwhile (the work cancelled, in progress), handed back for the next server to resume."""
        try:
            yield
        except asyncio.CancelledError:
            if not stopping.is_set():
                raise
            self.store.hand_back_lock(self.stack_id, owner)
        finally:
            self.store.release_lock(self.stack_id, owner)  # not ours any more once handed back

    def held_by_another(self, record: Any, owner: str) -> bool:
        """Is it held (as ``record`` was read) by another holder that is alive (its beat fresh)?"""
        holder, beat = record.lock_owner, record.lock_time
        if holder is None or holder == owner or self.store.owner_gone(holder):
            return False
        return beat is None or (datetime.now(timezone.utc) - beat).total_seconds() < self.store.lock_timeout

    def stop_holder(self, record: Any, owner: str, reread: Callable[[], Any], timeout: float) -> Any:
        """Ask another live holder to stop (a cancel without rollback, asked again until it lets go:
        a second request stops what still runs) and wait for it; the record as it is then, or None
        if it held on for ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while self.held_by_another(record, owner):
            if time.monotonic() >= deadline:
                return None
            self.store.request_cancel(self.stack_id, rollback=False)
            time.sleep(WATCH_INTERVAL / 5)
            record = reread()
        return record


class ExecutionLease:
    """A workflow execution's lease (its ``owner``, ``heartbeat_at`` and ``cancel_request``)."""

    def __init__(self, records: Any, pk: int):
        self.records = records
        self.pk = pk

    def beat(self, owner: str) -> Cancel | None:
        request = self.records.heartbeat(self.pk, owner)
        return None if request is None else Cancel(graceful=request == "graceful")
