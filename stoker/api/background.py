"""Run stack actions in the background, returning as soon as they have started.

Heat's API answers a create with 201 (an update, delete or action with 202)
while the engine works; the client then polls the stack.  The Engine's
methods run an action to its end, so each runs in a thread of this pool,
and the request waits only until the action is *visible*: the stack row
exists (create) or its state turned ``*_IN_PROGRESS`` (every other action).
Errors raised before that (invalid template, name taken, lock held) are
raised to the request, so they become a 400 or a 409 as in Heat.

How an action shows, and the handle the request holds, are
``engine/starting.py``'s and ``stoker/started.py``'s (the CLI's too).

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

from stoker.engine import starting
from stoker.engine.group_commit import LingeringThreads
from stoker.started import Started
from stoker.store.locks import new_engine_id

LOG = logging.getLogger("stoker.api")

#: how long a request waits for its action to start before answering anyway
START_TIMEOUT = 60.0
#: seconds a project's idle pool thread waits for more work before it ends
POOL_LINGER = 5.0


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
        """Run ``action(engine copy)`` in the project's action pool; the handle once the action shows
        (``engine/starting.py``), or its error.  An action that has not shown within ``timeout``
        seconds (None: no limit) is given up: it stops at its next check of a template
        (``Engine.given_up``) and stores nothing."""
        started = starting.begin(engine, action, self.submitter(engine.project_id), timeout, summary=False)
        started.future.add_done_callback(_log_failure)  # type: ignore[union-attr]
        return started

    def submitter(self, project: str) -> Callable[[Callable[[], Any]], Future]:
        """How work goes into the project's action pool (``Started.run``'s ``submit``)."""
        return self.pool(project, "action").submit

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


def _log_failure(future: Future) -> None:
    exc = None if future.cancelled() else future.exception()
    if exc is not None:
        LOG.info("background action ended with %s: %s", type(exc).__name__, exc)
