"""Run stack actions in the background, returning as soon as they have started.

Heat's API answers a create with 201 (an update, delete or action with 202)
while the engine works; the client then polls the stack.  The Engine's
methods run an action to its end, so each runs in a thread of this pool,
and the request waits only until the action is *visible*: the stack row
exists (create) or its state turned ``*_IN_PROGRESS`` (every other action).
Errors raised before that (invalid template, name taken, lock held) are
raised to the request, so they become a 400 or a 409 as in Heat.

"Visible" is seen through a thin proxy of the store handed to the engine
copy that runs the action: no polling, and no confusion between two
requests racing for the same stack name.

Every project has pools of its own, each bounded, whose threads end once
idle: one for its actions, one for its requests' heavy work (parsing and
validating templates, previews).
A project sending many big requests waits behind itself; another project's
requests find their own threads free, and the server's request threads are
never the ones doing the work (``call`` is awaited by ``async`` routes).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from concurrent.futures import Future
from typing import Any, Callable

from stoker.engine.group_commit import LingeringThreads
from stoker.errors import GivenUp
from stoker.store.locks import new_engine_id

LOG = logging.getLogger("stoker.api")

#: how long a request waits for its action to start before answering anyway
START_TIMEOUT = 60.0
#: seconds a project's idle pool thread waits for more work before it ends
POOL_LINGER = 5.0


class Started:
    """Set once the action's effect is visible in the store (or the action ended)."""

    def __init__(self) -> None:
        self.event = threading.Event()
        self.stack_id: str | None = None
        #: the action itself: it ends with ``GivenUp`` when the request gave up on it first
        self.future: Future | None = None
        #: set when the request stopped waiting before the action showed (the engine copy's ``given_up``)
        self.given_up = threading.Event()
        #: held while a create stores its stack, so giving up and showing never cross
        self.lock = threading.Lock()

    def show(self, stack_id: str) -> None:
        if not self.event.is_set():
            self.stack_id = stack_id
            self.event.set()

    def give_up(self) -> None:
        with self.lock:
            if self.stack_id is None:
                self.given_up.set()
        self.event.set()


class _SignallingStore:
    """The engine's store, telling ``started`` when the action shows."""

    def __init__(self, store: Any, started: Started):
        self._store = store
        self._started = started

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def _show(self, stack_id: str) -> None:
        self._started.show(stack_id)

    def create_stack_with_template(self, *args: Any, **kwargs: Any) -> Any:
        with self._started.lock:
            if self._started.given_up.is_set():  # the request answered already: nothing is stored
                raise GivenUp("the request gave up waiting for the create to start")
            record = self._store.create_stack_with_template(*args, **kwargs)
            self._show(record.id)  # the first stack created is the top one; nested ones come later
        return record

    create_stack = create_stack_with_template  # same arguments; the store's own would not signal

    def update_stack(self, stack_id: str, **fields: Any) -> None:
        """A stack's row changes; before the action shows, only while its request still waits (an
        update stores its new definition here: one the request gave up on stops and stores nothing)."""
        with self._started.lock:
            if self._started.stack_id is None and self._started.given_up.is_set():
                raise GivenUp("the request gave up waiting for this action to start")
            self._store.update_stack(stack_id, **fields)
        if fields.get("status") == "IN_PROGRESS":
            self._show(stack_id)

    def write_batch(self, changes: Any, events: Any, stacks: Any = (), *args: Any, **kwargs: Any) -> None:
        """The engine's group commit, which carries stack states too."""
        stacks = list(stacks)
        self._store.write_batch(changes, events, stacks, *args, **kwargs)
        for stack_id, fields in stacks:
            if fields.get("status") == "IN_PROGRESS":
                self._show(stack_id)
                break


class Runner:
    """Bounded pools of threads per project, for one API worker process."""

    def __init__(self, action_threads: int = 4, request_threads: int = 2):
        self.sizes = {"action": action_threads, "request": request_threads}
        self._pools: dict[tuple[str, str], LingeringThreads] = {}
        self._making = threading.Lock()

    def pool(self, project: str, kind: str) -> LingeringThreads:
        """The project's pool of this kind (threads start on demand and end once idle)."""
        key = (project, kind)
        found = self._pools.get(key)
        if found is None:
            with self._making:
                found = self._pools.get(key)
                if found is None:
                    found = self._pools[key] = LingeringThreads(f"stoker-{kind}", self.sizes[kind], POOL_LINGER)
        return found

    async def call(self, project: str, work: Callable[[], Any]) -> Any:
        """``work()`` in the project's request pool, without holding a server thread meanwhile."""
        return await asyncio.wrap_future(self.pool(project, "request").submit(work))

    def start(self, engine: Any, action: Callable[[Any], Any], timeout: float | None = START_TIMEOUT) -> Started:
        """Run ``action(engine_copy)`` in the project's action pool; return once it shows (or raise its error).

        The copy has an engine id of its own, so two actions of this process
        on one stack exclude each other through the stack lock as two
        processes would.  An action that has not shown within ``timeout``
        seconds (None: no limit) is given up: it stops at its next check of
        a template (``Engine.given_up``) and stores nothing.
        """
        started = Started()
        worker = engine.for_project(engine.project_id)
        worker.engine_id = new_engine_id()
        worker.given_up = started.given_up
        _set_store(worker, _SignallingStore(engine.store, started))
        future: Future = self.pool(engine.project_id, "action").submit(action, worker)
        started.future = future
        future.add_done_callback(lambda f: (_log_failure(f), started.event.set()))
        if not started.event.wait(timeout):
            started.give_up()
        if started.stack_id is None and future.done() and not future.cancelled() and future.exception() is not None:
            raise future.exception()  # type: ignore[misc]
        return started

    def resume_abandoned(self, engine: Any, handed_back: bool = True) -> int:
        """Start again, each in its project's pool, the actions whose server is gone: stopped
        (handed back, unless not ``handed_back``) or dead; returns how many were found (with
        several API processes, one of them takes each)."""
        records = engine.store.abandoned_stacks(handed_back)
        for record in records:
            worker = engine.for_project(record.project_id)
            worker.engine_id = new_engine_id()
            future = self.pool(record.project_id, "action").submit(worker.resume_abandoned, record)
            future.add_done_callback(_log_failure)
        return len(records)

    def shutdown(self, cancel_queued: bool = False) -> None:
        """Wait for the actions running (and, unless ``cancel_queued``, those queued) to end."""
        for pool in list(self._pools.values()):
            pool.shutdown(wait=True, cancel_futures=cancel_queued)

    def stop(self, engine: Any) -> None:
        """The server stops: running actions are handed back (``Engine.stopping``) at once,
        queued ones dropped (their requests were not answered yet)."""
        engine.stopping.set()
        self.shutdown(cancel_queued=True)


def _set_store(engine: Any, store: Any) -> None:
    """Give an engine copy another store (``Engine.store`` may be a read-only property)."""
    if isinstance(getattr(type(engine), "store", None), property):
        engine._store = store
    else:
        engine.store = store


def _log_failure(future: Future) -> None:
    exc = None if future.cancelled() else future.exception()
    if exc is not None:
        LOG.info("background action ended with %s: %s", type(exc).__name__, exc)
