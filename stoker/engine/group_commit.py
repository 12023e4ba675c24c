"""Group commit: whatever is queued goes to the database in one transaction, from one writer thread.

A change is queued; the writer thread commits everything queued so far in
one transaction, in the order it was queued.  While one commit runs the next
batch fills up, so thousands of changes at once cost a few dozen
transactions.  Only what must be on disk before the caller goes on is
awaited (``_committed``): everything queued earlier goes out in the same or
an earlier transaction, so awaiting one change makes all earlier ones
durable too.  What nobody waits for goes out a moment later (``_soon``),
with company.  A failed commit that nobody awaited is raised to the next
caller who does, so no end is reported over lost changes.

A small batch (``_small``: a one-resource stack's few changes) is committed
on the event loop's own thread: handing it to the writer thread and back
cost more CPU than the commit (two thread wake-ups and GIL hand-overs per
commit, and a thread started per action), and nothing else waits on that
loop meanwhile; bigger batches go to the writer thread, so the loop goes
on with the next resources while they are written.

Subclasses say what a batch is: ``_pending``, ``_take`` and ``_commit``
(and may act on a committed batch in ``_after_commit``, or call one
``_small``).
"""

from __future__ import annotations

import abc
import asyncio
import queue
import threading
from concurrent.futures import Executor, Future
from typing import Any

#: seconds a change nobody waits for may wait for company before it is committed
FLUSH_DELAY = 0.05
#: seconds an idle writer thread waits for more work before it ends
LINGER = 1.0


class LingeringThreads(Executor):
    """Up to ``size`` threads running what they are given (in order, with one), each ending once
    idle for ``linger`` seconds; the next ``submit`` starts one again.

    Every stack action and execution has a writer, and a server has pools per
    project: threads kept until their owner is closed would outlive the many
    writers nobody closes and the projects that stopped calling, and a
    long-running server would grow by a thread per action or project.
    """

    def __init__(self, name: str, size: int = 1, linger: float = LINGER):
        self._name = name
        self._size = size
        self._linger = linger
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._threads: set[threading.Thread] = set()
        #: threads waiting for work (or about to)
        self._idle = 0
        self._closed = False

    def submit(self, fn, /, *args: Any, **kwargs: Any) -> Future:
        future: Future = Future()
        with self._lock:
            if self._closed:
                raise RuntimeError(f"{self._name} is closed")
            self._queue.put((future, fn, args, kwargs))
            if len(self._threads) < self._size and self._queue.qsize() > self._idle:
                thread = threading.Thread(target=self._work, name=self._name, daemon=True)
                self._threads.add(thread)
                self._idle += 1
                thread.start()
        return future

    def _work(self) -> None:
        while True:
            try:
                item = self._queue.get(timeout=self._linger)
            except queue.Empty:
                with self._lock:  # a submit either came before this (and is seen) or starts a thread
                    if self._queue.empty():
                        self._idle -= 1
                        self._threads.discard(threading.current_thread())
                        return
                continue
            if item is None:  # closed
                self._queue.put(None)  # for the next thread
                return
            with self._lock:
                self._idle -= 1
            future, fn, args, kwargs = item
            if future.set_running_or_notify_cancel():
                try:
                    result = fn(*args, **kwargs)
                except BaseException as exc:
                    future.set_exception(exc)
                else:
                    future.set_result(result)
            with self._lock:
                self._idle += 1

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        with self._lock:
            self._closed = True
            threads = list(self._threads)
            if cancel_futures:
                while not self._queue.empty():
                    item = self._queue.get_nowait()
                    if item is not None:
                        item[0].cancel()
            self._queue.put(None)
        if wait:
            for thread in threads:
                if thread is not threading.current_thread():
                    thread.join()


class GroupCommit(abc.ABC):
    def __init__(self, thread_name: str):
        self._waiters: list[asyncio.Future] = []
        self._task: asyncio.Task | None = None
        self._timer: asyncio.TimerHandle | None = None
        #: a failed commit no waiter heard of yet
        self._failure: BaseException | None = None
        self._thread = LingeringThreads(thread_name)

    @abc.abstractmethod
    def _pending(self) -> bool:
        """Is anything queued?"""

    @abc.abstractmethod
    def _take(self) -> Any:
        """The queued batch, leaving the queue empty."""

    @abc.abstractmethod
    def _commit(self, batch: Any) -> None:
        """Write one batch in one transaction (on the writer thread)."""

    def _after_commit(self, batch: Any) -> None:
        """Called on the event loop once ``batch`` is on disk."""

    def _small(self, batch: Any) -> bool:
        """Is ``batch`` cheaper to commit on the event loop's thread than on the writer thread?"""
        return False

    async def flush(self) -> None:
        """Wait until everything queued so far is committed (not for later writers)."""
        if self._task is not None or self._pending() or self._failure is not None:
            await self._committed()

    async def _committed(self) -> None:
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        self._kick()
        await waiter
        if self._failure is not None:
            failure, self._failure = self._failure, None
            raise failure

    async def call(self, fn, *args: Any, small: bool = False) -> Any:
        """Run a store call on the writer thread, so the event loop keeps working meanwhile
        (``small``: a call cheaper than that hand-over runs here)."""
        if small:
            return fn(*args)
        return await asyncio.get_running_loop().run_in_executor(self._thread, fn, *args)

    def close(self) -> None:
        self._thread.shutdown(wait=True)

    def _soon(self) -> None:
        """Commit what nobody waits for a moment later, with whatever else comes meanwhile.

        Committing at once would keep the writer thread busy with tiny batches
        while the event loop runs a chain of resources, and the two would take
        the GIL from each other at every step.
        """
        if self._task is None and self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(FLUSH_DELAY, self._kick)

    def _kick(self) -> None:
        """Commit now: someone waits."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._loop())

    async def _loop(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            while True:
                batch = self._take()
                waiters, self._waiters = self._waiters, []
                try:
                    if self._small(batch):
                        self._commit(batch)
                    else:
                        await loop.run_in_executor(self._thread, self._commit, batch)
                except Exception as exc:  # the database failed: every waiter must hear of it
                    unheard = True
                    for waiter in waiters:
                        if not waiter.done():
                            waiter.set_exception(exc)
                            unheard = False
                    if unheard:
                        self._failure = exc
                else:
                    for waiter in waiters:
                        if not waiter.done():
                            waiter.set_result(None)
                    self._after_commit(batch)
                if not self._waiters:
                    break  # what came meanwhile, nobody waits for: it goes a moment later
        finally:
            self._task = None
            if self._pending():
                self._soon()
